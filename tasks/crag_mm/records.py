"""CRAG-MM's hub rows (v0.1.2) as examples: one per turn, as upstream's `CRAGTurnBatchIterator` yields them.

A row: `session_id`, `image` (egocentric photos; None where only `image_url` is given), `image_url`, `turns`
(columns interaction_id, domain, query_category, dynamism, query, image_quality; the labels are class indices) and
`answers` (columns interaction_id, ans_full). Upstream's rules kept here: the sessions `SESSIONS_TO_SKIP` names are
left out and `SESSIONS_TO_UPDATE`'s image URL replaces the row's; an egocentric image (no `image_url`) is resized to
960 x 1280 before a model sees it; a web image is read from upstream's download cache (md5 of the URL + its
extension), which ragbench never fills (no network at run time).

A row's picture is decoded as upstream's `load_dataset` decodes it: by the `datasets` Image feature (its
`decode_example`, `Image.as_dataset_decodes`), which turns a picture as its EXIF Orientation tag says (datasets 2.19 and
later; CRAG-MM's requirements.txt leaves datasets unpinned, so a 2025 install has it), in any mode Pillow reads (a
CMYK JPEG too). A cached web picture is opened as upstream's `Image.open(path)` opens it (no turn). A picture that
cannot be read (damaged, a decompression bomb, a FIFO or folder where a file should be) is a bad record of its row,
naming it, the damage and the fix; the other rows are read on.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Conversation, Example, RecordError
from ragbench.api.data import JsonObject

# evaluation/config.py (facebookresearch/CRAG-MM 36b6b4b): sessions left out, and an image URL replaced
SESSIONS_TO_SKIP = frozenset({"04d98259-27af-41b1-a7be-5798fd1b8e95", "695b4b5c-7c65-4f7b-8968-50fe10482a16"})
SESSIONS_TO_UPDATE = {
    "single": {
        "0df99a9a-6a5d-4ff4-b8e4-e3ee90209dfe": "https://web.archive.org/web/20250521025904/https://upload.wikimedia.org/"
        "wikipedia/commons/1/13/BMW_5_SERIES_LWB_SEDAN_(G30)_China_(82).jpg"
    },
    "multi": {},
}
EGO_SIZE = (960, 1280)  # width, height (crag_batch_iterator.py)
LABELS = ("domain", "query_category", "dynamism", "image_quality")


def image_cache_dir(option: str | None) -> Path:
    """Upstream's image download cache: $CRAG_CACHE_DIR, else $XDG_CACHE_HOME or ~/.cache, /cragmm_images_cache."""
    if option:
        return Path(option).expanduser()
    if os.environ.get("CRAG_CACHE_DIR"):
        return Path(os.environ["CRAG_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cragmm_images_cache"


def cached_image_path(url: str, cache: Path) -> Path:
    """utils.download_image_url's file name for `url`."""
    extension = os.path.splitext(url.split("?")[0])[1] or ".jpg"
    return cache / f"{hashlib.md5(url.encode()).hexdigest()}{extension}"


def label_names(features: Any) -> dict[str, list[str]]:
    """The class names of the turns' labels (datasets' ClassLabel inside the `turns` sequence); none where the
    copy stores plain numbers or strings."""
    turns = features.get("turns") if hasattr(features, "get") else None
    inner = getattr(turns, "feature", turns)
    out: dict[str, list[str]] = {}
    for field in LABELS:
        feature = inner.get(field) if isinstance(inner, Mapping) else None
        feature = getattr(feature, "feature", feature)  # a Sequence(ClassLabel) of a list-of-dicts layout
        names = getattr(feature, "names", None)
        if names:
            out[field] = list(names)
    return out


def _columns(value: Any, where: str, number: int, field: str) -> list[dict[str, Any]]:
    """`turns` / `answers` as a list of dicts: v0.1.2's dict of columns, or the list of dicts of v0.1.1."""
    if isinstance(value, Mapping):
        keys = list(value)
        lengths = {len(value[k]) for k in keys}
        if len(lengths) > 1:
            raise RecordError(where, number + 1, "its columns have different lengths", field)
        return [{k: value[k][i] for k in keys} for i in range(lengths.pop() if lengths else 0)]
    if isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(v, Mapping) for v in value):
        return [dict(v) for v in value]
    raise RecordError(where, number + 1, f"expected columns or a list of objects, got {type(value).__name__}", field)


def _label(value: Any, names: Sequence[str] | None) -> str:
    if isinstance(value, int) and names is not None:
        return names[value] if 0 <= value < len(names) else "other"
    return "none" if value is None else str(value)


class ImageReader:
    """A row's image as the model sees it: the egocentric photo turned and resized, the row's web picture turned,
    or the web image from the cache as it is."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache

    def __call__(self, row: Mapping[str, Any], url: str | None, where: str, number: int) -> Any:
        from ragbench.api import Image

        image = row.get("image")
        source = f"{where} row {number + 1}"
        if image is not None:
            try:  # as upstream's agent gets it (the module's docstring), resized as crag_batch_iterator resizes it
                return Image.of(image, source=source).as_dataset_decodes(None if url else EGO_SIZE)
            except ConfigError as exc:
                reason = str(exc).removeprefix(f"{source}: ")  # the row is named once
                raise RecordError(where, number + 1, f"its image cannot be read: {reason}", "image") from None
        if not url:
            raise RecordError(where, number + 1, "neither an image nor an image_url", "image")
        path = cached_image_path(url, self.cache)
        if not path.exists():
            raise RecordError(
                where,
                number + 1,
                f"its image {url} is not in the image cache ({path} missing); download the images once with "
                "upstream's utils.download_image_url (CRAG_CACHE_DIR) and pass --task-arg image_cache=DIR",
                "image_url",
            )
        try:
            cached = Image.of(path)
            cached.picture()  # upstream's Image.open of the file: one it cannot decode fails this row only
        except ConfigError as exc:  # a damaged download, a FIFO or a folder there
            reason = str(exc).removeprefix(f"{path}: ").removeprefix(f"image {path}: ")  # the file is named once
            raise RecordError(
                where, number + 1, f"its cached image {path} cannot be read: {reason}", "image_url"
            ) from None
        return cached


def row_examples(
    row: Mapping[str, Any],
    number: int,
    where: str,
    kind: str,
    names: Mapping[str, Sequence[str]],
    read_image: ImageReader,
    positions: Iterator[int],
    gold_history: bool = True,
) -> Iterator[Example]:
    """The turns of one conversation, in order, each at the next of `positions` in the task's data; on the
    multi-turn task each carries the earlier turns (`turns`: the user's questions and the gold answers; without
    `gold_history`, the questions alone, which the run continues with the system's own answers), a `History` of
    the row's one `Conversation`, never a copy."""
    session = row.get("session_id")
    if not isinstance(session, str) or not session:
        raise RecordError(where, number + 1, "missing or not a string", "session_id")
    if session in SESSIONS_TO_SKIP:
        return
    url = SESSIONS_TO_UPDATE[kind].get(session, row.get("image_url") or None)
    turns = _columns(row.get("turns"), where, number, "turns")
    answers = {
        a.get("interaction_id"): a.get("ans_full") for a in _columns(row.get("answers"), where, number, "answers")
    }
    if not turns:
        raise RecordError(where, number + 1, "a conversation without turns", "turns")
    image = read_image(row, url, where, number)
    history = Conversation()  # held once: each turn views the turns before it (memory linear in the turns)
    for index, turn in enumerate(turns):
        interaction, query = turn.get("interaction_id"), turn.get("query")
        answer = answers.get(interaction)
        if not isinstance(query, str) or not isinstance(answer, str):
            raise RecordError(where, number + 1, f"turn {index} has no query or no answer (ans_full)", "turns")
        meta: JsonObject = {
            "image_source": "normal" if url else "ego",
            **{field: _label(turn.get(field), names.get(field)) for field in LABELS},
            "session_id": session,
            "turn": index,
        }
        yield Example(
            id=str(interaction),
            question=query,
            gold={"answers": [answer]},
            meta=meta,
            extras={"image_url": url or "", "total_turns": len(turns)},
            turns=history.history() if kind == "multi" else None,
            images=(image,),
            index=next(positions),
        )
        history.add("user", query)
        if gold_history:
            history.add("assistant", answer)


def row_count(session: Any, turns: Any) -> int:
    """How many items `row_examples` makes of a row of this `session_id` and `turns`, read without its image: a
    turn each, none for a session it skips, one (its bad record) for turns it cannot read."""
    if isinstance(session, str) and session in SESSIONS_TO_SKIP:
        return 0
    try:
        return max(1, len(_columns(turns, "", 0, "turns")))
    except RecordError:
        return 1


def refuse_missing(task: str, repo: str, revision: str, data_dir: Path) -> ConfigError:
    name = repo.rsplit("/", 1)[1]
    return ConfigError(
        f"task {task} reads a local copy of the hub dataset {repo} (revision {revision}), not found; on a machine "
        f"with network run `huggingface-cli download --repo-type dataset {repo} --revision {revision} --local-dir "
        f"FOLDER`, then pass --data {task}=FOLDER or put it at {data_dir / name}"
    )
