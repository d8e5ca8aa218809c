"""The `browsecomp_plus` task reads BrowseComp-Plus's released files (tests/data/browsecomp_plus/sample: fictional
content in a checkout's layout), and `ragbench score` re-scores a BrowseComp-Plus run folder through `recorded`
as evaluate_run.py scores it (tests/data/browsecomp_plus/parity/expected.json, the script's own output)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError
from ragbench.api.retrieval import read_corpus
from ragbench.tasks.browsecomp_plus.data import read_qrels
from ragbench.tasks.browsecomp_plus.task import BrowseCompPlusTask
from support.helpers import run, samples

SAMPLE = TEST_DATA / "browsecomp_plus" / "sample"
PARITY = TEST_DATA / "browsecomp_plus" / "parity"


def test_the_checkout_layout_reads_answers_and_both_qrels():
    examples = list(BrowseCompPlusTask(SAMPLE).examples())
    assert [e.id for e in examples] == ["11", "12", "13"]
    first = examples[0]
    assert first.gold == {
        "answers": ["Brisk Astronomical Society"],
        "evidence_docids": ["101", "102", "103"],
        "gold_docids": ["103"],
    }
    assert first.question.startswith("A lighthouse keeper")


def test_the_qrels_files_decide_over_the_queries_doc_lists(tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(SAMPLE, checkout)
    (checkout / "topics-qrels" / "qrel_golds.txt").write_text("11 Q0 102 1\n11 Q0 102 1\n")
    gold = {e.id: e.gold["gold_docids"] for e in BrowseCompPlusTask(checkout).examples()}
    assert gold == {"11": ["102"], "12": [], "13": []}


def test_the_decrypted_file_alone_reads_the_doc_lists():
    examples = list(BrowseCompPlusTask(SAMPLE / "data" / "browsecomp_plus_decrypted.jsonl").examples())
    assert examples[1].gold["evidence_docids"] == ["204", "205"]
    assert examples[1].gold["gold_docids"] == ["205"]


def test_a_line_without_its_answer_is_a_counted_bad_record(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"query_id": "1", "query": "q"}\n{"query_id": "2", "query": "q", "answer": "a"}\n')
    first, second = BrowseCompPlusTask(path).examples()
    assert "answer" in str(first)
    assert second.id == "2"


def test_a_qrels_line_not_of_four_fields_is_refused(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 Q0 5 1\n1 5 1\n")
    with pytest.raises(ConfigError, match=":2: expected 4 fields"):
        read_qrels(path)
    # lines end where a text file's do (evaluate_run.py reads the file line by line): a form feed or U+2028 in a
    # line is white space between its fields, not a line break
    path.write_text("1 Q0 5\f1\n\n2 Q0\u20286 1\n3 Q0 7\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"qrels.txt:4: expected 4 fields \(query_id Q0 docid relevance\), got 3$"):
        read_qrels(path)
    path.write_text("1 Q0 5\f1\n\n2 Q0\u20286 1\n", encoding="utf-8")
    assert read_qrels(path) == {"1": ["5"], "2": ["6"]}


def test_the_corpus_jsonl_is_a_retrieval_corpus_with_its_docids():
    docs = list(read_corpus(SAMPLE / "corpus.jsonl"))
    assert [doc.id for doc in docs] == ["101", "102", "103", "204", "205", "206", "307", "308"]
    assert (docs[0].url, docs[0].text) == (
        "https://example.org/varnholm-lighthouse",
        "The lighthouse keeper of Varnholm, Edda Brisk, logged a comet sighting in 1911.",
    )


def run_folder(tmp_path: Path) -> Path:
    """parity/runs.jsonl as the run folder evaluate_run.py was given: one JSON file per query."""
    folder = tmp_path / "runs" / "fake"
    folder.mkdir(parents=True)
    for line in (PARITY / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        (folder / f"run_{record['query_id']}.json").write_text(line, encoding="utf-8")
    return folder


def test_a_published_run_folder_is_rescored_as_evaluate_run_scores_it(tmp_path):
    results = run(
        tmp_path,
        tasks=["browsecomp_plus"],
        data={"browsecomp_plus": str(PARITY)},
        system="recorded",
        system_args={"path": str(run_folder(tmp_path))},
        judges=["scripted:support.browsecomp_plus_fake_judge:reply"],
    )
    summary = json.loads((PARITY / "expected.json").read_text())["summary"]
    values = results["results"]["browsecomp_plus"]
    assert round(values["accuracy"] * 100, 2) == summary["Accuracy (%)"]
    assert round(values["calibration_error"], 2) == summary["Calibration Error (%)"]
    assert round(values["search_calls"], 6) == round(summary["avg_tool_stats"]["search"], 6)
    scored = samples(tmp_path / "run", "browsecomp_plus")
    assert len(scored) == 320
    recall = sum(s["scores"]["evidence_recall"] for s in scored) / len(scored)
    assert round(recall * 100, 2) == summary["Recall (%)"]


JUDGE_FREE = ("evidence_recall", "gold_recall", "search_calls", "get_document_calls")


def test_a_judge_that_fails_on_every_example_keeps_the_judge_free_figures_and_gives_no_calibration_error(tmp_path):
    def scored(name: str, judge: str) -> dict:
        return run(
            tmp_path,
            name,
            tasks=["browsecomp_plus"],
            data={"browsecomp_plus": str(PARITY)},
            system="recorded",
            system_args={"path": str(run_folder(tmp_path / name))},
            judges=[f"scripted:support.browsecomp_plus_fake_judge:{judge}"],
            limit=40,
        )

    judged, failed = scored("judged", "reply"), scored("failed", "down")
    values, details = failed["results"]["browsecomp_plus"], failed["details"]["browsecomp_plus"]
    judged_values = judged["results"]["browsecomp_plus"]
    assert {key: values[key] for key in JUDGE_FREE} == {key: judged_values[key] for key in JUDGE_FREE}
    assert all(details[key]["n"] == 40 and details[key]["n_errors"] == 0 for key in JUDGE_FREE)
    assert values["calibration_error"] is None and details["calibration_error"]["n"] == 0  # not 0.0 over nothing
    judge_failures = details["accuracy"]["n_errors"]  # every example the judge was asked about
    assert judge_failures > 0 and details["calibration_error"]["n_errors"] == judge_failures
    assert not failed["complete"]  # the judge's failures are counted: --resume scores them again


def test_a_reader_is_sent_the_benchmarks_oracle_prompt_over_the_documents_it_shows():
    """search_agent/prompts.py's QUERY_TEMPLATE_ORACLE (97c637c), its trailing newline included; each document
    as [docid] text."""
    from ragbench.api import Document

    task = BrowseCompPlusTask(SAMPLE)
    example = next(iter(task.examples()))
    docs = [Document(id="102", title="", text="Varnholm is ..."), Document(id="101", title="", text="The keeper ...")]
    prompt = task.prompting.build_prompt(example, docs)
    assert prompt == (
        "\nI will give you a question and a set of evidence documents, which contains all the necessary information"
        " to answer the question. You need to reason and answer the question based on these evidence documents, step"
        f" by step.\n\nQuestion: {example.question}\n\nEvidence documents:\n[102] Varnholm is ...\n\n[101] The keeper"
        " ...\n\nYour final answer should be in the following format:\nExact Answer: {your succinct, final answer}\n"
    )
