"""The pictures of a ViDoRe dataset's pages read safely and as upstream decodes them: `ragbench index build` over a
page that is a real FIFO (a row's `{"bytes": null, "path": FIFO}`), a real decompression bomb or a PNG cut short ends
in one line naming the row, the page, the damage and the fix (never a hang, never a traceback, never "a file ragbench
was writing"); a page turned by its EXIF Orientation tag is encoded as vidore-benchmark's `datasets` loading decodes
it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import TEST_DATA, needs
from support.damaged_pictures import bomb_png, jpeg, truncated_png
from support.helpers import cli_here
from support.special_files import fifo_writer  # noqa: F401  (a fixture)

pytestmark = [needs("torch", "safetensors", "datasets", "transformers"), pytest.mark.timeout(300)]

VIDORE = TEST_DATA / "vidore"
CORPUS = "corpus/test-00000-of-00001.parquet"


def with_page(folder: Path, row: int, value: dict) -> Path:
    """The v2 test dataset copied to `folder`, row `row` of its corpus holding the image value `value`."""
    import pyarrow.parquet as pq

    shutil.copytree(VIDORE / "v2", folder)
    table = pq.read_table(folder / CORPUS)
    images = table.column("image").to_pylist()
    images[row] = value
    column = table.schema.get_field_index("image")
    import pyarrow as pa

    table = table.set_column(column, table.schema.field(column), pa.array(images, type=table.schema.field(column).type))
    pq.write_table(table, folder / CORPUS)
    return folder


def build(pages: Path, out: Path):
    return cli_here("index", "build", "--retriever", "siglip", "--corpus", str(pages), "--out", str(out),
                    "--model", str(VIDORE / "tiny-siglip"), "--build-arg", "batch_size=2", "--no-progress")  # fmt: skip


@pytest.mark.parametrize("kind", ["fifo", "bomb", "cut"])
def test_a_page_that_cannot_be_read_ends_the_build_in_one_line_naming_it(tmp_path, kind, fifo_writer):
    if kind == "fifo":
        fifo = tmp_path / "page.png"
        os.mkfifo(fifo)
        fifo_writer.append(fifo)
        value = {"bytes": None, "path": str(fifo)}
    else:
        value = {"bytes": bomb_png() if kind == "bomb" else truncated_png(), "path": "page_3.png"}
    pages = with_page(tmp_path / "pages", 3, value)
    done = build(pages, tmp_path / "index")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]  # after what transformers says of the model as it loads it
    says = {
        "fifo": f"{pages / 'corpus'} row 3 (page '3'): image {tmp_path / 'page.png'}: a FIFO (named pipe) is there, "
        "not a file; ragbench reads only a regular file there: give the path of an image file",
        "bomb": f"{pages / 'corpus'} row 3 (page '3'): a picture of more than 178,956,970 pixels, which Pillow refuses "
        "to decode (a decompression bomb's size); give a smaller picture",
        "cut": f"{pages / 'corpus'} row 3 (page '3'): the picture cannot be decoded (OSError: image file is "
        "truncated); replace it with an undamaged copy",
    }[kind]
    assert line == f"ragbench: error: {says}", line
    assert not (tmp_path / "index").exists() or not any((tmp_path / "index").iterdir())


class Kept:
    """A page encoder that keeps each picture it is given, every page one made-up vector."""

    def __init__(self) -> None:
        self.pictures: list = []

    def identity(self) -> dict:
        return {"path": "kept"}

    def encode_pages(self, images: list) -> list:
        import torch

        self.pictures += images
        return [torch.ones(1, 3) for _ in images]

    def encode_queries(self, texts: list[str]) -> list:
        import torch

        return [torch.ones(1, 3) for _ in texts]


def test_a_page_turned_by_its_exif_orientation_is_encoded_as_datasets_decodes_it(tmp_path):
    import datasets

    from ragbench.api.retrieval import open_pages
    from ragbench.testing import load_retriever

    pages = with_page(tmp_path / "pages", 2, {"bytes": jpeg((40, 24), orientation=6), "path": "page_2.jpg"})
    upstream = datasets.load_dataset("parquet", data_files=str(pages / CORPUS), split="train")[2]["image"]
    encoder = Kept()
    load_retriever("colpali", {"pages": str(pages), "index": str(tmp_path / "index"), "encoder": encoder})
    ours = encoder.pictures[list(open_pages(str(pages), "test", "--corpus").row_ids).index("2")]
    assert upstream.size == (24, 40)  # turned: the tag says 90 degrees
    assert (ours.size, ours.mode, ours.tobytes()) == (upstream.size, upstream.mode, upstream.tobytes())
