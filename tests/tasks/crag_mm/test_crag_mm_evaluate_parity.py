"""`ragbench score` of upstream's file of turns against `local_evaluation.py --mode evaluate` itself
(facebookresearch/CRAG-MM at 36b6b4b, run unchanged as a command; tests/data/parity/crag_mm_evaluate.json, its "how";
the turn files and the fake judge's replies: crag_mm_evaluate_cases.json). Both ask the same fake OpenAI judge
(tests/support/crag_mm_fake_judge.py) over HTTP: ragbench must send it the same requests, body for body and in the
same order (one example in flight, as upstream's one worker), and print the same figures.

The cases hold what evaluate mode does that a run over a hub copy does not: a session of SESSIONS_TO_SKIP scored, an
answer longer than 75 tokens judged whole (one saying "I don't know" after its 74th token is missing), the turns
judged in the file's order (a multi-turn file written turn by turn across conversations); and the judge's retries: a
reply without choices asked 3 times, an HTTP 500 9 times (3 attempts of the SDK's 3 tries), one 500 then a verdict
twice."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA, write_jsonl
from ragbench.tasks.crag_mm.metrics import CragMMEval
from support.crag_mm_fake_judge import fake_judge
from support.helpers import cli_here, samples

FIXTURE = json.loads((TEST_DATA / "parity" / "crag_mm_evaluate.json").read_text(encoding="utf-8"))
CASES = json.loads((TEST_DATA / "parity" / "crag_mm_evaluate_cases.json").read_text(encoding="utf-8"))
TASKS = {"single": "crag_mm_single", "multi": "crag_mm_multi", "crash": "crag_mm_single"}
PRINTED = {  # display_results' rows: the figure each prints, and its format
    "Exact matches": ("correct_exact", "{}"),
    '"I don\'t know" responses': ("miss", "{}"),
    "Hallucinated responses": ("hallucination", "{}"),
    "Exact accuracy": ("exact_match", "{:.2%}"),
    "Accuracy": ("accuracy", "{:.2%}"),
    "Missing rate": ("missing", "{:.2%}"),
    "Hallucination rate": ("hallucination_rate", "{:.2%}"),
    "Truthfulness score": ("truthfulness_score", "{:.4f}"),
    "Avg MT conversation score": ("mean_multi_turn_conversation_score", "{:.2f}"),
}


@pytest.fixture(autouse=True)
def no_waits(monkeypatch):
    """LLMJudge's 1 s and 2 s between attempts change when requests go, not which."""
    monkeypatch.setattr(CragMMEval, "judge_waits", (0.0, 0.0), raising=False)


def score_file(tmp_path, name: str, *options: str):
    """`ragbench score` of the set's turn file (its data and its predictions) with the fake judge: the command's
    outcome, the requests the judge got, the results and the samples."""
    path = write_jsonl(tmp_path / f"{name}.jsonl", [{k: v for k, v in r.items() if k != "judge"} for r in CASES[name]])
    plan = {row["agent_response"]: row["judge"] for row in CASES[name] if row["judge"] is not None}
    out = tmp_path / "out"
    with fake_judge(plan) as judge:
        result = cli_here(
            "score",
            "--task",
            TASKS[name],
            "--data",
            str(path),
            "--predictions",
            str(path),
            "--judge",
            "openai:gpt-4o",
            "--judge-arg",
            f"0.base_url={judge.base_url}",
            "--judge-arg",
            "0.backoff_base=0",
            "--max-inflight",
            "1",
            "--output",
            str(out),
            "--no-progress",
            *options,
        )
        requests = list(judge.requests)
    assert result.returncode == 0, result.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return requests, results, samples(out, TASKS[name])


def table(results: dict, task: str, ego: bool) -> dict[str, float]:
    """Upstream's score dictionary from ragbench's figures (results.json): the means (of the ego slice for the ego
    table), times the turns for the counts."""
    details, whole = results["details"][task], results["results"][task]

    def figure(key: str) -> tuple[float, int]:
        entry = details[key]["slices"]["image_source"]["ego"] if ego else details[key]
        return entry["value"], entry["n"]

    prefix = "ego_" if ego else ""
    total = figure("accuracy")[1]
    means = {
        "exact_match": figure("exact_match")[0],
        "accuracy": figure("accuracy")[0],
        "missing": figure("missing")[0],
        "hallucination_rate": figure("hallucination")[0],
        "truthfulness_score": whole[f"{prefix}truthfulness_score"],
        "mean_multi_turn_conversation_score": whole[f"{prefix}multi_turn_score"],
    }
    counts = {
        "correct_exact": "exact_match",
        "correct": "accuracy",
        "miss": "missing",
        "hallucination": "hallucination",
    }
    return {"total": float(total), **means, **{k: float(round(figure(v)[0] * total)) for k, v in counts.items()}}


@pytest.mark.parametrize(("name", "options"), [("single", ()), ("multi", ()), ("multi", ("--task-arg", "history=own"))])
def test_score_of_an_upstream_file_sends_evaluate_modes_requests_in_its_order(tmp_path, name, options):
    requests, _, _ = score_file(tmp_path, name, *options)
    assert requests == FIXTURE[name]["requests"]


@pytest.mark.parametrize("name", ["single", "multi"])
def test_score_of_an_upstream_file_gives_evaluate_modes_figures(tmp_path, name):
    _, results, records = score_file(tmp_path, name)
    task, upstream = TASKS[name], FIXTURE[name]
    for which, ego in (("all", False), ("ego", True)):
        ours, theirs = table(results, task, ego), upstream["scores"][which]
        assert set(ours) == set(theirs)
        for key, value in theirs.items():
            assert ours[key] == pytest.approx(value, abs=1e-12), (which, key)
    printed = iter(upstream["printed"])
    for which, ego in (("all", False), ("ego", True)):
        ours = table(results, task, ego)
        kept = [r for r in records if not ego or r["meta"]["image_source"] == "ego"]
        expected = {
            "Total conversations": str(len({r["meta"]["session_id"] for r in kept})),
            "Total turns": str(len(kept)),
        }
        expected |= {label: form.format(ours[key]) for label, (key, form) in PRINTED.items()}
        for _ in expected:
            label, value = next(printed)
            assert expected[label] == value, (which, label)
    by_id = {r["id"]: r["scores"] for r in records}
    for turn in upstream["per_turn"]:
        scores = by_id[turn["interaction_id"]]
        assert (scores["accuracy"], scores["missing"], scores["exact_match"]) == (
            float(turn["is_correct"]),
            float(turn["is_miss"]),
            float(turn["is_exact_match"]),
        ), turn["interaction_id"]


def test_every_line_is_scored_skipped_sessions_too_and_no_answer_is_cut(tmp_path):
    _, results, records = score_file(tmp_path, "single")
    assert len(records) == len(CASES["single"]) == results["counts"]["crag_mm_single"]["scored"]
    assert {r["id"] for r in records} == {r["interaction_id"] for r in CASES["single"]}
    long = next(r for r in records if r["id"] == "st03-t0")  # "I don't know" after its 74th token: missing
    assert long["prediction"]["answer"] == CASES["single"][3]["agent_response"]
    assert long["scores"]["missing"] == 1.0 and not long.get("judge_trace")


def test_a_reply_neither_rule_reads_where_evaluate_mode_crashes_is_wrong_and_counted(tmp_path):
    requests, results, records = score_file(tmp_path, "crash")
    assert FIXTURE["crash"]["error"] == "TypeError: bad operand type for unary ~: 'NoneType'"
    assert requests == FIXTURE["crash"]["requests"]
    unread = next(r for r in records if r["id"] == "sc2-t0")
    assert unread["scores"]["hallucination"] == 1.0 and unread["counted"] == {"crag_mm": {"judge_unparsed": 1}}


def test_a_judge_arg_sets_the_judges_retries_over_upstreams_client(tmp_path):
    requests, _, _ = score_file(tmp_path, "single", "--judge-arg", "0.max_retries=0")
    failing = [
        r
        for r in requests
        if r["messages"][1]["content"].endswith("Prediction: A Honda Civic.\nGive your output below:\n")
    ]
    assert len(failing) == 3  # LLMJudge's 3 attempts, each tried once (upstream's client: 9)
