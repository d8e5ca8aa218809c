"""The reproduction row of Anserini's BM25 on TREC RAG 2024 (MS MARCO V2.1 segmented, the test topics, UMBRELA's
qrels), and the same pipeline end to end on a sample in the track's formats (tests/data/trec_rag24_sample/NOTES.md):
`index build --retriever lucene_bm25` of the shards, `reproduce` over the index, its numbers those of trec_eval
(pytrec_eval) on the run's own run file and those of Anserini's own run on the sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragbench.testing import installed_registry
from support import paths
from support.helpers import cli_here

SAMPLE = paths.DATA / "trec_rag24_sample"
CORPUS = SAMPLE / "msmarco_v2.1_doc_segmented"
TOPICS, QRELS = SAMPLE / "topics.rag24.test.txt", SAMPLE / "qrels.rag24.test-umbrela-all.txt"
ANSERINI_RUN = SAMPLE / "run.anserini.bm25-default.txt"
ROW = "anserini.rag24-test-umbrela.bm25"
MEASURES = {"ndcg_cut.20": "ndcg_cut_20", "ndcg_cut.100": "ndcg_cut_100", "recall.100": "recall_100"}
# trec_eval -c of Anserini's own run on the sample (NOTES.md)
ANSERINI_ON_SAMPLE = {
    "ndcg_cut_20": 0.46040503197760513,
    "ndcg_cut_100": 0.6093737613050035,
    "recall_100": 0.8800204425204425,
}


def trec_eval_c(run_file: Path) -> dict[str, float]:
    """`trec_eval -c -m ndcg_cut.20 -m ndcg_cut.100 -m recall.100 QRELS RUN` by pytrec_eval: each measure's mean
    over the qrels' topics, a topic the run lacks counted 0."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with open(QRELS) as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    with open(run_file) as handle:
        run = pytrec_eval.parse_run(handle)
    per_topic = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)
    return {
        key: sum(per_topic.get(topic, {}).get(key, 0.0) for topic in qrels) / len(qrels) for key in MEASURES.values()
    }


def top_100(run_file: Path) -> dict[str, list[tuple[str, str]]]:
    """Each topic's first 100 (docid, score to 4 decimals) in rank order."""
    ranked: dict[str, list[tuple[int, str, str]]] = {}
    for line in run_file.read_text().splitlines():
        topic, _, docid, rank, score, _ = line.split()
        ranked.setdefault(topic, []).append((int(rank), docid, f"{float(score):.4f}"))
    return {topic: [(docid, score) for _, docid, score in sorted(rows)[:100]] for topic, rows in ranked.items()}


def test_the_row_is_anserini_s_bm25_with_its_numbers_as_published():
    """The row's manifest as the catalogue holds it (`Registry.reproductions`)."""
    item = installed_registry().reproductions[ROW]
    assert item.get("status", "runnable") == "runnable" and item["paper"] == "Anserini"
    assert [(cell["metric"], cell["scale"], cell["paper"]) for cell in item["cells"]] == [
        ("ndcg_cut_20", 100, 31.98),
        ("ndcg_cut_100", 100, 25.63),
        ("recall_100", 100, 13.95),
    ]
    assert item["run"]["retriever"] == "lucene_bm25"
    assert {item["run"]["retriever_args"][k] for k in ("k1", "b")} == {0.9, 0.4}  # Anserini's -bm25
    assert item["run"]["system_args"] == {"top_n": 100}  # R@100 and nDCG@100 read 100 ranks


def test_the_listing_names_what_the_row_lacks_here():
    line = next(row for row in cli_here("reproduce", "--list").stdout.splitlines() if row.startswith(ROW))
    assert line.endswith(
        "needs: retriever index indexes/msmarco-v2.1-doc-segmented.lucene_bm25, "
        "trec_rag24: topics file topics.rag24.test.txt not found"
    )  # the echo reader is no file; the task is checked with its scoped options and --data


def reproduction(run_dir: Path) -> dict:
    return json.loads((run_dir / "results.json").read_text())["reproduction"]


def test_the_row_runs_end_to_end_on_the_sample_as_anserini_scores_it(tmp_path):
    """The qrels path is the user's, no substitution; another task option is one (a run of one topic is enough to
    say so)."""
    index, run_dir = tmp_path / "rag24_lucene", tmp_path / "run"
    built = cli_here("index", "build", "--corpus", str(CORPUS), "--retriever", "lucene_bm25", "--out", str(index))
    assert built.returncode == 0, built.stderr
    result = cli_here(
        "reproduce", ROW, "--data", f"trec_rag24={TOPICS}", "--task-arg", f"trec_rag24.qrels={QRELS}",
        "--retriever-arg", f"index={index}", "--output", str(run_dir), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "**full reproduction run**" in result.stdout  # the user's paths are no substitution
    assert reproduction(run_dir)["substituted"] == []
    other = cli_here(
        "reproduce", ROW, "--data", f"trec_rag24={TOPICS}", "--task-arg", f"trec_rag24.qrels={QRELS}",
        "--task-arg", "trec_rag24.missing_topics=failed", "--limit", "1",
        "--retriever-arg", f"index={index}", "--output", str(tmp_path / "other"), "--no-progress",
    )  # fmt: skip
    assert other.returncode == 0, other.stdout + other.stderr
    assert "NOT a reproduction: task_args differ" in other.stdout
    assert reproduction(tmp_path / "other")["substituted"] == ["task_args"]
    exported = cli_here("export", "trec", str(run_dir), "--output", str(tmp_path / "run.trec"))
    assert exported.returncode == 0, exported.stderr
    ours = trec_eval_c(tmp_path / "run.trec")
    cells = reproduction(run_dir)["cells"]
    assert {cell["metric"]: cell["ours"] for cell in cells} == {key: value * 100 for key, value in ours.items()}
    assert ours == pytest.approx(ANSERINI_ON_SAMPLE, abs=1e-12)
    assert pytest.approx(trec_eval_c(ANSERINI_RUN), abs=1e-12) == ANSERINI_ON_SAMPLE
    anserini = top_100(ANSERINI_RUN)
    del anserini["2024-158743"]  # judged by no qrels line: no example of the run
    assert top_100(tmp_path / "run.trec") == anserini  # the same segments in the same order, the same scores


def test_an_index_of_the_shards_built_as_title_and_segment_is_refused_in_one_line(tmp_path):
    """An index ragbench built before a segment was indexed as Anserini's (its manifest without `segment_text`)
    would rank otherwise than Anserini's: a run over it ends in one line saying how to build it again, before any
    search (through shards too: tests/retrieval/test_lucene_bm25.py)."""
    index = tmp_path / "old_lucene"
    assert (
        cli_here(
            "index", "build", "--corpus", str(CORPUS), "--retriever", "lucene_bm25", "--out", str(index)
        ).returncode
        == 0
    )
    manifest = json.loads((index / "manifest.json").read_text())
    del manifest["options"]["segment_text"]
    (index / "manifest.json").write_text(json.dumps(manifest))
    result = cli_here(
        "reproduce", ROW, "--data", f"trec_rag24={TOPICS}", "--task-arg", f"trec_rag24.qrels={QRELS}",
        "--retriever-arg", f"index={index}", "--output", str(tmp_path / "run"), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "indexes each segment of MS MARCO V2.1 as its title and segment, not as Anserini does" in result.stderr
    assert f"ragbench index build --corpus {CORPUS.resolve()} --retriever lucene_bm25 --out {index}" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "run" / "results.json").exists()
