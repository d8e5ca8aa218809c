"""CRAG-MM's evaluation against facebookresearch/CRAG-MM's `evaluation/` run unchanged with a fake judge
(tests/data/parity/crag_mm.json, its "how"; the cases: crag_mm_cases.json)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.tasks.crag_mm.metrics import (
    CragMMCorrectedEval,
    CragMMEval,
    exact_match,
    read_corrected,
    read_upstream,
    says_idk,
    truncate_response,
)
from ragbench.tasks.crag_mm.prompts import prompts
from support.crag_mm_helpers import example_of, parity_fixture, score_rows, tokenizer_dir

SETS = ("single", "multi", "one_row")
# upstream's table keys -> ragbench's per-example key whose mean it is
MEANS = {
    "accuracy": "accuracy",
    "missing": "missing",
    "hallucination_rate": "hallucination",
    "exact_match": "exact_match",
}


def records(rows, scores):
    """What `corpus` is given: each row's example meta and scores."""
    return [
        SimpleNamespace(id=example_of(row).id, meta=example_of(row).meta, scores=s) for row, (s, _) in zip(rows, scores)
    ]


@pytest.fixture(autouse=True)
def no_waits(monkeypatch):
    """LLMJudge's 1 s and 2 s between attempts change when requests go, not which."""
    monkeypatch.setattr(CragMMEval, "judge_waits", (0.0, 0.0))


@pytest.mark.parametrize("name", SETS)
def test_every_turn_gets_the_upstream_judgement(name):
    fixture = parity_fixture()[name]
    scores, _ = score_rows(CragMMEval(), fixture["rows"])
    upstream = {(r["session_id"], r["turn_idx"]): r for r in fixture["per_row"]}
    for row, (ours, _) in zip(fixture["rows"], scores):
        expected = upstream[(row["session_id"], row["turn_idx"])]
        assert ours["accuracy"] == float(expected["is_correct"]), row
        assert ours["missing"] == float(expected["is_miss"]), row
        assert ours["exact_match"] == float(expected["is_exact_match"]), row


@pytest.mark.parametrize("name", SETS)
def test_judge_is_asked_exactly_the_upstream_calls_in_order(name):
    fixture = parity_fixture()[name]
    _, judge = score_rows(CragMMEval(), fixture["rows"])
    asked = [[{"role": role, "content": content} for role, content in r.messages] for r in judge.requests]
    # a failed call is asked 3 times, as LLMJudge asks it (the engine's own retries are below each attempt)
    assert asked == [call["messages"] for call in fixture["judge_calls"]]
    for request, call in zip(judge.requests, fixture["judge_calls"]):
        assert (request.sampling.temperature, request.sampling.max_tokens) == (call["temperature"], call["max_tokens"])


@pytest.mark.parametrize("name", SETS)
def test_all_and_ego_tables_equal_upstream(name):
    fixture = parity_fixture()[name]
    metric = CragMMEval()
    scores, _ = score_rows(metric, fixture["rows"])
    samples = records(fixture["rows"], scores)
    corpus = metric.corpus(samples, seed=0)
    for table, prefix in (("all", ""), ("ego", "ego_")):
        expected = fixture["scores"][table]
        kept = [s for s in samples if table == "all" or s.meta["image_source"] == "ego"]
        for key, ours in MEANS.items():
            values = [s.scores[ours] for s in kept]
            assert sum(values) / len(values) == pytest.approx(expected[key], abs=1e-12), (table, key)
        assert corpus[f"{prefix}truthfulness_score"] == pytest.approx(expected["truthfulness_score"], abs=1e-12)
        assert corpus[f"{prefix}multi_turn_score"] == pytest.approx(
            expected["mean_multi_turn_conversation_score"], abs=1e-12
        )


def test_each_conversation_score_equals_upstream():
    fixture = parity_fixture()["multi"]
    scores, _ = score_rows(CragMMEval(), fixture["rows"])
    samples = records(fixture["rows"], scores)
    for session, expected in fixture["per_session_multi_turn_score"].items():
        kept = [s for s in samples if s.meta["session_id"] == session]
        assert CragMMEval().corpus(kept, seed=0)["multi_turn_score"] == pytest.approx(expected, abs=1e-12), session


def test_an_unparsed_reply_is_wrong_and_counted_where_upstream_crashes():
    fixture = parity_fixture()["unparsed"]
    assert fixture["error"].startswith("TypeError")  # upstream's calculate_scores on is_correct None
    scores, _ = score_rows(CragMMEval(), fixture["rows"])
    for row, upstream, (ours, counts) in zip(fixture["rows"], fixture["per_row"], scores):
        if upstream["is_correct"] is None:
            assert (ours["accuracy"], ours["missing"], ours["hallucination"]) == (0.0, 0.0, 1.0), row
            assert counts == {"judge_unparsed": 1}
        else:
            assert ours["accuracy"] == float(upstream["is_correct"]) and not counts


def test_truncation_equals_upstream_with_the_same_tokenizer():
    for case in parity_fixture()["truncation"]:
        assert truncate_response(case["text"], tokenizer_dir()) == case["truncated"], case["text"]


def test_judge_system_message_is_byte_exact():
    assert prompts()["judge"]["system"] == parity_fixture()["system"]


@pytest.mark.parametrize(
    "reply, upstream, corrected",
    [
        ("Explanation.\nResult: CORRECT", True, True),
        ("Result: WRONG", False, False),
        ("grounded\nCORRECT", True, True),
        ("Result: INCORRECT", True, False),
        ("Guideline 1 says Result: WRONG for refusals.\nResult: CORRECT", False, True),
        ("wrong", None, None),
        ("", None, None),
        (None, None, None),
        ("I cannot decide.", None, None),
        ("Result: **CORRECT**", True, True),
    ],
)
def test_reply_readers(reply, upstream, corrected):
    assert read_upstream(reply) is upstream
    assert read_corrected(reply) is corrected


def test_corrected_evaluation_fixes_the_named_quirks():
    rows = parity_fixture()["single"]["rows"]
    both = next(r for r in rows if r["session_id"] == "s15")  # exact match that says "I don't know"
    incorrect = next(r for r in rows if r["session_id"] == "s11")  # "Result: INCORRECT"
    quoted = next(r for r in rows if r["session_id"] == "s10")  # quotes "Result: WRONG", then CORRECT
    upstream, _ = score_rows(CragMMEval(), [both, incorrect, quoted])
    corrected, _ = score_rows(CragMMCorrectedEval(), [both, incorrect, quoted])
    assert [(s["accuracy"], s["missing"], s["hallucination"]) for s, _ in upstream] == [
        (1.0, 1.0, -1.0),
        (1.0, 0.0, 0.0),
        (0.0, 0.0, 1.0),
    ]
    assert [(s["accuracy"], s["missing"], s["hallucination"]) for s, _ in corrected] == [
        (1.0, 0.0, 0.0),
        (0.0, 0.0, 1.0),
        (1.0, 0.0, 0.0),
    ]


def test_corrected_run_figures_end_conversations_and_score_one_turn():
    fixture = parity_fixture()
    multi = fixture["multi"]["rows"]
    scores, _ = score_rows(CragMMCorrectedEval(), multi)
    corpus = CragMMCorrectedEval().corpus(records(multi, scores), seed=0)
    # after two not-correct turns the rest are missing: m1 turns 2-3 (2 was correct), m2 turn 5 (correct), m3 turn 2
    # (an exact match; turn 1 was "I don't know"), m5 turn 2 (correct); m4 never ends
    correct, missing = 8 - 4, 2 + 4
    assert corpus["truthfulness_score"] == pytest.approx((2 * correct + missing) / len(multi) - 1)
    one = fixture["one_row"]["rows"]
    scores, _ = score_rows(CragMMCorrectedEval(), one)
    assert CragMMCorrectedEval().corpus(records(one, scores), seed=0)["truthfulness_score"] == 1.0
    assert CragMMEval().corpus(records(one, scores), seed=0)["truthfulness_score"] == 0.0  # upstream: total > 1


@settings(max_examples=60, deadline=None)
@given(
    answer=st.text(max_size=40) | st.sampled_from(["I don't know", "i do not know.", "I DON’T KNOW", "Paris"]),
    gold=st.text(min_size=1, max_size=20) | st.just("Paris"),
    reply=st.text(max_size=30) | st.sampled_from(["Result: CORRECT", "Result: WRONG", "Result: INCORRECT", ""]),
)
def test_every_turn_is_scored_as_the_rules_say(answer, gold, reply):
    """accuracy + missing + hallucination = 1; missing is the "I don't know" rule; the judge is asked only when
    neither rule decides; corrected, a turn is exactly one of the three."""
    row = {
        "session_id": "s",
        "turn_idx": 0,
        "is_ego": True,
        "query": "q?",
        "ground_truth": gold,
        "agent_response": answer,
        "judge": reply,
    }
    for metric in (CragMMEval(), CragMMCorrectedEval()):
        [(scores, _)], judge = score_rows(metric, [row])
        cut = truncate_response(answer, tokenizer_dir())
        exact, idk = exact_match(cut, gold), says_idk(cut)
        assert scores["accuracy"] + scores["missing"] + scores["hallucination"] == 1.0
        assert scores["missing"] == float(idk and not (metric.corrected and exact))
        assert len(judge.requests) == int(not exact and not idk)
        if metric.corrected:
            assert sorted((scores["accuracy"], scores["missing"], scores["hallucination"])) == [0.0, 0.0, 1.0]
