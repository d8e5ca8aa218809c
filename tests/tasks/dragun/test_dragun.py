"""The `dragun_report` task and `dragun_autojudge` metric against DRAGUN's released AutoJudge and scoring script
run unchanged on the same fake OpenAI-compatible judge (tests/data/parity/dragun/dragun_calls.json, recorded by
record_dragun.py there, on sample data written for ragbench, tests/data/dragun): the same request bodies, the
same per-topic and per-run scores; score.py's arithmetic on assessments worked out by hand; a report system's run
end to end offline at the track's 250 words, exported as the track's run file and scored again as submitted."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import Example, Prediction
from ragbench.metrics.dragun_autojudge.metric import KEYS, DragunAutoJudge
from ragbench.metrics.dragun_autojudge.scoring import topic_scores
from ragbench.tasks.dragun.task import DragunReport
from ragbench.testing import ScriptedLLM, build_index, installed_registry, make_context
from support.dragun_fake_judge import fake_judge
from support.helpers import cli_here, samples, score_args

DATA = TEST_DATA / "dragun" / "data"
RUNS = DATA / "runs" / "report_generation_runs"
RECORDING = json.loads((TEST_DATA / "parity" / "dragun" / "dragun_calls.json").read_text(encoding="utf-8"))
JUDGE = "openai:openai/gpt-oss-120b"  # auto_judge.py's MODEL


@pytest.fixture
def judge():
    fake = fake_judge()
    yield fake
    fake.stop()


def judge_args(fake) -> tuple[str, ...]:
    return ("--judge", JUDGE, "--judge-arg", f"0.base_url={fake.base_url}")


def bodies(requests: list[dict]) -> list[str]:
    return sorted(json.dumps({"path": r["path"], "body": r["body"]}, sort_keys=True) for r in requests)


def score_run(tmp_path: Path, fake, predictions: Path = RUNS, *extra: str) -> tuple[Path, dict]:
    out = tmp_path / "scored"
    done = cli_here(*score_args("dragun_report", DATA, predictions), *judge_args(fake), "--output", str(out), *extra)
    assert done.returncode == 0, done.stderr
    return out, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_requests_and_scores_equal_the_released_autojudge_and_score_py(tmp_path, judge):
    out, results = score_run(tmp_path, judge)
    # every body field for field, the ints temperature 0 and top_p 1 as sent
    assert bodies(judge.requests) == bodies(RECORDING["requests"]) and len(judge.requests) == 2
    per_topic = {row["topic_id"]: row for row in RECORDING["per_topic"]}
    scored = {line["id"]: line["scores"] for line in samples(out, "dragun_report")}
    assert scored == {
        topic: {
            "dragun_supportive": float(row["supportive_score"]),
            "dragun_contradictory": float(row["contradictory_score"]),
        }
        for topic, row in per_topic.items()
    }
    (per_run,) = RECORDING["per_run"]
    headline = results["results"]["dragun_report"]
    assert headline["dragun_supportive"] == pytest.approx(float(per_run["supportive_score"]), rel=1e-15)
    assert headline["dragun_contradictory"] == pytest.approx(float(per_run["contradictory_score"]), rel=1e-15)


TIED = "msmarco_v2.1_doc_91_2000002"  # its answer ids share trailing numbers (q1-a1, q2-a1, ...), in no sorted order


def recorded_order(topic: str) -> list[list[str]]:
    """The answer ids of each few-shot example's assessments in the prompt auto_judge.py sent for `topic`."""
    [content] = [
        r["body"]["messages"][1]["content"]
        for r in RECORDING["requests"]
        if f'"docid": "{topic}"' in r["body"]["messages"][1]["content"]
    ]
    shown = content.split("Below are example reports and their assessments:")[1].split("Below is the report")[0]
    return [list(json.loads(part)["assessments"]) for part in re.findall(r"Example \d+:\n\n(\{.*?\n\})", shown, re.S)]


def few_shot_order(topic: str, **task_args: str) -> list[list[str]]:
    [example] = [e for e in DragunReport(DATA, **task_args).examples() if isinstance(e, Example) and e.id == topic]
    return [list(shot["assessments"]) for shot in example.gold["autojudge_examples"]]


def test_the_few_shot_assessments_are_in_auto_judge_s_order_and_in_file_order_as_a_named_variant():
    upstream = recorded_order(TIED)  # pandas' default (unstable) sort, as this machine's numpy sorts int64
    assert all([int(a[-1]) for a in shot] == sorted(int(a[-1]) for a in shot) for shot in upstream)
    assert few_shot_order(TIED) == upstream
    file_order = few_shot_order(TIED, assessment_order="file_order")  # the ties as the CSV lists them
    assert file_order == [["q1-a1", "q2-a1", "q3-a1", "q1-a2", "q2-a2"], ["q2-a1", "q1-a1", "q3-a1", "q1-a2", "q2-a2"]]
    assert file_order != upstream  # the sample's ties are where the two orders part
    assert few_shot_order("msmarco_v2.1_doc_90_1000001") == recorded_order("msmarco_v2.1_doc_90_1000001")


def test_repeats_agreement_ppi_and_cost_of_the_judged_numbers(tmp_path, judge):
    labels = tmp_path / "labels.jsonl"
    labelled = RECORDING["per_topic"][0]["topic_id"]  # one topic labelled, one not: PPI has both
    labels.write_text(
        json.dumps({"id": labelled, "metric": "dragun_supportive", "label": 0.25}) + "\n", encoding="utf-8"
    )
    _, results = score_run(tmp_path, judge, RUNS, "--judge-repeats", "2", "--human-labels", str(labels))
    assert len(judge.requests) == 4 and set(bodies(judge.requests)) == set(bodies(RECORDING["requests"]))
    agreement = results["judge_agreement"]["dragun_report"]["dragun_supportive"]
    assert agreement["measured"] and agreement["percent_agreement"] == 1.0
    human = results["human_agreement"]["dragun_report"]["dragun_supportive"]
    assert human["n_labelled"] == 1 and human["n_unlabelled"] == 1 and human["ppi"] is not None
    cost = results["judge_cost"]["dragun_report"]["dragun_autojudge"]
    assert cost["calls"] == 4 and cost["model"] == JUDGE


def test_two_judges_each_alone_their_mean_and_agreement(tmp_path, judge):
    """Several --judge: AutoJudge asks each alone (the released request, to each server) and the report's scores
    are their mean; --judge-repeats 1 compares them (judge agreement)."""
    other = fake_judge()
    try:
        two = ("--judge", "openai:other-judge", "--judge-arg", f"1.base_url={other.base_url}", "--judge-repeats", "1")
        _, results = score_run(tmp_path, judge, RUNS, *two)
    finally:
        other.stop()
    assert bodies(judge.requests) == bodies(RECORDING["requests"])
    assert [r["body"]["model"] for r in other.requests] == ["other-judge"] * 2
    (per_run,) = RECORDING["per_run"]  # the fake judges answer alike: the mean is either's
    assert results["results"]["dragun_report"]["dragun_supportive"] == pytest.approx(float(per_run["supportive_score"]))
    agreement = results["judge_agreement"]["dragun_report"]["dragun_supportive"]
    assert agreement["raters"] == ["judge 1", "judge 2"] and agreement["percent_agreement"] == 1.0


def test_estimate_counts_the_autojudge_calls(tmp_path, index, judge):
    (tmp_path / "rules.json").write_text(json.dumps([{"pattern": "Report:$", "response": LONG}]))
    done = cli_here(
        "estimate", "--tasks", "dragun_report", "--data", f"dragun_report={DATA}", "--system", "report_rag",
        "--model", f"scripted:{tmp_path / 'rules.json'}", "--retriever", "bm25", "--retriever-arg", f"index={index}",
        *judge_args(judge), "--output", str(tmp_path / "run"), "--pilot", "100%",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "llm calls (judge:dragun_autojudge): 2 " in done.stdout


RUBRIC = [
    {
        "question_id": "q-1",
        "importance": "A: Have to Know",
        "short_answers": [{"answer_id": "na-1"}, {"answer_id": "na-2"}],
    },
    {"question_id": "q-2", "importance": "B: Good to Know", "short_answers": [{"answer_id": "na-3"}]},
    {
        "question_id": "q-3",
        "importance": "C: Nice to Know",
        "short_answers": [{"answer_id": "na-4"}, {"answer_id": "na-5"}],
    },
    # no short answers: score.py reads the rubric answer by answer, so its weight is in no denominator
    {"question_id": "q-4", "importance": "A: Have to Know", "short_answers": []},
]


@pytest.mark.parametrize(
    ("judged", "supportive", "contradictory"),
    [
        # q-1 (weight 4): supports and partial, (1 + 0.5) / 2 * 4 = 3; q-2 (2): none; q-3 (1): contradicts, supports,
        # 1 / 2 * 1 supportive and 1 / 2 * 1 contradictory; over 4 + 2 + 1 = 7
        (
            [
                ("na-1", "supports"),
                ("na-2", "partial"),
                ("na-3", "none"),
                ("na-4", "contradicts"),
                ("na-5", "supports"),
            ],
            3.5 / 7,
            0.5 / 7,
        ),
        # na-2 left out: q-1 counts one judged answer, 1 / 1 * 4; questions not judged add nothing to 7
        ([("na-1", "supports")], 4 / 7, 0.0),
        # nothing judged: 0 and 0
        ([], 0.0, 0.0),
        # an answer judged twice counts twice: (1 + 0 + 0.5) / 3 * 4 = 2
        ([("na-1", "supports"), ("na-1", "none"), ("na-2", "partial")], 2 / 7, 0.0),
    ],
)
def test_score_py_arithmetic(judged, supportive, contradictory):
    assert topic_scores(RUBRIC, judged) == {
        "supportive": pytest.approx(supportive),
        "contradictory": pytest.approx(contradictory),
    }


LABELS = ("supports", "partial", "contradicts", "none")
ANSWERS = [answer["answer_id"] for question in RUBRIC for answer in question["short_answers"]]


@given(st.lists(st.tuples(st.sampled_from(ANSWERS), st.sampled_from(LABELS)), max_size=12), st.randoms())
def test_score_py_scores_lie_in_0_1_and_do_not_depend_on_the_replys_order(judged, random):
    scores = topic_scores(RUBRIC, judged)
    assert 0 <= scores["supportive"] <= 1 and 0 <= scores["contradictory"] <= 1
    assert topic_scores(RUBRIC, random.sample(judged, len(judged))) == scores  # every label a multiple of 1/2: exact
    if all(label == "supports" for _, label in judged) and {a for a, _ in judged} == set(ANSWERS):
        assert scores == {"supportive": 1.0, "contradictory": 0.0}


def test_an_assessment_of_no_rubric_answer_or_label_is_refused():
    for judged in ([("na-9", "supports")], [("na-1", "maybe")]):
        with pytest.raises(ValueError, match="no answer of the rubric, or no label"):
            topic_scores(RUBRIC, judged)


def example(topic: str) -> Example:
    return next(e for e in DragunReport(DATA).examples() if isinstance(e, Example) and e.id == topic)


@pytest.mark.parametrize(
    "reply",
    [
        "not json",
        '{"assessments": [{"answer_id": "na-99", "rationale": "x", "assessment_decision": "supports"}]}',
        # auto_judge.py writes the rationale to its CSV, where pandas reads "NA" (or nothing) as a missing value and
        # score.py stops ("Missing values detected")
        '{"assessments": [{"answer_id": "na-1", "rationale": "NA", "assessment_decision": "supports"}]}',
    ],
)
def test_a_reply_autojudge_cannot_read_is_counted_and_left_out(reply):
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[ScriptedLLM([reply])])
    ctx.count = lambda name: counted.update([name])
    task = example(RECORDING["per_topic"][0]["topic_id"])
    values = asyncio.run(DragunAutoJudge().score(task, Prediction(task.id, answer="A report."), ctx))
    assert values == dict.fromkeys(KEYS) and counted == Counter(dragun_unparsed=1)


def test_a_topic_without_its_few_shot_examples_is_a_counted_bad_record(tmp_path):
    import shutil

    shutil.copytree(DATA, tmp_path / "data")
    (tmp_path / "data" / "runs" / "report_generation_runs" / "organizer-gpt-oss-t2").write_text(
        (RUNS / "organizer-gpt-oss-t2").read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8"
    )
    found = list(DragunReport(tmp_path / "data").examples())
    assert [e.id for e in found if isinstance(e, Example)] == ["msmarco_v2.1_doc_90_1000001"]
    (bad,) = [e for e in found if not isinstance(e, Example)]
    assert "topic msmarco_v2.1_doc_91_2000002 has no AutoJudge example reports" in str(bad)


LONG = " ".join(f"The seawall study covers sea floods, step {i} [1][2]." for i in range(40))  # 320 words


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("index") / "bm25"
    corpus = TEST_DATA / "dragun" / "msmarco_v2.1_doc_segmented"
    build_index(corpus, folder, "bm25", progress=False, registry=installed_registry())
    return folder


def test_report_rag_runs_end_to_end_offline_at_250_words_and_exports_the_tracks_run_file(tmp_path, index, judge):
    (tmp_path / "rules.json").write_text(json.dumps([{"pattern": "Report:$", "response": LONG}]))
    run = tmp_path / "run"
    done = cli_here(
        *("--tasks", "dragun_report", "--data", f"dragun_report={DATA}", "--system", "report_rag"),
        *("--model", f"scripted:{tmp_path / 'rules.json'}", "--retriever", "bm25", "--retriever-arg", f"index={index}"),
        *judge_args(judge), "--output", str(run), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads((run / "results.json").read_text())
    stats = results["system_stats"]["dragun_report"]
    assert stats["mean_words_written"] == 320 and stats["mean_words_kept"] == 248 and stats["reports_over_limit"] == 2
    lines = samples(run, "dragun_report")
    assert all(line["error"] is None and set(line["scores"]) == set(KEYS) for line in lines)
    prompts = [step["request"]["prompt"] for line in lines for step in line["trace"] if step["kind"] == "llm"]
    assert all("must not exceed 250 words" in p and "trustworthiness of the news article" in p for p in prompts)

    exported = tmp_path / "my-run"
    done = cli_here("export", "dragun", str(run), "--output", str(exported), "--run-id", "my-run")
    assert done.returncode == 0, done.stderr
    submitted = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    assert [s["metadata"]["topic_id"] for s in submitted] == [line["id"] for line in lines]
    for line, sub in zip(lines, submitted):
        shown = [doc["id"] for doc in line["prediction"]["docs"]]
        assert sub["metadata"] == {
            "team_id": "ragbench",
            "run_id": "my-run",
            "topic_id": line["id"],
            "type": "automatic",
        }
        assert len(sub["responses"]) == 31 and sum(len(r["text"].split()) for r in sub["responses"]) == 248
        assert all(r["citations"] == shown[:2] and "[" not in r["text"] for r in sub["responses"])

    # the run file scored as submitted: the judge asked the same of each report as in the run
    asked = bodies(judge.requests)
    folder = tmp_path / "submitted"
    folder.mkdir()
    (folder / "my-run").write_bytes(exported.read_bytes())
    judge.requests.clear()
    rescored, _ = score_run(tmp_path, judge, folder)
    assert bodies(judge.requests) == asked
    assert {s["id"]: s["scores"] for s in samples(rescored, "dragun_report")} == {
        line["id"]: line["scores"] for line in lines
    }


def test_the_assessors_judgments_as_human_labels_equal_score_py_type_human_and_check_autojudge(tmp_path, judge):
    human = {(row["run_tag"], row["topic_id"]): row for row in RECORDING["human_per_topic"]}
    labels = tmp_path / "labels.jsonl"
    tag = "organizer-gpt-oss-t2"
    done = cli_here("export", "dragun-human-labels", str(DATA), "--run-tag", tag, "--output", str(labels))
    assert done.returncode == 0, done.stderr
    assert f"DRAGUN human labels of {tag} (dragun_report): {labels} (2 topics)" in done.stdout
    written = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    assert {(label["id"], label["metric"]): label["label"] for label in written} == {
        (topic, f"dragun_{key}"): float(row[f"{key}_score"])
        for (run, topic), row in human.items()
        if run == tag
        for key in ("supportive", "contradictory")
    }
    # the assessed run scored as a submission: AutoJudge checked against the assessors, every topic labelled
    folder = tmp_path / "submitted"
    folder.mkdir()
    (folder / "assessed-run").write_bytes((RUNS / tag).read_bytes())
    _, results = score_run(tmp_path, judge, folder, "--human-labels", str(labels))
    agreement = results["human_agreement"]["dragun_report"]["dragun_supportive"]
    mean = sum(float(row["supportive_score"]) for (run, _), row in human.items() if run == tag) / 2
    assert agreement["n_labelled"] == 2 and agreement["human_only"]["value"] == pytest.approx(mean)  # score.py's
    assert agreement["judge_only"]["value"] is not None and "kappa" in agreement  # (every topic labelled: no PPI)


def test_human_labels_of_a_run_the_assessors_did_not_assess_are_refused(tmp_path):
    done = cli_here("export", "dragun-human-labels", str(DATA), "--run-tag", "nobody", "--output", str(tmp_path / "l"))
    assert done.returncode != 0 and not (tmp_path / "l").exists()
    assert (
        "assesses no run 'nobody': its runs are dragun-organizers-starter-kit-task-2, organizer-gpt-oss-t2"
        in done.stderr
    )
