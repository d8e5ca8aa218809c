"""CRAG-MM's pictures read as upstream reads them, and safely: an EXIF-turned or CMYK JPEG is the picture upstream's
CRAGTurnBatchIterator hands its agent (tests/data/parity/crag_mm_pictures.json, its "how"); a real FIFO, a link to
one, a folder, a real decompression bomb or a PNG cut short is one bad record of its row, naming it, the damage and
the fix, every other conversation kept (for any damage to the bytes, a property); and a picture changed in the image
cache is a change of the task's data, which the --resume of a finished run reads."""

from __future__ import annotations

import base64
import io
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import RecordError
from ragbench.tasks.crag_mm.records import EGO_SIZE, cached_image_path
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.tasks.crag_mm.task import CragMMSingle
from support.crag_mm_helpers import answer_by_picture, tokenizer_dir
from support.damaged_pictures import bomb_png, jpeg, noisy_png, png, truncated_png
from support.special_files import fifo_writer, memory_bounded  # noqa: F401  (a fixture)

pytestmark = pytest.mark.timeout(300)

UPSTREAM = json.loads((TEST_DATA / "parity" / "crag_mm_pictures.json").read_text(encoding="utf-8"))


def conversation(session: str, image=None, url: str | None = None, answer: str = "A mango.") -> dict:
    """A single-turn row of the hub's layout; `image` bytes, or a datasets value as it is."""
    iid = f"{session}-t"
    labels = {"domain": 0, "query_category": 0, "dynamism": 0, "image_quality": 5}
    return {
        "session_id": session,
        "image": {"bytes": image, "path": None} if isinstance(image, bytes) else image,
        "image_url": url,
        "turns": [{"interaction_id": iid, "query": f"what is {session}?", **labels}],
        "answers": [{"interaction_id": iid, "ans_full": answer}],
    }


def read(folder, rows, cache=None) -> list:
    """The task's examples (a bad record as its RecordError) over `rows` written in the hub's layout, read with this
    process's memory bounded (a regression reading /dev/zero fails, never fills the machine)."""
    path = write_dataset(folder, rows, layout="parquet")
    task = CragMMSingle(data_path=path, tokenizer=tokenizer_dir(), image_cache=str(cache or folder / "no-cache"))
    with memory_bounded():
        return list(task.examples())


def rgb_sha256(image) -> str:
    import hashlib

    return hashlib.sha256(image.picture().convert("RGB").tobytes()).hexdigest()


def test_each_picture_equals_what_upstreams_iterator_hands_the_agent(tmp_path):
    """EXIF-turned egocentric JPEGs are turned (by datasets' decoding) before the 960 x 1280 resize, CMYK ones read
    and resized in CMYK, a row's own web picture turned, a cached web picture not (upstream opens it with Pillow)."""
    rows = [
        {**row, "image": None if row["image"] is None else base64.b64decode(row["image"])} for row in UPSTREAM["rows"]
    ]
    rows = [conversation(r["session_id"], r["image"], r["image_url"]) | {"turns": r["turns"], "answers": r["answers"]}
            for r in rows]  # fmt: skip
    cache = tmp_path / "cache"
    cache.mkdir()
    for url, data in UPSTREAM["cached"].items():
        cached_image_path(url, cache).write_bytes(base64.b64decode(data))
    found = read(tmp_path / "data", rows, cache)
    assert [type(item).__name__ for item in found] == ["Example"] * len(UPSTREAM["upstream"]), found
    for example in found:
        upstream = UPSTREAM["upstream"][example.id]
        picture = example.images[0].picture()
        assert list(picture.size) == upstream["size"], example.id
        assert rgb_sha256(example.images[0]) == upstream["rgb_sha256"], example.id


@pytest.mark.parametrize("kind", ["fifo", "link to a fifo", "folder", "link to /dev/zero"])
def test_a_row_whose_picture_path_is_no_file_is_one_bad_record_never_waited_on(tmp_path, kind, fifo_writer):
    path = tmp_path / "picture.jpg"
    if kind in ("fifo", "link to a fifo"):
        target = path if kind == "fifo" else tmp_path / "fifo"
        os.mkfifo(target)
        fifo_writer.append(target)
        if kind == "link to a fifo":
            path.symlink_to(target)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    rows = [conversation("before", png((200, 0, 0))), conversation("ego", {"bytes": None, "path": str(path)}),
            conversation("after", png((0, 0, 200)))]  # fmt: skip
    found = read(tmp_path / "data", rows)
    assert [e.id for e in found if not isinstance(e, RecordError)] == ["before-t", "after-t"]
    (bad,) = [e for e in found if isinstance(e, RecordError)]
    what = {"folder": "a folder", "link to /dev/zero": "a character device"}.get(kind, "a FIFO (named pipe)")
    assert str(bad).endswith(
        f":2 field 'image': its image cannot be read: image {path}: {what} is there, not a file; ragbench reads "
        "only a regular file there: give the path of an image file"
    ), str(bad)


def test_a_cmyk_bomb_or_cut_picture_loses_no_other_conversation(tmp_path):
    """A valid CMYK JPEG is read (upstream reads it); a decompression bomb and a PNG cut short are one bad record
    each, naming the row, the damage and the fix; the conversations after them are all read."""
    rows = [
        conversation("cmyk", jpeg((40, 30), "CMYK")),
        conversation("bomb", bomb_png()),
        conversation("cut", truncated_png()),
        conversation("after", png((0, 0, 200))),
    ]
    found = read(tmp_path / "data", rows)
    assert [e.id for e in found if not isinstance(e, RecordError)] == ["cmyk-t", "after-t"]
    cmyk = found[0].images[0]
    assert cmyk.media_type == "image/png" and cmyk.picture().size == EGO_SIZE and cmyk.picture().mode == "RGB"
    bomb, cut = (str(e) for e in found if isinstance(e, RecordError))
    assert bomb.endswith(
        ":2 field 'image': its image cannot be read: a picture of more than 178,956,970 pixels, which Pillow refuses "
        "to decode (a decompression bomb's size); give a smaller picture"
    ), bomb
    assert cut.endswith(
        ":3 field 'image': its image cannot be read: the picture cannot be decoded (OSError: image file is "
        "truncated); replace it with an undamaged copy"
    ), cut


@pytest.mark.parametrize("kind", ["fifo", "bomb", "cut"])
def test_a_cached_web_picture_that_cannot_be_read_is_one_bad_record(tmp_path, kind, fifo_writer):
    cache = tmp_path / "cache"
    cache.mkdir()
    path = cached_image_path("https://x.org/a.jpg", cache)
    if kind == "fifo":
        os.mkfifo(path)
        fifo_writer.append(path)
    else:
        path.write_bytes(bomb_png() if kind == "bomb" else truncated_png())
    rows = [conversation("web", url="https://x.org/a.jpg"), conversation("after", png((0, 0, 200)))]
    found = read(tmp_path / "data", rows, cache)
    assert isinstance(found[0], RecordError) and found[1].id == "after-t"
    says = {
        "fifo": "a FIFO (named pipe) is there, not a file",
        "bomb": "a picture of more than 178,956,970 pixels",
        "cut": "the picture cannot be decoded (OSError: image file is truncated)",
    }[kind]
    assert f"field 'image_url': its cached image {path} cannot be read: {says}" in str(found[0]), str(found[0])


VALID = (noisy_png((10, 120, 230), (24, 18)), jpeg((24, 18), orientation=6), jpeg((24, 18), "CMYK"))


@settings(max_examples=25)
@given(
    which=st.integers(0, len(VALID) - 1),
    cut=st.integers(min_value=0, max_value=1500),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)), max_size=3),
)
def test_damaged_picture_bytes_are_a_picture_or_one_bad_record_and_the_other_rows_stay(tmp_path_factory, which, cut,
                                                                                        flips):  # fmt: skip
    data = bytearray(VALID[which][:cut] if cut else VALID[which])
    for position, bit in flips:
        if data:
            data[position % len(data)] ^= 1 << bit
    rows = [conversation("before", png((200, 0, 0))), conversation("damaged", bytes(data)),
            conversation("after", png((0, 0, 200)))]  # fmt: skip
    found = read(tmp_path_factory.mktemp("data"), rows)
    assert [getattr(e, "id", None) for e in found[::2]] == ["before-t", "after-t"] and len(found) == 3
    if isinstance(found[1], RecordError):
        assert ":2 field 'image': its image cannot be read: " in str(found[1]) and "\n" not in str(found[1])
    else:
        assert found[1].images[0].picture().size == EGO_SIZE


def test_a_picture_changed_in_the_image_cache_runs_its_examples_again_on_resume(tmp_path):
    """The model answers by the colour of the picture it is sent: green is Paris. The cached picture then turns
    blue (a Toyota): --resume of the finished run reads the data again and gives what a fresh run gives."""
    from ragbench.testing import ScriptedLLM, run_eval

    cache = tmp_path / "cache"
    cache.mkdir()
    cached = cached_image_path("https://x.org/paris.jpg", cache)
    cached.write_bytes(png((0, 200, 0)))
    rows = [
        conversation("ego", png((200, 0, 0)), answer="A mango."),
        conversation("web", url="https://x.org/paris.jpg", answer="It is Paris, France."),
    ]
    path = write_dataset(tmp_path / "data", rows, layout="parquet")

    def run(out, resume=False):
        return run_eval(
            "crag_mm_single",
            "closed_book",
            ScriptedLLM(answer_by_picture),
            data=path,
            judges=[ScriptedLLM("Result: WRONG")],
            task_args={"tokenizer": tokenizer_dir(), "image_cache": str(cache)},
            output=out,
            resume=resume,
        )

    assert run(tmp_path / "run").scores["crag_mm_single"]["accuracy"] == 1.0
    cached.write_bytes(png((0, 0, 200), (41, 30)))
    fresh = run(tmp_path / "fresh").scores["crag_mm_single"]["accuracy"]
    resumed = run(tmp_path / "run", resume=True)
    assert fresh == 0.5 and not resumed.already_finished
    assert resumed.scores["crag_mm_single"]["accuracy"] == fresh


def test_an_unchanged_cache_leaves_a_finished_run_finished(tmp_path):
    from ragbench.testing import ScriptedLLM, run_eval

    path = write_dataset(tmp_path / "data", [conversation("ego", png((200, 0, 0)))], layout="parquet")
    options = {"data": path, "judges": [ScriptedLLM("Result: WRONG")], "output": tmp_path / "run"}
    args = {"tokenizer": tokenizer_dir(), "image_cache": str(tmp_path / "cache")}
    run_eval("crag_mm_single", "closed_book", ScriptedLLM(answer_by_picture), task_args=args, **options)
    again = run_eval("crag_mm_single", "closed_book", ScriptedLLM(answer_by_picture), task_args=args, resume=True,
                     **options)  # fmt: skip
    assert again.already_finished


def test_a_cmyk_picture_is_sent_and_kept_as_a_thumbnail(tmp_path):
    from PIL import Image as PILImage

    from ragbench.testing import ScriptedLLM, run_eval

    path = write_dataset(tmp_path / "data", [conversation("cmyk", jpeg((40, 30), "CMYK"))], layout="parquet")
    model = ScriptedLLM("A mango.")
    run = run_eval("crag_mm_single", "closed_book", model, data=path, judges=[ScriptedLLM("Result: WRONG")],
                   task_args={"tokenizer": tokenizer_dir(), "agent": "closed"}, output=tmp_path / "run")  # fmt: skip
    assert run.complete
    (sent,) = model.requests[0].sent_images
    # upstream's API agents: the CMYK picture resized, then vLLM's encode_image_base64 (RGB, JPEG)
    upstream = io.BytesIO()
    PILImage.open(io.BytesIO(jpeg((40, 30), "CMYK"))).resize(EGO_SIZE).convert("RGB").save(upstream, format="JPEG")
    assert sent.media_type == "image/jpeg" and sent.data == upstream.getvalue()
    (thumbnail,) = (tmp_path / "run" / "images").iterdir()
    with PILImage.open(thumbnail) as kept:
        assert kept.size == (192, 256) and kept.mode == "RGB"
