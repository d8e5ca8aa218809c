"""A damaged index is refused before anything is searched, in one line naming the file; what no check can tell from
an index built so is searched exactly as its files say.

The promise, for any change to one file of a real index (FlashRAG's bm25s folder recorded in
tests/data/flashrag_bm25, and an index `ragbench index build --retriever bm25` wrote): opening the retriever either
raises a one-line ConfigError naming the index, the changed file (or, where a count no longer agrees, the file it
disagrees with), and how to build it again; or it opens, and every
search answers, each hit a passage of the corpus, with the scores the changed arrays give (for FlashRAG's folder, the
BM25 sums computed here from them, one posting at a time). A change that keeps the arrays' values (an integer
array widened, the JSON written another way) so answers exactly as the intact index does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs, plugins_read_once, write_jsonl
from ragbench._retrieval.bm25.flashrag import FlashRagBM25Retriever
from ragbench._retrieval.bm25.numba_top_k import numba_top_k
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry, load_retriever
from support.helpers import cli_here
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s")  # not imported while the tests are collected
REGISTRY = plugins_read_once()  # read once: the property loads the index of each example

FLASHRAG = TEST_DATA / "flashrag_bm25"
CORPUS = FLASHRAG / "corpus.jsonl"
ARRAYS = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy")
JSON_FILES = ("params.index.json", "vocab.index.json")
QUERIES = ["glacier volcano", "river bridge mountain", "castl run run", "zebra quartz", "lagoon tundra desert"]
KS = (1, 5, 400)
DTYPES = ("int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16", "float32", "float64", "bool")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
NUMBERS = st.integers(-3, 2**40) | st.sampled_from([-(2**31), 2**31, 299, 300, 34, 35, 1268, 1269]) | st.floats()


@st.composite
def array_damage(draw, array: np.ndarray) -> bytes | np.ndarray:
    """`array` changed as a copy, a disk or a hand can change it: cut short, another type or shape, an element
    changed, two swapped, one dropped or added; or bytes that are no .npy file."""
    how = draw(st.sampled_from(["cut", "dtype", "2-D", "set", "swap", "drop", "add", "bytes"]))
    if how == "cut":
        data = npy_bytes(array)
        return data[: draw(st.integers(0, len(data) - 1))]
    if how == "bytes":
        return draw(st.binary(max_size=200))
    changed = array.copy()
    if how == "dtype":
        with np.errstate(all="ignore"):
            return changed.astype(draw(st.sampled_from(DTYPES)))
    if how == "2-D":
        return changed.reshape(-1, 1)
    if how == "add":
        with np.errstate(all="ignore"):  # a number the dtype cannot hold is cast as it comes out: a damage too
            return np.append(changed, np.asarray(draw(NUMBERS)).astype(changed.dtype, casting="unsafe"))
    position = draw(st.integers(0, len(changed) - 1))
    if how == "drop":
        return np.delete(changed, position)
    if how == "swap":
        other = draw(st.integers(0, len(changed) - 1))
        changed[[position, other]] = changed[[other, position]]
        return changed
    with np.errstate(all="ignore"):
        changed[position] = np.asarray(draw(NUMBERS)).astype(changed.dtype, casting="unsafe")
    return changed


@st.composite
def json_damage(draw, value: dict) -> str:
    """The JSON object `value` changed: cut short, another JSON value in its place, one of its fields given another
    value, dropped, or added; or written another way (indented, keys in reverse order)."""
    how = draw(st.sampled_from(["cut", "replace", "set", "drop", "add", "rewrite"]))
    text = json.dumps(value)
    if how == "cut":
        return text[: draw(st.integers(0, len(text) - 1))]
    if how == "replace":
        return json.dumps(draw(JSON_VALUES))
    if how == "rewrite":
        return json.dumps(dict(reversed(value.items())), indent=2)
    changed = dict(value)
    key = draw(st.sampled_from(sorted(changed)))
    if how == "drop":
        del changed[key]
    elif how == "add":
        changed[draw(st.text(min_size=1, max_size=6))] = draw(NUMBERS | JSON_VALUES)
    else:
        other = changed[draw(st.sampled_from(sorted(changed)))]  # a valid value of another field, or any value
        changed[key] = draw(st.sampled_from([other]) | NUMBERS | JSON_VALUES)
    return json.dumps(changed)


def npy_bytes(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@st.composite
def damage(draw, folder: Path, arrays: tuple[str, ...], json_files: tuple[str, ...]) -> tuple[str, bytes]:
    """(file, its new bytes) for one file of the index at `folder`."""
    name = draw(st.sampled_from(arrays + json_files))
    if name in arrays:
        changed = draw(array_damage(np.load(folder / name)))
        return name, changed if isinstance(changed, bytes) else npy_bytes(changed)
    return name, draw(json_damage(json.loads((folder / name).read_text(encoding="utf-8")))).encode("utf-8")


def copy_damaged(source: Path, target: Path, name: str, content: bytes) -> Path:
    shutil.copytree(source, target)
    (target / name).write_bytes(content)
    return target


def reference_scores(folder: Path, words: list[str], passages: int) -> np.ndarray:
    """The BM25 score of every passage for `words`, from the folder's arrays one posting at a time, in float32."""
    vocab = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
    data, indices, indptr = (np.load(folder / name) for name in ARRAYS)
    scores = np.zeros(passages, dtype=np.float32)
    for word in words:
        if word in vocab:
            for posting in range(int(indptr[vocab[word]]), int(indptr[vocab[word] + 1])):
                scores[int(indices[posting])] = np.float32(scores[int(indices[posting])] + data[posting])
    return scores


def refused_in_one_line(error: ConfigError, label: str, folder: Path, name: str, fix: str) -> None:
    """One line naming the index, the changed file `name` (the file found wrong, or the one it disagrees with), and
    the `fix`."""
    message = str(error)
    assert "\n" not in message
    assert message.startswith(f"{label}: index {folder}: ") and Path(name).name in message, message
    assert fix in message, message


@pytest.fixture(scope="module")
def intact() -> FlashRagBM25Retriever:
    return FlashRagBM25Retriever(index=str(FLASHRAG / "bm25"), corpus=str(CORPUS))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_flashrag_folder_changed_anywhere_is_refused_naming_the_file_or_searched_as_its_arrays_say(
    tmp_path_factory, intact, data
):
    name, content = data.draw(damage(FLASHRAG / "bm25", ARRAYS, JSON_FILES))
    folder = copy_damaged(FLASHRAG / "bm25", tmp_path_factory.mktemp("flashrag") / "bm25", name, content)
    try:
        retriever = FlashRagBM25Retriever(index=str(folder), corpus=str(CORPUS))
    except ConfigError as error:
        if "was built over" in str(error):  # num_docs changed to another whole number: the corpus is not its
            assert str(error).startswith(f"retriever flashrag_bm25: corpus {CORPUS} holds 300 passages, index")
            return
        refused_in_one_line(error, "retriever flashrag_bm25", folder, name, "--retriever flashrag_bm25 --out")
        return
    try:
        for query in QUERIES:
            words = [word for word in query.split() if word not in retriever.stopwords]
            expected = reference_scores(folder, words, 300)
            for k in KS:
                [hits] = retriever.search([query], k)
                scores, rows = numba_top_k(expected, k)
                assert [doc.id for doc in hits] == [intact.rows.get(int(row)).id for row in rows]
                assert [doc.score for doc in hits] == scores.tolist()
                if name.endswith(".json") or np.array_equal(np.load(folder / name), np.load(FLASHRAG / "bm25" / name)):
                    assert hits == intact.search([query], k)[0]  # the same values: the same answers
    finally:
        retriever.close()


@pytest.fixture(scope="module")
def ragbench_index(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("bm25")
    corpus = write_dpr_tsv(base / "corpus.tsv", passages(40))
    build_index(corpus, base / "index", "bm25", chunk_size=16, progress=False, registry=installed_registry())
    return base / "index"


BM25_ARRAYS = ("docs.offsets.npy", *(f"bm25/{name}" for name in ARRAYS))
BM25_JSON = ("manifest.json", *(f"bm25/{name}" for name in JSON_FILES))


@pytest.mark.parametrize("name", ["manifest.json", "bm25/params.index.json"])
def test_a_json_file_given_a_key_with_a_line_break_is_refused_in_one_line_naming_the_key(
    tmp_path, ragbench_index, name
):
    """Hypothesis found it: the loader's TypeError quotes the unknown key, and its line break split the message."""
    data = json.loads((ragbench_index / name).read_text(encoding="utf-8"))
    content = json.dumps({**data, "\n": 0}).encode()
    with pytest.raises(ConfigError) as refused:
        load_retriever("bm25", {"index": str(copy_damaged(ragbench_index, tmp_path / "i", name, content))})
    assert "\n" not in str(refused.value) and "'\\n'" in str(refused.value), str(refused.value)


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_ragbench_bm25_index_changed_anywhere_is_refused_naming_the_file_or_answers_from_its_passages(
    tmp_path_factory, ragbench_index, data
):
    name, content = data.draw(damage(ragbench_index, BM25_ARRAYS, BM25_JSON))
    folder = copy_damaged(ragbench_index, tmp_path_factory.mktemp("bm25") / "index", name, content)
    try:
        retriever = load_retriever("bm25", {"index": str(folder)}, registry=REGISTRY)
    except ConfigError as error:
        message = str(error)
        assert "\n" not in message
        if name == "manifest.json":  # the manifest says how to rebuild: without it, the build command with FILE
            assert "ragbench index build --corpus" in message, message
            assert "manifest.json" in message or "index, not bm25; use --retriever" in message, message
        else:
            refused_in_one_line(error, "retriever bm25", folder, name, f"--retriever bm25 --out {folder} --overwrite")
        return
    ids = {doc.id for doc in passages(40)}
    try:
        for query in ["river castle", "music song album artist", "zebra"]:  # "zebra": in no passage
            for k in (1, 10, 60):
                [hits] = retriever.search([query], k)  # only passages that match: maybe fewer than k
                assert len(hits) <= min(k, 40) and {doc.id for doc in hits} <= ids
    finally:
        retriever.close()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(-3, 6), max_size=30),
    st.lists(st.integers(0, 30), max_size=5),
    st.booleans(),
    st.integers(1, 9),
)
def test_the_scans_find_the_first_fall_and_the_first_number_out_of_range_whatever_the_block(
    values, restarts, strictly, block
):
    from ragbench._retrieval.index import damage as index_damage

    array, starts = np.array(values, dtype=np.int32), np.array(sorted(restarts), dtype=np.int64)
    falls = [
        i
        for i in range(1, len(values))
        if (values[i] <= values[i - 1] if strictly else values[i] < values[i - 1]) and i not in restarts
    ]
    outside = [i for i, value in enumerate(values) if not 0 <= value < 4]
    whole = index_damage.BLOCK
    try:
        index_damage.BLOCK = block
        if falls:
            with pytest.raises(index_damage.IndexDamage, match=f" at position {falls[0]} is not "):
                index_damage.ascending("x", array, "number", strictly, starts)
        else:
            index_damage.ascending("x", array, "number", strictly, starts)
        if outside:
            with pytest.raises(index_damage.IndexDamage, match=f" at position {outside[0]} is outside 0..3"):
                index_damage.within("x", array, 0, 4, "number", "four")
        else:
            index_damage.within("x", array, 0, 4, "number", "four")
    finally:
        index_damage.BLOCK = whole


# -- the run: refused as it starts, in one line, nothing written -----------------------------------------------------


def nq_run(tmp_path: Path, index: Path, output: Path, *extra: str):
    data = write_jsonl(
        tmp_path / "nq.jsonl",
        [{"id": f"q{i}", "question": question, "golden_answers": ["x"]} for i, question in enumerate(QUERIES)],
    )
    return cli_here(
        "--tasks",
        "nq_open_flashrag",
        "--data",
        f"nq_open_flashrag={data}",
        "--system",
        "vanilla",
        "--model",
        "scripted:echo",
        "--retriever",
        "flashrag_bm25",
        "--retriever-arg",
        f"index={index}",
        "--retriever-arg",
        f"corpus={CORPUS}",
        "--output",
        str(output),
        "--no-progress",
        "--bootstrap-iters",
        "0",
        *extra,
    )


def changed_array(name: str, change):
    def damage(folder: Path) -> None:
        np.save(folder / name, change(np.load(folder / name)))

    return damage


ISSUE_CASES = {  # what a copy, a disk or a hand did to the folder, and what the one line says of it
    "vocabulary a list": (
        lambda folder: (folder / "vocab.index.json").write_text('["river", "bridg"]'),
        "vocab.index.json: holds a JSON array, not an object",
    ),
    "negative passage numbers": (
        changed_array("indices.csc.index.npy", lambda indices: -indices - 1),
        "indices.csc.index.npy: passage number -1 at position 0 is outside 0..299",
    ),
    "passage numbers past the corpus": (
        changed_array("indices.csc.index.npy", lambda indices: indices + 1000),
        "indices.csc.index.npy: passage number 1000 at position 0 is outside 0..299",
    ),
    "indptr out of order": (
        changed_array(
            "indptr.csc.index.npy", lambda indptr: np.concatenate([[0], np.sort(indptr[1:-1])[::-1], [1269]])
        ),
        "indptr.csc.index.npy: posting number ",
    ),
    "a term's column out of order": (
        changed_array("indices.csc.index.npy", lambda indices: np.concatenate([indices[1::-1], indices[2:]])),
        "indices.csc.index.npy: passage number ",
    ),
}


@pytest.mark.parametrize("case", sorted(ISSUE_CASES))
def test_a_damaged_flashrag_folder_ends_the_run_as_it_starts_in_one_line_naming_the_file(tmp_path, case):
    damage, said = ISSUE_CASES[case]
    folder = shutil.copytree(FLASHRAG / "bm25", tmp_path / "bm25")
    damage(folder)
    result = nq_run(tmp_path, folder, tmp_path / "run")
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"ragbench: error: retriever flashrag_bm25: index {folder}: {said}"), line
    assert line.endswith(f"--corpus {CORPUS} --retriever flashrag_bm25 --out NEW_DIR`")
    assert not (tmp_path / "run").exists()  # nothing half-done


def test_a_resume_over_a_folder_damaged_since_is_refused_and_leaves_the_run_as_it_was(tmp_path):
    folder, run_dir = shutil.copytree(FLASHRAG / "bm25", tmp_path / "bm25"), tmp_path / "run"
    assert nq_run(tmp_path, folder, run_dir).returncode == 0
    samples_file = run_dir / "samples" / "nq_open_flashrag.jsonl"
    samples_file.write_text(samples_file.read_text().splitlines()[0] + "\n")  # the run stopped after one example
    before = {path: path.read_bytes() for path in run_dir.rglob("*") if path.is_file()}
    changed_array("indices.csc.index.npy", lambda indices: indices + 1000)(folder)
    refused = nq_run(tmp_path, folder, run_dir, "--resume")
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert "indices.csc.index.npy: passage number 1000 at position 0 is outside 0..299" in line
    assert {path: path.read_bytes() for path in run_dir.rglob("*") if path.is_file()} == before
    shutil.rmtree(folder)
    shutil.copytree(FLASHRAG / "bm25", folder)  # copied again: the resume completes the run
    resumed = nq_run(tmp_path, folder, run_dir, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert (run_dir / "results.json").is_file() and len(samples_file.read_text().splitlines()) == len(QUERIES)


def test_the_docs_store_is_checked_offset_by_offset(tmp_path, ragbench_index):
    folder = shutil.copytree(ragbench_index, tmp_path / "index")
    offsets = np.load(folder / "docs.offsets.npy")
    offsets[[3, 4]] = offsets[[4, 3]]  # two passages' lines swapped in the offsets: every count still right
    np.save(folder / "docs.offsets.npy", offsets)
    with pytest.raises(ConfigError, match=r"docs.offsets.npy: byte offset \d+ at position 4 is not above the one"):
        load_retriever("bm25", {"index": str(folder)}, registry=installed_registry())


def test_a_manifest_field_of_another_type_is_refused_naming_it(tmp_path, ragbench_index):
    folder = shutil.copytree(ragbench_index, tmp_path / "index")
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "doc_count": "40"}))
    with pytest.raises(ConfigError, match=r"manifest.json is damaged \(doc_count is \"40\", not a whole number\)"):
        load_retriever("bm25", {"index": str(folder)}, registry=installed_registry())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "options": {**manifest["options"], "stemmer": 3}}))
    with pytest.raises(ConfigError, match=r"manifest.json options: stemmer is 3, not a string or null"):
        load_retriever("bm25", {"index": str(folder)}, registry=installed_registry())


def test_dense_embeddings_of_another_type_than_the_manifest_are_refused(tmp_path, ragbench_index):
    """Checked before the encoder loads (`check_files`): int8 codes are no float16 vectors, though counts agree."""
    from ragbench._retrieval.dense.retriever import DenseRetriever
    from ragbench._retrieval.index.built import read_manifest
    from ragbench._retrieval.index.damage import IndexDamage

    folder = tmp_path / "dense"
    folder.mkdir()
    for name in ("docs.jsonl", "docs.offsets.npy"):
        shutil.copy(ragbench_index / name, folder / name)
    options = {"model": "embedded", "query_instruction": "", "normalize": True, "dtype": "float16", "dim": 4}
    manifest = {"retriever": "dense", "doc_count": 40, "corpus": {"path": "c.tsv"}, "format": 1, "options": options}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    np.save(folder / "embeddings.npy", np.ones((40, 4), dtype=np.float16))
    DenseRetriever.check_files(folder, read_manifest(folder, "dense"))  # as a build writes them
    np.save(folder / "embeddings.npy", np.ones((40, 4), dtype=np.int8))
    with pytest.raises(
        IndexDamage, match=r"embeddings.npy: holds a int8 array of shape \(40, 4\), not a matrix of float16"
    ):
        DenseRetriever.check_files(folder, read_manifest(folder, "dense"))


def test_a_passage_line_changed_in_place_fails_the_search_that_returns_it_naming_the_line(tmp_path, ragbench_index):
    """Offsets and sizes still agree, so no check at opening sees it; the search that shows the passage fails (its
    example is counted failed), naming the file and the line."""
    from ragbench.api.retrieval import RetrievalError

    folder = shutil.copytree(ragbench_index, tmp_path / "index")
    lines = (folder / "docs.jsonl").read_bytes()
    (folder / "docs.jsonl").write_bytes(b"x" + lines[1:])
    retriever = load_retriever("bm25", {"index": str(folder)}, registry=installed_registry())
    try:
        with pytest.raises(RetrievalError, match=rf"{folder / 'docs.jsonl'}:1: not the passage line a build writes"):
            retriever.search([passages(40)[0].text], 40)  # the changed passage's own words
    finally:
        retriever.close()
