"""CRAG-MM single-turn and multi-turn (KDD Cup 2025) from the user's local copy of the hub datasets.

crag_mm_single  crag-mm-2025/crag-mm-single-turn-public (v0.1.2), one question per image
crag_mm_multi   crag-mm-2025/crag-mm-multi-turn-public (v0.1.2), conversations about one image; each turn is an
                example whose `turns` hold the earlier questions and their gold answers (`history=gold`), or
                the system's own earlier answers (`history=own`, upstream's: the run answers a conversation's
                turns in order, `Sequenced`)

Options (--task-arg): split=validation|public_test (default validation, the only split v0.1.2 publishes),
tokenizer=DIR (the Llama-3.2 tokenizer.json for the 75-token cut; else $CRAG_MM_LLAMA32_TOKENIZER or
DATA_DIR/llama32_tokenizer), evaluation=upstream|corrected (the metric: crag_mm or crag_mm_corrected),
image_cache=DIR (upstream's image download cache, for rows with only an image_url), agent=open|closed|pixtral|qwen|
internvl (the example agent whose messages the prompting sends: VlmAgent, the API agents', or the Pixtral, Qwen,
InternVL agents' own forms, agent_formats.py), history=gold|own (the earlier turns' answers a multi-turn example
shows: gold, the dataset's, the default; own, the system's, cut to 75 tokens as upstream's generation keeps them; no
effect on crag_mm_single).
`ragbench score --data FILE --predictions FILE` scores upstream's file of turns (the response.jsonl generate mode
writes, evaluate mode's input) as `local_evaluation.py --mode evaluate` does (turn_file.py); over a hub copy,
`--predictions DIR|FILE` reads that file's answers for the copy's turns (the copy's gold, SESSIONS_TO_SKIP left out,
answers cut: the variant of the release before).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, cast

from ragbench.api import ConfigError, Example, RecordError, Task, TaskScoring
from ragbench.api.data import (
    JsonObject,
    data_dir,
    is_saved_dataset,
    iter_jsonl,
    load_split,
    named_data,
    stat_fingerprint,
)

from ..shared.task_options import check_choices, given_options
from .agent_formats import AGENTS
from .cut import TOKENIZER, truncate_response
from .prompting import CragMMPrompting
from .records import (
    SESSIONS_TO_SKIP,
    ImageReader,
    image_cache_dir,
    label_names,
    refuse_missing,
    row_count,
    row_examples,
)
from .turn_file import is_turn_file, turn_examples, turn_predictions

REVISION = "v0.1.2"
SPLITS = ("validation", "public_test")
EVALUATIONS = {"upstream": ("crag_mm",), "corrected": ("crag_mm_corrected",)}
HISTORIES = ("gold", "own")
SLICES = ("image_source", "domain", "query_category", "image_quality", "dynamism")
CHOICES: dict[str, Collection[str]] = {
    "split": SPLITS,
    "evaluation": EVALUATIONS,
    "agent": AGENTS,
    "history": HISTORIES,
}


class CragMMTask(Task):
    scoring = TaskScoring(metrics=("crag_mm",), slice_fields=SLICES, gold_fields=("answers",))
    prompting = CragMMPrompting()
    own_documents = False  # questions about an image; retrieval, if any, is the system's
    holds_images = True  # the prompting sends each example's image: a model that takes none is refused before the run
    question_images = True  # each question's picture (a system may search by it)
    kind: ClassVar[str] = "single"
    repo: ClassVar[str] = ""

    def __init__(
        self,
        data_path: str | Path | None = None,
        split: str = "validation",
        tokenizer: str | None = None,
        evaluation: str = "upstream",
        image_cache: str | None = None,
        agent: str = "open",
        history: str = "gold",
    ) -> None:
        options = given_options(locals())
        check_choices(self.name, CHOICES, **options)
        super().__init__(data_path, **options)
        self.agent = agent
        self.prompting = CragMMPrompting(agent)
        self.split = split
        self.history = history
        self.scoring = replace(self.scoring, metrics=EVALUATIONS[evaluation])
        self.tokenizer_path = tokenizer
        self.image_cache = image_cache_dir(image_cache)
        self.path: Path | None = None
        self._loaded: tuple[Path, Any] | None = None  # the split `load` read, and from where

    def prepare(self) -> None:
        self.path = self.resolve_data()
        if not is_turn_file(self.path):
            self.tokenizer_path = self.resolve_tokenizer()
            self.prompting = CragMMPrompting(self.agent, self.tokenizer_path)

    def preflight(self, check: Any) -> None:
        """The data copy, and the Llama-3.2 tokenizer (by its vocabulary), each on its own; a file of turns (evaluate
        mode's input, whose answers are judged as they are) needs none."""
        from .preflight import check_llama32_tokenizer

        with check.step(f"task {self.name}: local copy of {self.repo}"):
            self.path = self.resolve_data()
        if self.path is not None and is_turn_file(self.path):
            return
        with check.step(f"task {self.name}: Llama-3.2 tokenizer"):
            self.tokenizer_path = self.resolve_tokenizer()
            check_llama32_tokenizer(self.name, self.tokenizer_path)
            self.prompting = CragMMPrompting(self.agent, self.tokenizer_path)

    def system_defaults(self) -> dict[str, object]:
        """The API agents (`agent=closed`) send no token limit (GPTAgent, GeminiAgent; ClaudeAgent's 2,048 is
        `CragMMPrompting.answer_sampling`'s), where VlmAgent's 1,000 is the task's declared default."""
        return {"max_tokens": None} if self.agent == "closed" else {}

    def resolve_data(self) -> Path:
        local = data_dir() / self.repo.rsplit("/", 1)[1]
        found = named_data(self.name, self.data_path) or (local if local.exists() else None)
        if found is not None:
            return found
        raise refuse_missing(self.name, self.repo, REVISION, data_dir())

    def data_fingerprint(self) -> JsonObject | None:
        """The data copy's, and the image cache's (the sizes and times of its files): a web picture changed there
        changes the examples that show it, so that the --resume of a finished run reads the data again and runs
        those examples again."""
        return {**(super().data_fingerprint() or {}), "image_cache": stat_fingerprint(self.image_cache)}

    def resolve_tokenizer(self) -> str:
        return TOKENIZER.find(self.name, self.tokenizer_path)

    def load(self) -> Any:
        """The split as a `datasets.Dataset`, images left undecoded (bytes): from one Parquet file (the split
        itself), a `save_to_disk` folder, or the hub repository's files (data/<split>-*.parquet). Read once a task
        (a run counts its items, `size_hint`, then reads them: `datasets` took a third of a small run's CPU each)."""
        assert self.path is not None
        if self._loaded is None or self._loaded[0] != self.path:
            self._loaded = (self.path, self._read_split(self.path))
        return self._loaded[1]

    def _read_split(self, path: Path) -> Any:
        import datasets

        if path.is_file():
            split = load_split(self.name, parquet=path)
        elif is_saved_dataset(path):
            split = load_split(self.name, folder=path, split=self.split)
        else:  # the files named one by one: `datasets` caches a folder's data by the folder's name alone
            split = load_split(self.name, parquet=self.split_files(path))
        return split.cast_column("image", datasets.Image(decode=False)) if "image" in split.features else split

    def split_files(self, folder: Path) -> list[Path]:
        files = sorted(folder.glob(f"**/{self.split}-*.parquet"))
        if not files:
            found = sorted({f.name.split("-")[0] for f in folder.glob("**/*.parquet")})
            raise ConfigError(
                f"task {self.name}: {folder} has no {self.split}-*.parquet (the hub repository's data/ files; splits "
                f"found: {', '.join(found) or 'none'}); pass the downloaded folder or another --task-arg split="
            )
        return files

    def examples(self) -> Iterator[Example | RecordError]:
        if self.path is None:
            self.prepare()
        assert self.path is not None
        if is_turn_file(self.path):
            yield from turn_examples(self.path)
            return
        rows = self.load()
        names = label_names(rows.features)
        where = str(self.path)
        read_image = ImageReader(self.image_cache)
        positions = itertools.count()
        for number, row in enumerate(rows):
            try:
                yield from row_examples(
                    row, number, where, self.kind, names, read_image, positions, self.history == "gold"
                )
            except RecordError as exc:
                yield exc

    def size_hint(self) -> int | None:
        """The items `examples` yields (the progress bar's total and ETA), counted from the rows' `session_id` and
        `turns` alone: no image is read. None before the data is found (the pre-flight says why), and for a file of
        turns (its lines are read as they are scored)."""
        if self.path is None or is_turn_file(self.path):
            return None
        rows = self.load().select_columns(["session_id", "turns"])
        return sum(row_count(session, turns) for session, turns in zip(rows["session_id"], rows["turns"]))

    def sequence(self, example: Example) -> str | None:
        """With `history=own`, a conversation's turns are answered in order (`Sequenced`): its session. A file of
        turns' (no history: scored as it is) stand alone."""
        own = self.kind == "multi" and self.history == "own" and example.turns is not None
        return str(example.meta["session_id"]) if own else None

    def continued(self, example: Example, answers: Sequence[str]) -> Example:
        """The turn with each earlier question followed by the system's own answer cut to 75 Llama-3.2 tokens: the
        history upstream's `generate_agent_responses` builds from the cut responses it keeps. An answer the task's
        post-processing cut already comes out the same (but where its cut split a character: docs)."""
        questions = list(example.turns or [])
        if len(answers) != len(questions):
            raise ValueError(f"turn {example.meta['turn']} follows {len(questions)} questions, given {len(answers)}")
        assert self.tokenizer_path is not None  # resolved as the examples are read
        cut = [{"role": "assistant", "content": truncate_response(answer, self.tokenizer_path)} for answer in answers]
        return replace(example, turns=[turn for pair in zip(questions, cut) for turn in pair])

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, Any]]:
        """`ragbench score --predictions DIR` over local_evaluation.py's output folder: its one response.jsonl
        (the turns generate mode wrote, in a timestamped folder), read as `prediction_file_records` reads it."""
        files = sorted(folder.glob("**/response.jsonl"))
        if len(files) != 1:
            found = f"{len(files)}: {', '.join(str(f) for f in files[:3])}" if files else "none"
            raise ConfigError(
                f"--predictions {folder}: task {self.name} reads the one response.jsonl local_evaluation.py writes "
                f"there (found {found}); pass the folder that holds the run's"
            )
        yield from self.upstream_predictions(files[0])

    def prediction_file_records(self, path: Path) -> Iterator[tuple[int, Any]] | None:
        """`ragbench score --predictions FILE`: upstream's file of turns (its first line has an `agent_response`),
        as `upstream_predictions` reads it; None for a ragbench predictions file."""
        first = next(iter_jsonl(path), None)
        if first is None or not isinstance(first[1], dict) or "agent_response" not in first[1]:
            return None
        return self.upstream_predictions(path)

    def upstream_predictions(self, path: Path) -> Iterator[tuple[int, Any]]:
        """Upstream's file of turns as `ragbench score` records. With that file as the task's data (`--data`), each
        line's answer judged as it is (`--mode evaluate`'s). Over a hub copy, each `interaction_id` with its
        `agent_response` as output (post-processed, so cut, as a run's answers), and a note for each session of
        `SESSIONS_TO_SKIP` the file holds, which the copy's turns leave out."""
        if self.path is None:
            self.path = self.resolve_data()
        if is_turn_file(self.path):
            yield from turn_predictions(path)
            return
        skipped: set[str] = set()
        for index, record in iter_jsonl(path):
            if isinstance(record, RecordError):
                yield index, record
                continue
            session = record.get("session_id")
            if session in SESSIONS_TO_SKIP:
                if session not in skipped:
                    skipped.add(str(session))
                    yield index, skipped_note(path, str(session))
                continue
            line: JsonObject = {"id": record.get("interaction_id"), "output": record.get("agent_response")}
            yield index, line

    def gold_references(self, gold: Mapping[str, object]) -> list[str]:
        return [str(answer) for answer in cast("Iterable[object]", gold["answers"])]


def skipped_note(path: Path, session: str) -> str:
    return (
        f"{path}: the turns of session {session} are not scored: it is one of upstream's SESSIONS_TO_SKIP, which a run "
        "over a hub copy leaves out as upstream's generation does; to score every line of the file as "
        "local_evaluation.py --mode evaluate does, pass the file itself as --data"
    )


class CragMMSingle(CragMMTask):
    name = "crag_mm_single"
    kind = "single"
    repo = "crag-mm-2025/crag-mm-single-turn-public"


class CragMMMulti(CragMMTask):
    name = "crag_mm_multi"
    kind = "multi"
    repo = "crag-mm-2025/crag-mm-multi-turn-public"
