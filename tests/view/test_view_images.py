"""A sample's images, from a run to the viewer: the record holds each by digest (never its bytes), the run folder
keeps a thumbnail ragbench made of it (`images/<sha256>.png`), and the example's page shows that thumbnail; the
task's image files are not read by the viewer."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image as PILImage

from ragbench.api import Example, Image, Prediction, System, Task, TaskScoring, user_turn
from ragbench.testing import ScriptedLLM, run_eval
from support.viewer_pages import export_view, exported_page, run_ids


def png(size: tuple[int, int], color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


BIG, SMALL = png((600, 300), (200, 30, 30)), png((10, 10), (0, 90, 200))


class Pictures(Task):
    name = "pictures"
    scoring = TaskScoring(metrics=("match",))
    holds_images = True

    def __init__(self, data_path=None, **args) -> None:
        super().__init__(data_path, **args)
        self.folder = args.get("folder")

    def examples(self):
        yield Example(
            id="p1", question="what colour?", gold={"answers": ["red"]}, images=(Image.of(self.folder / "big.png"),)
        )
        yield Example(id="p2", question="what colour?", gold={"answers": ["blue"]}, images=(Image.of(SMALL),))
        yield Example(id="p3", question="no picture", gold={"answers": ["x"]})


class Looks(System):
    name = "looks"

    async def run(self, example: Example, ctx) -> Prediction:
        response = await ctx.llm.chat([user_turn(example.question, example.images)], step="look")
        return Prediction(example_id=example.id, answer=response.text)


@pytest.fixture(scope="module")
def pictures_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pictures")
    (folder / "big.png").write_bytes(BIG)
    out = folder / "run"
    run_eval(Pictures, Looks, ScriptedLLM("red"), task_args={"folder": folder}, output=out)
    return folder, out


def test_the_record_holds_the_images_by_digest_and_the_run_keeps_thumbnails(pictures_run):
    folder, out = pictures_run
    lines = [json.loads(line) for line in (out / "samples" / "pictures.jsonl").read_text().splitlines()]
    big = Image.of(BIG)
    assert lines[0]["images"] == [
        {"sha256": big.digest, "media_type": "image/png", "bytes": len(BIG), "source": str(folder / "big.png")}
    ]
    assert "images" not in lines[2]  # an example without images writes the line it wrote before
    sent = lines[0]["trace"][0]["request"]["messages"][0]["content"]
    assert sent[0] == {"type": "image", "image": {"sha256": big.digest, "media_type": "image/png", "bytes": len(BIG)}}
    assert base64.b64encode(BIG).decode()[:40] not in (out / "samples" / "pictures.jsonl").read_text()
    kept = sorted(p.name for p in (out / "images").iterdir())
    assert kept == sorted(f"{Image.of(data).digest}.png" for data in (BIG, SMALL))
    with PILImage.open(out / "images" / f"{big.digest}.png") as thumb:
        assert thumb.size == (256, 128)  # at most 256 a side, the aspect kept


def test_the_example_page_shows_each_images_thumbnail(pictures_run, tmp_path):
    folder, out = pictures_run
    (folder / "big.png").unlink()  # the viewer reads the run's thumbnails, never the task's files
    site = export_view([out], tmp_path / "site")
    rid = run_ids(site)[0]
    shown = exported_page(site, f"example/{rid}/pictures/0")["images"]
    assert len(shown) == 1 and shown[0]["sha256"] == Image.of(BIG).digest
    assert shown[0]["source"] == str(folder / "big.png")
    data = base64.b64decode(shown[0]["thumbnail"].removeprefix("data:image/png;base64,"))
    assert data == (out / "images" / f"{Image.of(BIG).digest}.png").read_bytes()
    assert exported_page(site, f"example/{rid}/pictures/2")["images"] == []
    prompt = exported_page(site, f"example/{rid}/pictures/0")["steps"][0]["prompt"]
    assert prompt == f"[user]\n[image sha256:{Image.of(BIG).digest}]\nwhat colour?"
    (out / "images" / f"{Image.of(SMALL).digest}.png").unlink()
    site = export_view([out], tmp_path / "again")
    assert exported_page(site, f"example/{rid}/pictures/1")["images"][0]["thumbnail"] is None


@pytest.mark.filterwarnings("ignore")
def test_a_vidore_examples_page_shows_its_retrieved_pages_and_its_gold_page_as_thumbnails(tmp_path):
    """ViDoRe's pages are the documents: the run keeps thumbnails of the first ten pages shown and of the gold's
    among them, and the example's page shows each beside its document and the gold as its page (id, grade, rank)."""
    pytest.importorskip("transformers")
    pytest.importorskip("safetensors")
    from conftest import TEST_DATA

    pages = TEST_DATA / "vidore" / "v2"
    args = {"pages": str(pages), "index": str(tmp_path / "index"), "model": str(pages.parent / "tiny-siglip")}
    out = tmp_path / "run"
    run_eval("vidore", "vanilla", ScriptedLLM("-"), data=str(pages), retriever="siglip", retriever_args=args,
             task_args={"images": 0}, output=out)  # fmt: skip
    site = export_view([out], tmp_path / "site")
    rid = run_ids(site)[0]
    page = exported_page(site, f"example/{rid}/vidore/0")
    assert page["gold_text"] == "qrels: 0=2, 3=1"  # the page before its grade (was "qrels: 2, 1")
    docs = {doc["id"]: doc for doc in page["docs"]}
    assert len(docs) == 6 and all(
        doc["image"]["thumbnail"].startswith("data:image/png;base64,") for doc in docs.values()
    )
    assert page["gold_pages"] == [
        {"id": "0", "grade": 2, "rank": docs["0"]["number"], "image": docs["0"]["image"]},
        {"id": "3", "grade": 1, "rank": docs["3"]["number"], "image": docs["3"]["image"]},
    ]
    kept = {path.name.removesuffix(".png") for path in (out / "images").iterdir()}
    assert {doc["image"]["sha256"] for doc in docs.values()} == kept
