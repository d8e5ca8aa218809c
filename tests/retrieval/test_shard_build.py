"""`ragbench index build --ray --shards S`: each shard built by a worker from its own part of the corpus (JSONL byte
ranges, segmented files), only small statistics sent to the driver; the shards answer as the one-process index,
ids, order and scores bit for bit (lucene_bm25: pyserini's), for any corpus, shard count and k; a build killed for
real resumes from its finished shards and rebuilds a damaged one; a damaged shard is refused before a search."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from operator import itemgetter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs, plugins_read_once, write_jsonl
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._retrieval.sharding.build.runner import InProcess
from ragbench._retrieval.sharding.build.state_files import bucket_name
from ragbench._retrieval.sharding.kind_lookup import built_shards_front, sharded_kind
from ragbench._retrieval.sharding.split import split_index
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry, load_retriever
from support.held_build import held_build
from support.helpers import cli_here
from support.ray_cluster import SHARED

pytestmark = needs("regex", "bm25s")
REGISTRY = plugins_read_once()  # read once: the properties search each shard of each example

WORDS = ["river", "king", "queen", "castle", "song", "the", "of", "moses", "winter", "x", "running", "sang"]
QUERIES = ["river king", "the song of the queen", "x winter running", "castle", "zzz"]
VARYING = ("build_seconds", "built_at")


def shard_search(index: Path, shards: int, queries: list[str], k: int, kind: str = "lucene_bm25"):
    """The shards built into `index`, each searched apart (as its Ray actor would), then merged by the front."""
    front = built_shards_front(sharded_kind(REGISTRY, kind), str(index), shards)(str(index), shards)
    try:
        payload = front.payload(queries)
        layout = front.layout(shards)
        found = [
            sharded_kind(REGISTRY, layout.retriever).search(shard, front.shard_options()).top_k(payload, k)
            for shard in layout.shards
        ]
        return hits(front.answers(queries, found, k))
    finally:
        front.close()


def hits(results) -> list[list[tuple[str | None, float | None, str]]]:
    return [[(doc.id, doc.score, doc.text) for doc in result] for result in results]


def whole_search(index: Path, queries: list[str], k: int, kind: str = "lucene_bm25"):
    whole = REGISTRY.load("retrievers", kind)(str(index))
    try:
        return hits(whole.search(queries, k))
    finally:
        whole.close()


def manifest(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if key not in (*VARYING, "corpus")}


lines = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join),
    st.just("not json"),  # a bad row, named by its line in the file
)


@settings(max_examples=16, deadline=None)
@given(st.lists(lines, min_size=1, max_size=30), st.data(), st.integers(0, 12), st.lists(st.sampled_from(QUERIES)))
def test_shards_built_from_parts_answer_exactly_as_the_one_process_index(rows, data, k, asked):
    """lucene_bm25 and bm25 (bm25s's scores: BM25+ too). Ids in another order than the passages' (lucene_bm25's ties
    go by id, across shards too), bad rows anywhere, passages without words: the same hits, order and scores
    (lucene_bm25: Anserini-adjusted), passage count and bad records (named by the file's line) as the one-process
    build; each shard's files are those split from it, but for lucene_bm25's id ranks."""
    kind, options = data.draw(st.sampled_from([("lucene_bm25", {}), ("bm25", {}), ("bm25", {"method": "bm25+"})]))
    rows = [*rows, "river king"]
    ids = data.draw(
        st.lists(st.text("ab1", min_size=1, max_size=4), min_size=len(rows), max_size=len(rows), unique=True)
    )
    shards = data.draw(st.integers(1, 4))
    registry = REGISTRY
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        records = [row if row == "not json" else {"id": i, "title": "", "text": row} for i, row in zip(ids, rows)]
        corpus = write_jsonl(folder / "corpus.jsonl", records)
        build_index(corpus, folder / "one", kind, options, progress=False, registry=registry)
        try:
            build_shards(corpus, folder / "built", kind, options, shards, registry=registry)
        except ConfigError as exc:  # more shards than lines, or a part of the bytes with no line in it (long ones)
            more = f"has {len(rows)} lines and a shard is built from whole lines; choose 1 to {len(rows)}"
            assert (more if shards > len(rows) else "holds no passages; choose fewer shards") in str(exc)
            assume(False)
        built = folder / "built" / f"shards-{shards}"
        assert manifest(built / "manifest.json") == manifest(folder / "one" / "manifest.json")
        assert shard_search(folder / "built", shards, asked, k, kind) == whole_search(folder / "one", asked, k, kind)
        layout = json.loads((built / "shards.json").read_text())
        ranges = [(shard["start"], shard["stop"]) for shard in layout["shards"]]
        split_index(folder / "one", shards, registry=REGISTRY)  # the one index cut at the same passages: the same files
        split = json.loads((folder / "one" / f"shards-{shards}" / "shards.json").read_text())
        if ranges == [(shard["start"], shard["stop"]) for shard in split["shards"]]:
            for mine, theirs in zip(layout["shards"], split["shards"]):
                common = [name for name in theirs["files"] if not name.endswith("id_ranks.npy")]
                assert [mine["files"][name] for name in common] == [theirs["files"][name] for name in common]


class Recording(InProcess):
    """Runs the steps here and keeps what each sent back to the driver."""

    def __init__(self) -> None:
        self.sent: list[object] = []

    def map(self, function, calls, **options):
        results = super().map(function, calls, **options)
        self.sent += results
        return results


@pytest.mark.parametrize(
    ("kind", "small"),
    [("lucene_bm25", {"docs_with_terms", "total_terms"}), ("bm25", {"n_docs", "total_length", "options"})],
)
def test_the_driver_gets_counts_never_the_vocabulary_and_the_buckets_partition_it(tmp_path, kind, small):
    """3,000 passages of the same three words and one of 40 others in turn: 12,000 postings stay in the shards, the parts'
    words and document frequencies stay in files; what the driver receives from step 1 is each part's counts and
    its terms file's record, from the middle step each bucket's counts (step 2 sends nothing back). The buckets,
    one a shard, hold each word once, with its document frequency in the whole corpus."""
    words = [f"w{i}" for i in range(40)]
    docs = [{"id": str(i), "text": f"river king of song {words[i % 40]}"} for i in range(3000)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    recording = KeepingBuckets()
    build_shards(corpus, tmp_path / "built", kind, {}, 3, registry=installed_registry(), runner=lambda: recording)
    step_one, middle, step_two = recording.sent[:3], recording.sent[3:6], recording.sent[6:]
    for sent in step_one:
        assert "river" not in json.dumps(sent) and len(json.dumps(sent)) < 600
        assert set(sent) == {"passages", "lines", "bytes", "sha256", "bad_records", "errors", "repeated", "stats",
                             "terms"}  # fmt: skip
        assert set(sent["stats"]) == small
        assert set(sent["terms"]) == {"offsets", "bytes", "digest"} and len(sent["terms"]["offsets"]) == 4
    assert sum(sent["passages"] for sent in step_one) == 3000
    assert step_two == [None, None, None]
    assert sum(merged["terms"] for merged in middle) == 43 and sum(merged["postings"] for merged in middle) == 12000
    buckets = [dict(zip(*itemgetter("words", "doc_freqs")(json.loads(text)))) for text in recording.buckets]
    held = [word for bucket in buckets for word in bucket]
    assert sorted(held) == sorted({*words, "river", "king", "song"})  # each word in one bucket only
    assert {word: count for bucket in buckets for word, count in bucket.items()} == {
        **{word: 75 for word in words}, "river": 3000, "king": 3000, "song": 3000}  # fmt: skip


class KeepingBuckets(Recording):
    """Recording, and keeping the middle step's buckets (the building folder is gone once the build is done)."""

    def __init__(self) -> None:
        super().__init__()
        self.buckets: list[str] = []

    def map(self, function, calls, **options):
        results = super().map(function, calls, **options)
        if function.__name__ == "merge_bucket":
            self.buckets += [call[0].path(bucket_name(call[2])).read_text(encoding="utf-8") for call in calls]
        return results


def killed_after_two_shards(corpus: Path, out: Path) -> Path:
    """The build of `corpus` into `out` in 3 lucene_bm25 shards killed (SIGKILL) once shards 0 and 1 are finished,
    before shard 2's second step: its building folder."""
    killed = f"""
import os, signal
from pathlib import Path
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._retrieval.sharding.build.runner import InProcess
from ragbench._retrieval.sharding.build.state_files import bucket_name
from ragbench.testing import installed_registry

class KilledAfterTwoShards(InProcess):
    def map(self, function, calls, **options):
        if function.__name__ == "finish_part":
            calls = calls[:2]
            super().map(function, calls)
            os.kill(os.getpid(), signal.SIGKILL)
        return super().map(function, calls)

build_shards(Path({str(corpus)!r}), Path({str(out)!r}), "lucene_bm25", {{}}, 3, registry=installed_registry(),
             runner=KilledAfterTwoShards)
"""
    done = subprocess.run([sys.executable, "-c", killed], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    building = out / "shards-3.building"
    assert not (out / "shards-3").exists() and (building / "001.finished.json").is_file()
    return building


def test_a_killed_build_resumes_keeping_finished_shards_and_rebuilding_a_damaged_one(tmp_path):
    """The build is killed once shards 0 and 1 are finished; shard 1's postings are then cut short. The same build
    again keeps shard 0, builds shard 1 again from its part, finishes shard 2, and answers as the one-process index;
    nothing of the building folder is left."""
    docs = [{"id": f"d{i:03d}", "text": " ".join(WORDS[i % 9 : i % 9 + 1 + i % 4])} for i in range(60)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "built"
    building = killed_after_two_shards(corpus, out)
    postings = building / "001" / "lucene_bm25" / "postings.npy"
    postings.write_bytes(postings.read_bytes()[:-4])
    resumed = build_shards(corpus, out, "lucene_bm25", {}, 3, registry=installed_registry())
    assert resumed.kept == 1
    build_index(corpus, tmp_path / "one", "lucene_bm25", {}, progress=False, registry=installed_registry())
    assert shard_search(out, 3, QUERIES, 10) == whole_search(tmp_path / "one", QUERIES, 10)
    assert sorted(path.name for path in out.iterdir()) == ["shards-3"]


def test_a_build_whose_state_an_older_ragbench_wrote_starts_afresh_and_answers_as_the_one_index(tmp_path):
    """Step files of another format (an older ragbench's: its key without `steps_format`) are never read as this
    one's: the build resumed after an upgrade keeps no shard and answers as the one-process index."""
    docs = [{"id": f"d{i:03d}", "text": " ".join(WORDS[i % 9 : i % 9 + 1 + i % 4])} for i in range(60)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "built"
    record = killed_after_two_shards(corpus, out) / "shard-build.json"
    older = json.loads(record.read_text(encoding="utf-8"))
    older.pop("steps_format", None)
    record.write_text(json.dumps(older), encoding="utf-8")
    resumed = build_shards(corpus, out, "lucene_bm25", {}, 3, registry=installed_registry())
    assert resumed.kept == 0
    build_index(corpus, tmp_path / "one", "lucene_bm25", {}, progress=False, registry=installed_registry())
    assert shard_search(out, 3, QUERIES, 10) == whole_search(tmp_path / "one", QUERIES, 10)


def test_one_driver_at_a_time_builds_into_a_local_out(tmp_path):
    """A second driver is refused at once while a first, in its own process, holds the --out (its building folder's
    lock); the first then completes. One killed outright lets go of it (the kernel's lock): the next builds."""
    docs = [{"id": f"d{i:03d}", "text": " ".join(WORDS[i % 9 : i % 9 + 1 + i % 4])} for i in range(30)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "built"
    with held_build(corpus, out, 2) as first:
        with pytest.raises(ConfigError) as refused:
            build_shards(corpus, out, "lucene_bm25", {}, 2, registry=installed_registry())
        assert str(refused.value) == (
            f"--out {out}: another ragbench shard build is writing it ({out}/shards-2.building is locked); wait for it "
            "to end, or choose another --out"
        )
        _, err = first.communicate("\n")  # let go on
        assert first.returncode == 0, err
    assert sorted(path.name for path in out.iterdir()) == ["shards-2"]
    with held_build(corpus, tmp_path / "killed", 2) as first:
        first.kill()
    assert build_shards(corpus, tmp_path / "killed", "lucene_bm25", {}, 2, registry=installed_registry()).kept == 0


class StoppedBeforeStepTwo(InProcess):
    def map(self, function, calls, **options):
        if function.__name__ == "finish_part":
            raise RuntimeError("stopped")
        return super().map(function, calls, **options)


class Counting(InProcess):
    def __init__(self) -> None:
        self.ran: list[tuple[str, int]] = []

    def map(self, function, calls, **options):
        self.ran.append((function.__name__, len(calls)))
        return super().map(function, calls, **options)


def test_a_resumed_build_merges_again_only_a_damaged_bucket_and_analyses_again_a_damaged_terms_file(tmp_path):
    """Stopped after the middle step; bucket 1's merged terms then altered, and shard 2's terms file: the same
    build analyses part 2 again (its terms file rewritten alike), merges bucket 1 again and keeps the others, and
    answers as the one-process index."""
    docs = [{"id": f"d{i:03d}", "text": " ".join(WORDS[i % 9 : i % 9 + 1 + i % 4])} for i in range(60)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "built"
    with pytest.raises(RuntimeError, match="stopped"):
        build_shards(corpus, out, "lucene_bm25", {}, 3, registry=installed_registry(), runner=StoppedBeforeStepTwo)
    building = out / "shards-3.building"
    bucket = building / "terms" / "001.json"
    bucket.write_text(bucket.read_text(encoding="utf-8").replace("1", "2"), encoding="utf-8")
    terms = building / "002.terms.jsonl"
    terms.write_bytes(terms.read_bytes()[:-1])
    counting = Counting()
    build_shards(corpus, out, "lucene_bm25", {}, 3, registry=installed_registry(), runner=lambda: counting)
    assert counting.ran == [("analyse_part", 1), ("merge_bucket", 1), ("finish_part", 3)]
    build_index(corpus, tmp_path / "one", "lucene_bm25", {}, progress=False, registry=installed_registry())
    assert shard_search(out, 3, QUERIES, 10) == whole_search(tmp_path / "one", QUERIES, 10)
    assert sorted(path.name for path in out.iterdir()) == ["shards-3"]


def test_a_damaged_shard_is_refused_in_one_line_naming_it_and_the_fix(tmp_path):
    docs = [{"id": f"d{i}", "text": " ".join(WORDS[i % 9 : i % 9 + 3])} for i in range(20)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    build_shards(corpus, tmp_path / "built", "lucene_bm25", {}, 2, registry=installed_registry())
    store = tmp_path / "built" / "shards-2" / "001" / "docs.jsonl"
    store.write_bytes(store.read_bytes().replace(b"d19", b"d91"))  # the same size, another content
    with pytest.raises(ConfigError) as refused:
        load_retriever("lucene_bm25", {"index": str(tmp_path / "built"), "shards": 2}, registry=installed_registry())
    message = str(refused.value)
    assert "001/docs.jsonl" in message and "content digest" in message and "\n" not in message


def test_a_segmented_corpus_is_built_a_run_of_whole_files_a_shard(tmp_path):
    segmented = TEST_DATA / "trec_rag" / "msmarco_v2.1_doc_segmented"
    build_index(segmented, tmp_path / "one", "lucene_bm25", {}, progress=False, registry=installed_registry())
    build_shards(segmented, tmp_path / "built", "lucene_bm25", {}, 2, registry=installed_registry())
    asked = ["the history of", "sleep", "water"]
    assert shard_search(tmp_path / "built", 2, asked, 5) == whole_search(tmp_path / "one", asked, 5)
    with pytest.raises(ConfigError, match="has 2 shard files and a shard is built from whole files; choose 1 to 2"):
        build_shards(segmented, tmp_path / "more", "lucene_bm25", {}, 3, registry=installed_registry())


@needs("ray")
def test_built_on_ray_from_the_command_line_and_searched_through_shard_actors(ray_cluster, tmp_path, monkeypatch):
    """`index build --ray ADDRESS --shards 2` (more than one) on a 3-node cluster, given relative paths
    (scale-out.md's form) from another folder than the one its raylets (and so its tasks) run in: the paths are the
    command's, nothing is written in the tasks' folder; no merged index, and `shards=2` answers as the one-process
    index; with `--merged` (one worker actor) the one index is built and split, as before."""
    docs = [{"id": f"d{(i * 7) % 45:03d}", "text": " ".join(WORDS[i % 9 : i % 9 + 1 + i % 4])} for i in range(45)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "built"
    monkeypatch.chdir(tmp_path)
    tasks = SHARED.folder  # a task's working folder: its raylet's
    before = set(os.listdir(tasks))
    assert tasks != tmp_path
    done = cli_here("index", "build", "--corpus", "corpus.jsonl", "--retriever", "lucene_bm25", "--out", "built",
                    "--ray", ray_cluster.address, "--shards", "2", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 shards of" in done.stdout and "no merged index" in done.stdout
    assert sorted(path.name for path in out.iterdir()) == ["shards-2"]
    assert set(os.listdir(tasks)) == before
    build_index(corpus, tmp_path / "one", "lucene_bm25", {}, progress=False, registry=installed_registry())
    args = {"index": str(out), "shards": 2, "ray_address": ray_cluster.address}
    sharded = load_retriever("lucene_bm25", args, registry=installed_registry())
    try:
        assert hits(sharded.search(QUERIES, 7)) == whole_search(tmp_path / "one", QUERIES, 7)
    finally:
        sharded.close()
    assert os.path.isfile(out / "shards-2" / "manifest.json")
    merged = cli_here("index", "build", "--corpus", str(corpus), "--retriever", "lucene_bm25",
                      "--out", str(tmp_path / "m"), "--ray", ray_cluster.address, "--shards", "2", "--merged",
                      "--workers", "1", "--no-progress")  # fmt: skip
    assert merged.returncode == 0, merged.stderr  # the one index, split as before
    assert (tmp_path / "m" / "manifest.json").is_file() and (tmp_path / "m" / "shards-2" / "shards.json").is_file()
    assert not (tmp_path / "m" / "shards-2" / "manifest.json").exists()


@pytest.mark.parametrize("twice", [(3, 37), (3, 4)])  # in two shards, in one
def test_a_repeated_passage_id_is_refused_as_the_one_process_build_refuses_it(tmp_path, twice):
    docs = [{"id": f"d{i:02d}", "text": "river king"} for i in range(40)]
    docs[twice[1]]["id"] = docs[twice[0]]["id"]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    with pytest.raises(ConfigError) as one:
        build_index(corpus, tmp_path / "one", "lucene_bm25", {}, progress=False, registry=installed_registry())
    with pytest.raises(ConfigError) as sharded:
        build_shards(corpus, tmp_path / "built", "lucene_bm25", {}, 3, registry=installed_registry())
    assert str(sharded.value) == str(one.value)


tsv_rows = st.lists(
    st.tuples(st.sampled_from(["plain", "bad", "quoted", "cr"]), st.lists(st.sampled_from(WORDS), max_size=5)),
    min_size=1,
    max_size=20,
)


@settings(max_examples=15, deadline=None)
@given(tsv_rows, st.booleans(), st.booleans(), st.integers(1, 3))
def test_a_tsv_corpus_is_read_in_byte_ranges_as_the_one_process_reader_reads_it(rows, header, bom, shards):
    """DPR TSV: a header or none, a BOM, bad rows, a quoted field holding a line break, a lone "\\r" (text mode ends
    a line there): the same passages, bad records (named by the file's line) and answers; a part that would start
    inside a row is refused in one line."""
    lines = ["\ufeff" if bom else "", "id\ttext\ttitle\n" if header else ""]
    for number, (form, words) in enumerate(rows):
        text = " ".join(words)
        lines.append(
            {
                "plain": f"p{number}\t{text}\tT{number}\n",
                "bad": f"p{number}\t{text}\n",
                "quoted": f'p{number}\t"{text}\nthe {text}"\tT{number}\n',
                "cr": f"p{number}\t{text}\rx\tT\n",
            }[form]
        )
    registry = REGISTRY
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = folder / "corpus.tsv"
        corpus.write_text("".join(lines), encoding="utf-8")
        try:
            build_index(corpus, folder / "one", "lucene_bm25", {}, progress=False, registry=registry)
        except ConfigError as exc:
            assert "no readable passages" in str(exc)
            assume(False)
        try:
            build_shards(corpus, folder / "built", "lucene_bm25", {}, shards, registry=registry)
        except ConfigError as exc:
            held = "".join(lines).count("\n")  # every row ends with one
            if shards > held:  # refused before any part is read
                assert f"has {held} lines and a shard is built from whole lines; choose 1 to {held}" in str(exc)
            else:
                assert "holds no passages" in str(exc) or "a quoted field holding a line break" in str(exc)
            assert "\n" not in str(exc) and not (folder / "built" / f"shards-{shards}.building").exists()
            assume(False)
        built = folder / "built" / f"shards-{shards}"
        assert manifest(built / "manifest.json") == manifest(folder / "one" / "manifest.json")
        assert shard_search(folder / "built", shards, QUERIES, 10) == whole_search(folder / "one", QUERIES, 10)


def test_lucene_bm25_ties_across_shards_go_by_id_as_pyserini_orders_them(tmp_path):
    """Four equal passages whose ids fall in the reverse order of the shards: the one index's order (by id)."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": i, "text": "river king"} for i in ["zz", "yy", "xx", "ww"]])
    build_index(corpus, tmp_path / "one", "lucene_bm25", {}, progress=False, registry=installed_registry())
    build_shards(corpus, tmp_path / "built", "lucene_bm25", {}, 2, registry=installed_registry())
    found = shard_search(tmp_path / "built", 2, ["river"], 3)
    assert found == whole_search(tmp_path / "one", ["river"], 3) and [hit[0] for hit in found[0]] == ["ww", "xx", "yy"]


def test_flashrag_bm25_shards_answer_as_its_one_index_over_the_corpus_rows(tmp_path):
    """FlashRAG's bm25 (its language, int32 pointers, numba heap order with zero-score padding, a query of
    stopwords failing alone): the same answers from 1 to 3 shards as the one index, k past the passages too."""
    words = [*WORDS, "sang"]
    docs = [{"id": f"d{i}", "contents": " ".join(words[i % 9 : i % 9 + 1 + i % 4])} for i in range(40)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    registry, options = installed_registry(), {"language": "en"}
    build_index(corpus, tmp_path / "one", "flashrag_bm25", options, progress=False, registry=registry)
    whole = load_retriever("flashrag_bm25", {"index": str(tmp_path / "one"), "corpus": str(corpus)}, registry=registry)
    asked = [*QUERIES, "the of"]
    try:
        for shards in (1, 2, 3):
            build_shards(corpus, tmp_path / "built", "flashrag_bm25", options, shards, registry=registry)
            front = built_shards_front(
                sharded_kind(installed_registry(), "flashrag_bm25"), str(tmp_path / "built"), shards
            )
            served = front(str(tmp_path / "built"), shards, corpus=str(corpus))
            try:
                layout, payload = served.layout(shards), served.payload(asked)
                for k in (1, 5, 50):
                    found = [
                        sharded_kind(installed_registry(), layout.retriever).search(shard, {}).top_k(payload, k)
                        for shard in layout.shards
                    ]
                    mine = [
                        str(hit) if isinstance(hit, Exception) else hits([hit])[0]
                        for hit in served.answers(asked, found, k)
                    ]
                    theirs = [
                        str(hit) if isinstance(hit, Exception) else hits([hit])[0] for hit in whole.search(asked, k)
                    ]
                    assert mine == theirs
            finally:
                served.close()
    finally:
        whole.close()


@needs("datasets")
@pytest.mark.parametrize("shards", [1, 3, 4])
def test_a_saved_dataset_is_built_in_runs_of_rows_as_the_one_process_reader_reads_it(tmp_path, shards):
    """A `datasets` save_to_disk folder without --merged: each shard reads its own run of rows from the Arrow files;
    the shards answer as the one index, and its bad rows are named by their rows as the one-process build names
    them."""
    import datasets

    rows = [{"id": f"d{i:02d}", "title": "", "text": " ".join(WORDS[i % 9 : i % 9 + 1 + i % 4])} for i in range(30)]
    rows[7]["id"] = rows[22]["id"] = ""  # bad rows, in two shards
    saved = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(saved))
    one = build_index(saved, tmp_path / "one", "lucene_bm25", {}, progress=False, registry=installed_registry())
    built = build_shards(saved, tmp_path / "built", "lucene_bm25", {}, shards, registry=installed_registry())
    assert shard_search(tmp_path / "built", shards, QUERIES, 7) == whole_search(tmp_path / "one", QUERIES, 7)
    assert (built.manifest.doc_count, built.manifest.bad_records) == (one.doc_count, one.bad_records) == (28, 2)
    assert [str(error) for error in built.manifest.errors] == [str(error) for error in one.errors]
