"""A plain folder of page images is a page corpus as a ViDoRe dataset is: `ragbench index build --retriever siglip
--corpus FOLDER` indexes its PNGs (the tiny random-weight SigLIP), a run's retriever reads that index and searches it,
each page's id its path in the folder; the same pictures give the same vectors and scores as from a ViDoRe dataset;
a `PageCorpus` of one's own is searched as those are. What is not a page (hidden files, a README) is left out, and
a folder that cannot be read (no pictures, a FIFO, a page cut short, a split asked of it) is one line."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError, Image
from ragbench.api.retrieval import PageCorpus, open_pages
from ragbench.testing import load_retriever
from support.damaged_pictures import png, truncated_png
from support.helpers import cli_here
from support.special_files import fifo_writer  # noqa: F401  (a fixture)

pytestmark = needs("torch", "safetensors", "datasets")

VIDORE = TEST_DATA / "vidore"
MODEL = str(VIDORE / "tiny-siglip")


def v2_pictures() -> list[bytes]:
    """The pictures of the ViDoRe test dataset v2's six pages, in corpus order."""
    import pyarrow.parquet as pq

    table = pq.read_table(next((VIDORE / "v2" / "corpus").glob("*.parquet")))
    return [row["bytes"] for row in table.column("image").to_pylist()]


def page_folder(folder: Path) -> Path:
    """v2's pages as PNG files (page-0.png ... page-5.png), with what is no page beside them."""
    folder.mkdir()
    for number, picture in enumerate(v2_pictures()):
        (folder / f"page-{number}.png").write_bytes(picture)
    (folder / "README.txt").write_text("scanned 2026", encoding="utf-8")
    (folder / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    (folder / "._page-0.png").write_bytes(b"\0\5\26\7 AppleDouble")
    return folder


def siglip(pages: Path, index: Path, **options: object):
    return load_retriever("siglip", {"pages": str(pages), "index": str(index), "model": MODEL, **options})


@needs("transformers")
def test_a_folder_of_pngs_is_indexed_by_the_command_and_searched_by_a_run(tmp_path):
    pages, index = page_folder(tmp_path / "pages"), tmp_path / "index"
    built = cli_here("index", "build", "--retriever", "siglip", "--corpus", str(pages), "--model", MODEL,
                     "--out", str(index), "--build-arg", "batch_size=2", "--no-progress")  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith(f"siglip index of 6 pages in {index} (")
    vectors = (index / "vectors.safetensors").read_bytes()
    retriever = siglip(pages, index, batch_size=2)  # the index the command built, read (not built again)
    assert (index / "vectors.safetensors").read_bytes() == vectors
    ids = [f"page-{number}.png" for number in range(6)]
    assert retriever.contents()["pages"]["count"] == 6
    hits = retriever.search(["the harbour's tolls", "tide at Olm"], 6)
    for row in hits:
        assert not isinstance(row, Exception)
        assert sorted(doc.id for doc in row) == ids
        for doc in row:  # each hit shows its page: the file's bytes
            assert (
                doc.image is not None and doc.image.digest == hashlib.sha256((pages / doc.id).read_bytes()).hexdigest()
            )
    by_picture = retriever.search_images([Image.of(pages / "page-4.png")], 1)[0]
    assert not isinstance(by_picture, Exception) and by_picture[0].id == "page-4.png"


@needs("transformers")
def test_the_same_pictures_in_a_folder_give_a_vidore_datasets_vectors_and_scores(tmp_path):
    import torch

    folder = siglip(page_folder(tmp_path / "pages"), tmp_path / "folder_index", page_scores="raw")
    dataset = siglip(VIDORE / "v2", tmp_path / "dataset_index", page_scores="raw")
    assert all(torch.equal(ours, theirs) for ours, theirs in zip(folder.pages, dataset.pages, strict=True))
    queries = ["the harbour's tolls", "tide at Olm", "census"]
    for ours, theirs in zip(folder.search(queries, 6), dataset.search(queries, 6), strict=True):
        assert [(doc.id, doc.score) for doc in ours] == [(f"page-{doc.id}.png", doc.score) for doc in theirs]


@needs("transformers")
def test_a_page_changed_in_the_folder_is_other_pages_for_the_index(tmp_path):
    pages, index = page_folder(tmp_path / "pages"), tmp_path / "index"
    siglip(pages, index)
    (pages / "page-2.png").write_bytes(png((200, 10, 10)))
    with pytest.raises(ConfigError, match=r"^index .* was built for other pages; name another index folder"):
        siglip(pages, index)


class ListedPages:
    """A page corpus of one's own: pictures held in memory, two rows of one page ("cover")."""

    def __init__(self, pictures: list[tuple[str, bytes]]) -> None:
        self.pictures = pictures

    @property
    def row_ids(self) -> list[str]:
        return [name for name, _ in self.pictures]

    def __len__(self) -> int:
        return len(self.pictures)

    def image(self, row: int) -> Image:
        return Image.of(self.pictures[row][1])

    def identity(self) -> dict[str, object]:
        return {"path": "in memory", "sha256": hashlib.sha256(b"".join(data for _, data in self.pictures)).hexdigest()}


@needs("transformers")
def test_a_page_corpus_of_ones_own_is_searched_as_a_folders_is(tmp_path):
    pictures = v2_pictures()
    own: PageCorpus = ListedPages(
        [("cover", pictures[0]), ("cover", pictures[1]), *((f"p{n}", pictures[n]) for n in range(2, 6))]
    )
    retriever = load_retriever("siglip", {"corpus": own, "index": str(tmp_path / "index"), "model": MODEL,
                                          "page_scores": "raw"})  # fmt: skip
    folder = siglip(page_folder(tmp_path / "pages"), tmp_path / "folder_index", page_scores="raw")
    ours, theirs = retriever.search(["tide at Olm"], 6)[0], folder.search(["tide at Olm"], 6)[0]
    assert not isinstance(ours, Exception) and not isinstance(theirs, Exception)
    scores = {doc.id: doc.score for doc in theirs}
    assert {doc.id: doc.score for doc in ours} == {
        "cover": max(scores["page-0.png"], scores["page-1.png"]),  # a page of two rows scores its best row
        **{f"p{n}": scores[f"page-{n}.png"] for n in range(2, 6)},
    }
    with pytest.raises(ConfigError, match=r"^retriever siglip: pages=.* and a corpus given: give the one or the other"):
        load_retriever(
            "siglip", {"corpus": own, "pages": str(VIDORE / "v2"), "index": str(tmp_path / "i"), "model": MODEL}
        )


class Pixels:
    """A stand-in for colpali's model: a page's vectors are its 2x2 pixels, a query's one made-up vector."""

    def identity(self) -> dict:
        return {"path": "pixels"}

    def encode_pages(self, images: list) -> list:
        import numpy as np
        import torch

        return [
            torch.from_numpy(np.asarray(image.convert("RGB").resize((2, 2)), dtype=np.float32).reshape(4, 3)) / 255
            for image in images
        ]

    def encode_queries(self, texts: list[str]) -> list:
        import torch

        return [torch.tensor([[1.0, -1.0, 0.5]]) for _ in texts]


def test_colpali_indexes_a_folder_of_pages_in_subfolders_by_their_paths(tmp_path):
    pages = tmp_path / "pages"
    (pages / "report" / "2024").mkdir(parents=True)
    (pages / ".git").mkdir()
    (pages / ".git" / "cover.png").write_bytes(png((1, 2, 3)))  # hidden: no page
    (pages / "report" / "2024" / "p-2.PNG").write_bytes(png((250, 10, 10)))
    (pages / "report" / "p-1.jpg").write_bytes(picture_bytes((10, 250, 10), "JPEG"))
    (pages / "cover.webp").write_bytes(picture_bytes((10, 10, 250), "WEBP"))
    retriever = load_retriever("colpali", {"pages": str(pages), "index": str(tmp_path / "index"), "encoder": Pixels()})
    hits = retriever.search(["red first"], 3)[0]
    assert not isinstance(hits, Exception)
    assert [doc.id for doc in hits] == [
        "report/2024/p-2.PNG",
        "cover.webp",
        "report/p-1.jpg",
    ]  # by their colour's score


def picture_bytes(color: tuple[int, int, int], kind: str) -> bytes:
    """An 8x8 picture of one colour, saved as Pillow saves `kind` (JPEG at its best quality, WebP lossless)."""
    import io

    from PIL import Image as PILImage

    buffer = io.BytesIO()
    PILImage.new("RGB", (8, 8), color).save(buffer, format=kind, quality=100, lossless=True)
    return buffer.getvalue()


NAMES = st.text(alphabet="ab.-_", min_size=1, max_size=4).filter(lambda name: name not in (".", ".."))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tree=st.lists(
        st.tuples(st.lists(NAMES, max_size=2), NAMES, st.sampled_from([".png", ".JPG", ".tiff", ".txt", ".pdf", ""])),
        min_size=1,
        max_size=8,
    )
)
def test_a_folders_pages_are_its_visible_picture_files_by_path(tmp_path_factory, tree):
    folder = tmp_path_factory.mktemp("pages")
    for parts, stem, extension in tree:
        path = folder.joinpath(*parts, stem + extension)
        if any(parent.is_file() for parent in path.parents) or path.is_dir():
            continue  # a name that is a file already cannot be a folder too (and the other way round)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    expected = sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file()
        and path.suffix.lower() in (".png", ".jpg", ".tiff")
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )
    if not expected:
        with pytest.raises(ConfigError, match=r"holds no page images \(PNG, JPEG, GIF, WebP, BMP or TIFF files"):
            open_pages(folder, "test", "--corpus")
    else:
        assert list(open_pages(folder, "test", "--corpus").row_ids) == expected


def test_a_folder_that_is_no_pages_is_one_line(tmp_path, fifo_writer):
    empty = tmp_path / "notes"
    empty.mkdir()
    (empty / "README.md").write_text("no pages", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        open_pages(empty, "test", "retriever siglip: pages=")
    assert str(refused.value) == (
        f"retriever siglip: pages=: {empty} is no ViDoRe dataset (expected corpus/, queries/ and qrels/ (V2, V3), or "
        "data/test-*.parquet or a save_to_disk folder (V1)) and holds no page images (PNG, JPEG, GIF, WebP, BMP or "
        "TIFF files, hidden ones left out)"
    )
    pages = page_folder(tmp_path / "pages")
    with pytest.raises(ConfigError, match=r"is a folder of page images, which has no splits: drop split=dev$"):
        open_pages(pages, "dev", "--corpus")
    os.mkfifo(pages / "page-9.png")
    fifo_writer.append(pages / "page-9.png")
    with pytest.raises(ConfigError) as fifo:
        open_pages(pages, "test", "--corpus")
    assert str(fifo.value) == (
        f"{pages / 'page-9.png'}: a FIFO (named pipe) is there, not a file; ragbench reads only a regular file there: "
        "give a page image file"
    )


@needs("transformers")
def test_a_page_cut_short_ends_the_build_in_one_line_naming_its_file(tmp_path):
    pages = page_folder(tmp_path / "pages")
    (pages / "page-3.png").write_bytes(truncated_png())
    done = cli_here("index", "build", "--retriever", "siglip", "--corpus", str(pages), "--model", MODEL,
                    "--out", str(tmp_path / "index"), "--no-progress")  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"ragbench: error: {pages / 'page-3.png'}: the picture cannot be decoded (OSError: image file is truncated); "
        "replace it with an undamaged copy"
    )
    assert not (tmp_path / "index").exists() or not any((tmp_path / "index").iterdir())


def test_siglip_is_a_page_retriever_not_a_late_interaction_one():
    from ragbench.api.retrieval import ImageDenseRetriever, LateInteractionRetriever, PageRetriever

    assert issubclass(ImageDenseRetriever, PageRetriever) and issubclass(LateInteractionRetriever, PageRetriever)
    assert not issubclass(ImageDenseRetriever, LateInteractionRetriever)


def test_a_corpus_given_as_text_is_one_line_naming_pages(tmp_path):
    with pytest.raises(ConfigError) as refused:
        load_retriever("colpali", {"corpus": "scans", "index": str(tmp_path / "index"), "model": "m"})
    assert str(refused.value) == (
        "retriever colpali: corpus='scans' is no page corpus (an object of Python's: "
        "ragbench.api.retrieval.PageCorpus); name a folder of pages with pages=FOLDER"
    )
    done = cli_here("index", "build", "--retriever", "siglip", "--corpus", str(VIDORE / "v2"), "--model", MODEL,
                    "--out", str(tmp_path / "index"), "--build-arg", "corpus=scans")  # fmt: skip
    assert done.returncode != 0 and done.stderr.strip().splitlines()[-1] == (
        "ragbench: error: index build --retriever siglip: --build-arg corpus= is given by --corpus; drop it"
    )
    assert not (tmp_path / "index").exists()
