"""`cragmm_search` against cragmm-search-pipeline 0.5.1's UnifiedSearchPipeline, run unchanged over the same tiny
chromadb indexes and random-weight CLIP / BGE-shaped models (tests/data/parity/record_cragmm_search.py wrote
tests/data/crag_mm_search and tests/data/parity/cragmm_search.json): the same hits in the same order, the same
fields, scores within 1e-6; get_rag_context's search results over its hits; the index folders read, never written;
damaged and wrong folders refused in one line."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError, Example, Image
from ragbench.api.retrieval import RetrievalError
from ragbench.testing import load_retriever

pytestmark = needs("torch", "transformers", "safetensors")

DATA = TEST_DATA / "crag_mm_search"
RECORD = json.loads((TEST_DATA / "parity" / "cragmm_search.json").read_text(encoding="utf-8"))["layouts"]
# mixed: HNSW files (the image index: its graph searched) and later queued writes (the web index: a delete, an
# upsert; searched exhaustively); buffered: the queue only; graph: a sparse graph whose search is approximate
LAYOUTS = sorted(RECORD)
TOLERANCE = 1e-6  # chromadb's float32 distance (SIMD sums) against numpy's float32 product: a few ulps


def searcher(layout: str, **options: object):
    return load_retriever(
        "cragmm_search",
        {
            "image_index": str(DATA / "indexes" / layout / "image"),
            "image_model": str(DATA / "models" / "clip"),
            "web_index": str(DATA / "indexes" / layout / "web"),
            "text_model": str(DATA / "models" / "bge"),
            **options,
        },
    )


def example(picture: str, question: str = "what is this") -> Example:
    return Example(id=picture, question=question, images=[Image.of((DATA / "images" / picture).read_bytes())])


def bound(retriever, picture: str, question: str = "what is this"):
    scope = retriever.for_example(example(picture, question))
    assert scope is not None
    return scope


@pytest.fixture(scope="module", params=LAYOUTS)
def layout(request):
    return request.param


@pytest.fixture(scope="module")
def retrievers(layout):
    # image_k=None: a search's image hits are the k it asks for (by default get_rag_context's 30)
    return {kind: searcher(layout, search=kind, image_k=None) for kind in ("image", "web", "both")}


def test_image_search_equals_the_pipelines(layout, retrievers):
    for case in (case for case in RECORD[layout]["searches"] if "image" in case):
        docs = bound(retrievers["image"], case["image"]).search(["ignored: the image is the query"], case["k"])[0]
        assert [int(doc.id) for doc in docs] == [hit["index"] for hit in case["results"]], case["image"]
        for doc, hit in zip(docs, case["results"]):
            assert doc.score == pytest.approx(hit["score"], abs=TOLERANCE)
            assert (doc.url, doc.metadata["entities"]) == (hit["url"], hit["entities"])


def test_web_search_equals_the_pipelines(layout, retrievers):
    for case in (case for case in RECORD[layout]["searches"] if "text" in case):
        docs = retrievers["web"].search([case["text"]], case["k"])[0]
        assert not isinstance(docs, RetrievalError)
        assert [doc.id for doc in docs] == [hit["index"] for hit in case["results"]], case["text"]
        for doc, hit in zip(docs, case["results"]):
            assert doc.score == pytest.approx(hit["score"], abs=TOLERANCE)
            assert (doc.title, doc.text, doc.url) == (hit["page_name"], hit["page_snippet"], hit["page_url"])


def test_a_batch_of_searches_gives_each_query_its_own_hits(layout, retrievers):
    texts = list(dict.fromkeys(case["text"] for case in RECORD[layout]["searches"] if "text" in case))
    together = retrievers["both"].search_examples([bound(retrievers["both"], "query_1.png")] * len(texts), texts, 5)
    alone = [bound(retrievers["both"], "query_1.png").search([text], 5)[0] for text in texts]
    assert [[(d.id, d.score) for d in docs] for docs in together] == [[(d.id, d.score) for d in docs] for docs in alone]


def test_the_sparse_graph_is_walked_as_chromadb_walks_it_not_searched_exhaustively():
    """On the graph layout chromadb's lists (test_web_search_equals_the_pipelines) are not the exhaustive ones."""
    import numpy as np

    from ragbench.tasks.crag_mm.search.chroma_store import exact_nearest

    retriever = searcher("graph", search="web")
    web = retriever.web
    assert web.graph is not None
    cases = [case for case in RECORD["graph"]["searches"] if "text" in case]
    vectors = np.stack([retriever.text.encode([case["text"]])[0] for case in cases])
    found = exact_nearest(vectors, web.vectors, 10)  # the graph's vectors: element rows
    exhaustive = [[web.ids[web.element_rows[row]] for row, _ in hits] for hits in found]
    assert sum(found != [hit["index"] for hit in case["results"]] for found, case in zip(exhaustive, cases)) >= 3


def test_get_rag_contexts_search_results_over_its_hits(layout):
    """get_rag_context searches 30 images and 50 pages; the task's prompting gives the same block."""
    from ragbench.tasks.crag_mm.prompting import search_results

    kinds = {(True, True): "both", (True, False): "image", (False, True): "web"}
    retrievers = {kind: searcher(layout, search=kind, image_k=30, web_k=50) for kind in kinds.values()}
    for case in RECORD[layout]["contexts"]:
        retriever = retrievers[kinds[case["image_search"], case["web_search"]]]
        scope = bound(retriever, case["image"]) if case["image_search"] else retriever
        docs = scope.search([case["query"]], 1)[0]
        assert not isinstance(docs, RetrievalError)
        assert search_results(case["query"], docs) == case["context"], (case["image"], case["query"])


def digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def searched(folder: Path) -> None:
    """Both searches over the image and web indexes under `folder`."""
    retriever = load_retriever(
        "cragmm_search",
        {
            "image_index": str(folder / "image"),
            "image_model": str(DATA / "models" / "clip"),
            "web_index": str(folder / "web"),
            "text_model": str(DATA / "models" / "bge"),
        },
    )
    assert bound(retriever, "query_1.png", "tower in paris").search(["tower in paris"], 3)[0]


def test_the_index_folders_are_read_never_written(tmp_path):
    copy = shutil.copytree(DATA / "indexes" / "mixed", tmp_path / "mixed")
    before = digests(copy)
    searched(copy)
    assert digests(copy) == before


def test_a_search_returns_image_hits_then_web_hits_each_named(retrievers):
    docs = bound(retrievers["both"], "query_1.png").search(["tower in paris"], 2)[0]
    assert [doc.metadata["cragmm_search"] for doc in docs] == ["image", "image", "web", "web"]


def test_image_search_without_an_image_fails_that_search_alone(retrievers):
    scope = retrievers["image"].for_example(Example(id="blind", question="what is this"))
    assert scope is not None
    [failed] = scope.search(["what is this"], 3)
    assert isinstance(failed, RetrievalError) and "blind has no image" in str(failed)
    with pytest.raises(RetrievalError, match="needs an example's image"):
        retrievers["image"].search(["what is this"], 3)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"search": "all"}, "search='all'; pass search=image, web or both"),
        ({"search": "web"}, "needs --retriever-arg web_index=DIR"),
        ({"search": "web", "web_k": "-1"}, "web_k=-1: .*"),
        ({"image_index": "nowhere", "image_model": "nowhere"}, "image_index nowhere: no such folder"),
        (
            {"web_index": str(DATA / "indexes" / "mixed" / "image"), "text_model": "x"},
            "no collection 'web_search_embeddings'",
        ),
        (
            {"image_index": str(DATA / "indexes" / "mixed" / "image"), "image_model": "nowhere"},
            "image_model nowhere: no such",
        ),
        (
            {"image_index": str(DATA / "indexes" / "mixed" / "image"), "image_model": str(DATA)},
            "image_model=.*crag_mm_search: no config.json there",
        ),
    ],
)
def test_wrong_options_are_refused_in_one_line(options, message):
    with pytest.raises(ConfigError, match=message) as caught:
        load_retriever("cragmm_search", options)
    assert "\n" not in str(caught.value)


def test_a_truncated_vector_file_is_refused_in_one_line(tmp_path):
    copy = shutil.copytree(DATA / "indexes" / "mixed" / "image", tmp_path / "image")
    [vectors] = copy.glob("*/data_level0.bin")  # the HNSW segment's vectors
    vectors.write_bytes(vectors.read_bytes()[:100])
    with pytest.raises(
        ConfigError, match="graph is damaged .data_level0.bin in .*: 100 bytes.*download the index"
    ) as caught:
        load_retriever("cragmm_search", {"image_index": str(copy), "image_model": str(DATA / "models" / "clip")})
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("kind", ["image", "web"])
def test_a_damaged_model_is_refused_in_one_line(tmp_path, kind):
    name = {"image": "clip", "web": "bge"}[kind]
    model = shutil.copytree(DATA / "models" / name, tmp_path / name)
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:200])
    option = {"image": "image_model", "web": "text_model"}[kind]
    with pytest.raises(ConfigError, match=f"{option}=.* could not be loaded") as caught:
        load_retriever("cragmm_search", {f"{kind}_index": str(DATA / "indexes" / "mixed" / kind), option: str(model)})
    assert "\n" not in str(caught.value)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(0, 12),
    k=st.integers(0, 15),
    values=st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), min_size=12 * 3 + 3, max_size=12 * 3 + 3),
)
def test_nearest_ranks_by_distance_ties_in_row_order_whatever_the_batch(rows, k, values):
    """Few distinct values make many exact ties: the order is by chromadb's distance, then by row."""
    import numpy as np

    from ragbench.tasks.crag_mm.search.chroma_store import exact_nearest as nearest

    vectors = np.array(values[: rows * 3], dtype=np.float32).reshape(rows, 3)
    query = np.array(values[-3:], dtype=np.float32)
    [alone] = nearest(query[None], vectors, k)
    distances = [np.float32(1) - vectors[row] @ query for row in range(rows)]
    assert [row for row, _ in alone] == sorted(range(rows), key=lambda row: (distances[row], row))[:k]
    assert [score for _, score in alone] == [1.0 - float(distances[row]) for row, _ in alone]
    assert nearest(np.stack([query, -query, query]), vectors, k)[2] == alone


def picture(name: str) -> Image:
    return Image.of((DATA / "images" / name).read_bytes())


def test_a_search_by_picture_equals_the_pipelines_image_search(layout, retrievers):
    """Whatever `search` is (web: text searches find pages only), a search by picture searches the image index."""
    for case in (case for case in RECORD[layout]["searches"] if "image" in case):
        [docs] = retrievers["web"].search_images([picture(case["image"])], case["k"])
        assert not isinstance(docs, RetrievalError)
        assert [int(doc.id) for doc in docs] == [hit["index"] for hit in case["results"]], case["image"]
        for doc, hit in zip(docs, case["results"]):
            assert doc.score == pytest.approx(hit["score"], abs=TOLERANCE)
            assert (doc.url, doc.metadata["entities"]) == (hit["url"], hit["entities"])


def test_a_search_by_picture_without_an_image_index_or_a_readable_picture_fails_that_search_alone():
    web_only = searcher("mixed", search="web", image_index=None, image_model=None)
    [failed] = web_only.search_images([picture("query_0.png")], 3)
    assert isinstance(failed, RetrievalError) and "needs image_index= and image_model=" in str(failed)
    found, damaged = searcher("mixed").search_images([picture("query_0.png"), Image.of(b"\x89PNG\r\n\x1a\nnot")], 3)
    assert not isinstance(found, RetrievalError) and len(found) == 3
    assert isinstance(damaged, RetrievalError) and "a query picture could not be read" in str(damaged)


@pytest.mark.parametrize("search", ["web", "both"])
def test_flashrag_mm_searches_by_picture_with_cragmm_search(tmp_path, search):
    """A flashrag_mm run: each question's picture searches the image index (what the retriever's own search by
    picture finds), its text what `search` says (with both, the example's picture too: `image_k` hits)."""
    from support.picture_search import picture_questions, run_flashrag_mm, searched_by_picture

    pictures = {name: picture(name) for name in ("query_0.png", "query_1.png", "query_2.png")}
    examples = picture_questions(pictures, "tower in paris")
    options = {"search": search, "image_k": 1}  # a search by picture takes the k asked (image_topk), not image_k
    indexes = DATA / "indexes" / "mixed"
    models = {"image_model": str(DATA / "models" / "clip"), "text_model": str(DATA / "models" / "bge")}
    folders = {"image_index": str(indexes / "image"), "web_index": str(indexes / "web"), **models}
    run = run_flashrag_mm(
        examples, "cragmm_search", {**folders, **options}, tmp_path / "run", text_topk=2, image_topk=3
    )
    own = searcher("mixed", **options)
    found = {image.digest: own.search_images([image], 3)[0] for image in pictures.values()}
    assert searched_by_picture(tmp_path / "run") == {
        f"image sha256:{digest}": [doc.id for doc in docs]  # type: ignore[union-attr]
        for digest, docs in found.items()
    }
    shown = {sample.id: [doc.id for doc in sample.docs] for sample in run.samples["pictured"]}
    for example in examples:
        [text] = (own.for_example(example) or own).search([example.question], 2)
        assert shown[example.id] == [doc.id for doc in [*text, *found[example.images[0].digest]]]  # type: ignore[misc]


def wal_mode(folder: Path) -> None:
    """Each chroma.sqlite3 under `folder` switched to WAL mode (its header then says so; no -wal file is left)."""
    import sqlite3

    for database in folder.rglob("chroma.sqlite3"):
        connection = sqlite3.connect(database)
        assert connection.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
        connection.close()
        assert database.read_bytes()[18:20] == b"\x02\x02" and not database.with_name("chroma.sqlite3-wal").exists()


def test_an_index_in_wal_mode_is_read_without_a_file_made_or_changed_beside_it(tmp_path):
    copy = shutil.copytree(DATA / "indexes" / "mixed", tmp_path / "mixed")
    wal_mode(copy)
    before = digests(copy)
    searched(copy)
    assert digests(copy) == before  # no chroma.sqlite3-shm, no -wal


def test_writes_pending_in_a_wal_file_are_read_and_the_folder_left_as_it_was(tmp_path):
    """A chromadb that did not close leaves its last writes in chroma.sqlite3-wal: they are read (from a scratch
    copy), and nothing beside them is made or changed."""
    import sqlite3

    live = shutil.copytree(DATA / "indexes" / "graph" / "web", tmp_path / "live")
    wal_mode(live)
    writer = sqlite3.connect(live / "chroma.sqlite3")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE embedding_metadata SET string_value = 'written last' WHERE key = 'page_snippet'")
    writer.commit()
    left = tmp_path / "left"  # what the folder holds while the writer has not closed, as a crash leaves it
    left.mkdir()
    for name in ("chroma.sqlite3", "chroma.sqlite3-wal"):
        shutil.copyfile(live / name, left / name)
    for segment in live.iterdir():
        if segment.is_dir():
            shutil.copytree(segment, left / segment.name)
    writer.close()
    before = digests(left)
    retriever = load_retriever("cragmm_search", {"web_index": str(left), "text_model": str(DATA / "models" / "bge")})
    docs = retriever.search(["tower in paris"], 3)[0]
    assert docs and {doc.text for doc in docs} == {"written last"}
    assert digests(left) == before


def damage(path: Path, offset: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[offset : offset + len(data)] = data
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize(
    ("file", "offset", "data", "problem"),
    [
        ("link_lists.bin", 0, b"\xff\xff\xff\x00", "link_lists.bin in .*: element 0's upper links take"),
        ("header.bin", 20, (10**6).to_bytes(8, "little"), "header.bin in .*: 1000000 elements in an index of 1024"),
    ],
)
def test_a_damaged_graph_is_refused_at_open_in_one_line_naming_the_file(tmp_path, file, offset, data, problem):
    copy = shutil.copytree(DATA / "indexes" / "graph" / "web", tmp_path / "web")
    [path] = copy.glob(f"*/{file}")
    damage(path, offset, data)
    with pytest.raises(ConfigError, match=f"web_index=.*: its HNSW graph is damaged \\({problem}") as caught:
        load_retriever("cragmm_search", {"web_index": str(copy), "text_model": str(DATA / "models" / "bge")})
    assert "\n" not in str(caught.value) and "download the index folder again" in str(caught.value)


def test_damaged_level_0_links_fail_the_first_search_that_meets_them_in_one_line(tmp_path):
    from ragbench.tasks.crag_mm.search.hnsw_graph import HEADER

    copy = shutil.copytree(DATA / "indexes" / "graph" / "web", tmp_path / "web")
    [level0] = copy.glob("*/data_level0.bin")
    _, _, _, count, size, *_ = HEADER.unpack_from(level0.with_name("header.bin").read_bytes())
    for element in range(count):  # every element's level-0 list says it holds 999 links
        damage(level0, element * size, (999).to_bytes(2, "little"))
    retriever = load_retriever("cragmm_search", {"web_index": str(copy), "text_model": str(DATA / "models" / "bge")})
    with pytest.raises(RetrievalError, match="its HNSW graph is damaged \\(data_level0.bin in .*has 999 level-0 links"):
        retriever.search(["tower in paris"], 3)
