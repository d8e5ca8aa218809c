"""`ragbench score` on CRAG predictions reproduces the upstream evaluators' numbers with
`--judge replay:FILE` holding the judge replies the upstream runs received."""

from __future__ import annotations

import json

import pytest

from conftest import write_jsonl
from support.crag_helpers import crag_record, llama2_tokenizer_dir, parity_fixture, replay_lines
from support.helpers import cli_here, samples


def score_upstream_rows(tmp_path, protocol, labels=None, judges=1):
    fixture = parity_fixture(protocol)
    rows = fixture["rows"]
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            crag_record(
                i,
                interaction_id=row["id"],
                query=row["query"],
                answer=row["answer"],
                alt_ans=row["alt_ans"],
                split=1,
                domain=("movie", "finance", "music")[i % 3],
                popularity=("head", "tail", "")[i % 3],
            )
            for i, row in enumerate(rows)
        ],
    )
    predictions = write_jsonl(
        tmp_path / "predictions.jsonl",
        [
            {"id": row["id"], "output": row["prediction"], **({"label": labels[i]} if labels else {})}
            for i, row in enumerate(rows)
        ],
    )
    calls = write_jsonl(tmp_path / "judge_calls.jsonl", replay_lines(fixture))
    result = cli_here(
        "score",
        "--task",
        "crag_t1",
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        *(["--judge", f"replay:{calls}"] * judges),
        "--task-arg",
        f"tokenizer={llama2_tokenizer_dir()}",
        "--task-arg",
        f"judge_protocol={protocol}",
        "--output",
        str(tmp_path / "out"),
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    return fixture, json.loads((tmp_path / "out" / "results.json").read_text())


@pytest.mark.parametrize("protocol", ["kddcup2024", "crag_repo"])
def test_score_with_replayed_judge_reproduces_upstream_numbers(tmp_path, protocol):
    fixture, results = score_upstream_rows(tmp_path, protocol)
    ours = results["results"]["crag_t1"]
    for key in ("accuracy", "hallucination", "missing", "score"):
        assert ours[key] == pytest.approx(fixture["aggregate"][key], abs=1e-12), key
    if protocol == "kddcup2024":
        assert ours["exact_accuracy"] == pytest.approx(fixture["aggregate"]["exact_accuracy"], abs=1e-12)
    records = samples(tmp_path / "out", "crag_t1")
    judged = [r for r in records if r.get("judge_trace")]
    assert len(judged) == sum(1 for row in fixture["per_row"] if row["n_judge_attempts"])
    first = judged[0]["judge_trace"][0]
    assert first["kind"] == "llm" and first["request"]["messages"][0]["content"] == fixture["judge_calls"]["system"]
    failed = next(r for r in records if r["id"] == "judge_connection_failure")
    assert failed["scores"]["hallucination"] == 1.0 and "replayed error" in failed["judge_trace"][0]["error"]


def test_two_replayed_judges_average_to_the_same_numbers(tmp_path):
    fixture, results = score_upstream_rows(tmp_path, "kddcup2024", judges=2)
    assert results["results"]["crag_t1"]["score"] == pytest.approx(fixture["aggregate"]["score"], abs=1e-12)


def test_human_labels_in_the_predictions_file_give_score_h(tmp_path):
    n = len(parity_fixture("kddcup2024")["rows"])
    labels = (["perfect", "acceptable", "missing", "incorrect"] * n)[:n]
    _, results = score_upstream_rows(tmp_path, "kddcup2024", labels=labels)
    expected = sum({"perfect": 1, "acceptable": 0.5, "missing": 0, "incorrect": -1}[label] for label in labels) / n
    assert results["results"]["crag_t1"]["score_h"] == pytest.approx(expected)


def test_report_breaks_results_down_by_slice_with_a_bar_chart_per_dimension(tmp_path):
    _, results = score_upstream_rows(tmp_path, "kddcup2024")
    finance = results["details"]["crag_t1"]["score"]["slices"]["domain"]["finance"]
    assert finance["n"] == 12 and finance["ci95"] is not None
    assert set(results["details"]["crag_t1"]["score"]["slices"]["popularity"]) == {"head", "tail", "none"}
    report = (tmp_path / "out" / "report.md").read_text()
    assert "### crag_t1 by question_type" in report and "| finance | 12 |" in report
    for field in ("domain", "question_type", "static_or_dynamic", "popularity"):
        assert f"![crag_t1 by {field}](plots/crag_t1__{field}.png)" in report
        assert (tmp_path / "out" / "plots" / f"crag_t1__{field}.png").read_bytes()[:4] == b"\x89PNG"


UNPARSED = {
    "kddcup2024": [
        "judge_empty_reply",
        "judge_last_block_wins",
        "judge_prose_around_json",
        "judge_python_style",
    ],  # not one JSON object after lower-casing
    "crag_repo": ["judge_empty_reply", "judge_python_style", "judge_score_as_string"],
}  # no "score": digits


@pytest.mark.parametrize("protocol", ["kddcup2024", "crag_repo"])
def test_judge_replies_that_do_not_parse_are_counted_not_only_folded_into_hallucination(tmp_path, protocol):
    fixture, results = score_upstream_rows(tmp_path, protocol)
    records = {r["id"]: r for r in samples(tmp_path / "out", "crag_t1")}
    unparsed = sorted(i for i, r in records.items() if r.get("counted"))
    assert unparsed == UNPARSED[protocol]
    assert all(records[i]["scores"]["hallucination"] == 1.0 for i in unparsed)  # upstream's rule, kept
    metric = "crag" if protocol == "kddcup2024" else "crag_repo"
    entry = results["counted"]["crag_t1"][metric]["judge_unparsed"]
    assert entry["count"] == entry["examples"] == len(UNPARSED[protocol])
    report = (tmp_path / "out" / "report.md").read_text()
    assert (
        f"crag_t1: {metric}: {len(UNPARSED[protocol])} judge replies that did not parse, scored not accurate "
        "(a hallucination) as upstream does (judge_unparsed, in"
    ) in report
