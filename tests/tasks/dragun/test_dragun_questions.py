"""The `dragun_questions` task (DRAGUN Task 1) and `dragun_question_autojudge` metric against DRAGUN's released
AutoJudge (auto_compound_question_check, auto_question_evaluation) and scoring script (question_generation_evaluation)
run unchanged on the same fake OpenAI-compatible judge (tests/data/parity/dragun/dragun_question_calls.json,
recorded by record_dragun.py there, on sample data written for ragbench, tests/data/dragun): the same request
bodies, the same per-topic and per-run scores; score.py's arithmetic worked out by hand; a closed-book run end to
end offline, exported as the track's TSV run file and scored again as submitted."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import Example, Prediction
from ragbench.metrics.dragun_autojudge.questions import KEY, DragunQuestionAutoJudge
from ragbench.metrics.dragun_autojudge.scoring import question_score
from ragbench.tasks.dragun.question_runs import ranked, run_records, tsv_lines
from ragbench.tasks.dragun.questions import DragunQuestions
from ragbench.testing import ScriptedLLM, make_context
from support.dragun_fake_judge import fake_judge
from support.helpers import cli_here, samples, score_args

DATA = TEST_DATA / "dragun" / "data"
RUNS = DATA / "runs" / "question_generation_runs"
RECORDING = json.loads((TEST_DATA / "parity" / "dragun" / "dragun_question_calls.json").read_text(encoding="utf-8"))
JUDGE = "openai:openai/gpt-oss-120b"  # auto_judge.py's MODEL
TASK = "dragun_questions"


@pytest.fixture
def judge():
    fake = fake_judge()
    yield fake
    fake.stop()


def judge_args(fake) -> tuple[str, ...]:
    return ("--judge", JUDGE, "--judge-arg", f"0.base_url={fake.base_url}")


def bodies(requests: list[dict]) -> list[str]:
    return sorted(json.dumps({"path": r["path"], "body": r["body"]}, sort_keys=True) for r in requests)


def participant_compound_checks() -> list[dict]:
    """The recorded compound checks of the sample run's questions (auto_judge.py checks the organizer runs' too)."""
    asked = {
        row["run_question_text"]
        for row in RECORDING["auto_compound_question_check"]
        if row["run_tag"] == "sample-questions"
    }
    return [
        r for r in RECORDING["compound_requests"] if r["body"]["messages"][1]["content"].split("\n")[0][10:] in asked
    ]


def score_run(tmp_path: Path, fake, predictions: Path = RUNS, *extra: str) -> tuple[Path, dict]:
    out = tmp_path / "scored"
    done = cli_here(*score_args(TASK, DATA, predictions), *judge_args(fake), "--output", str(out), *extra)
    assert done.returncode == 0, done.stderr
    return out, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_requests_and_scores_equal_the_released_autojudge_and_score_py(tmp_path, judge):
    out, results = score_run(tmp_path, judge)
    # every body field for field: the compound checks of the run's questions, then every rubric question against
    # every question, the ints temperature 0 and top_p 1 as sent
    assert bodies(judge.requests) == bodies(participant_compound_checks() + RECORDING["requests"])
    assert len(judge.requests) == 5 + 21
    scored = {line["id"]: line["scores"] for line in samples(out, TASK)}
    assert scored == {row["topic_id"]: {KEY: float(row["score"])} for row in RECORDING["per_topic"]}
    (per_run,) = RECORDING["per_run"]
    assert results["results"][TASK][KEY] == pytest.approx(float(per_run["score"]), rel=1e-15)


RUBRIC = [
    {"question_id": "q-1", "importance": "A: Have to Know", "short_answers": [{"answer_id": "na-1"}]},
    {"question_id": "q-2", "importance": "B: Good to Know", "short_answers": [{"answer_id": "na-2"}]},
    {"question_id": "q-3", "importance": "C: Nice to Know", "short_answers": [{"answer_id": "na-3"}]},
    {"question_id": "q-4", "importance": "A: Have to Know", "short_answers": []},  # not weighed by score.py
]


@pytest.mark.parametrize(
    ("compound", "judged", "score"),
    [
        # q-1 (weight 4): the best of similar (0.5) and very-similar (1) is 4; q-2 (2): different, 0; q-3 (1):
        # similar, 0.5; over 4 + 2 + 1 = 7
        (
            {1: ["not-compound"], 2: ["not-compound"]},
            [(1, 1, "similar"), (1, 2, "very-similar"), (2, 1, "different"), (3, 2, "similar")],
            4.5 / 7,
        ),
        # question 2 compound: its very-similar earns nothing, q-1's best is question 1's similar, 0.5 * 4
        ({1: ["not-compound"], 2: ["compound"]}, [(1, 1, "similar"), (1, 2, "very-similar")], 2 / 7),
        # two questions ranked 1, one compound: score.py merges the checks by rank, each gets the better factor
        ({1: ["compound", "not-compound"]}, [(1, 1, "very-similar")], 4 / 7),
    ],
)
def test_score_py_question_arithmetic(compound, judged, score):
    assert question_score(RUBRIC, compound, judged) == pytest.approx(score)


SIMILARITY = ("very-similar", "similar", "different", "very-different")
JUDGED = st.lists(st.tuples(st.sampled_from((1, 2, 3)), st.integers(1, 4), st.sampled_from(SIMILARITY)), max_size=16)


@given(JUDGED, st.lists(st.sampled_from(("compound", "not-compound")), min_size=4, max_size=4), st.randoms())
def test_score_py_question_scores_lie_in_0_1_and_do_not_depend_on_the_order(judged, checks, random):
    compound = {rank: [checks[rank - 1]] for rank in range(1, 5)}
    score = question_score(RUBRIC, compound, judged)
    assert 0 <= score <= 1
    assert question_score(RUBRIC, compound, random.sample(judged, len(judged))) == score
    if {rank for rank, _, _ in judged} == {1, 2, 3} and all(
        label == "very-similar" and checks[c - 1] == "not-compound" for _, c, label in judged
    ):
        assert score == 1.0


def example(topic: str) -> Example:
    return next(e for e in DragunQuestions(DATA).examples() if isinstance(e, Example) and e.id == topic)


@pytest.mark.parametrize(
    ("replies", "counter"),
    [
        (["not json"], "dragun_question_unparsed"),
        (['{"rationale": "x", "assessment_decision": "maybe"}'], "dragun_question_unparsed"),
        # an empty rationale is written to the CSV as nothing, which score.py reads as a missing value and stops
        (
            [
                '{"rationale": "x", "assessment_decision": "not-compound"}',
                '{"rationale": "", "assessment_decision": "similar"}',
            ],
            "dragun_question_unparsed",
        ),
    ],
)
def test_a_reply_autojudge_cannot_read_is_counted_and_left_out(replies, counter):
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[ScriptedLLM(replies * 10)])
    ctx.count = lambda name: counted.update([name])
    task = example(RECORDING["per_topic"][0]["topic_id"])
    values = asyncio.run(DragunQuestionAutoJudge().score(task, Prediction(task.id, answer="1. Who wrote it?"), ctx))
    assert values == {KEY: None} and counted == Counter({counter: 1})


def test_a_prediction_without_questions_is_counted_and_left_out():
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[ScriptedLLM([])])
    ctx.count = lambda name: counted.update([name])
    task = example(RECORDING["per_topic"][0]["topic_id"])
    values = asyncio.run(DragunQuestionAutoJudge().score(task, Prediction(task.id, answer="  \n"), ctx))
    assert values == {KEY: None} and counted == Counter(dragun_no_questions=1)


def test_the_answers_questions_are_its_lines_without_markers_or_preamble():
    answer = "Here are the questions:\n\n" + "\n".join(f"{n}. Question {n}?" for n in range(1, 13))
    assert ranked(answer) == [(n, f"Question {n}?") for n in range(1, 13)]  # all judged, as auto_judge.py judges all
    assert ranked("Who?\n- Why?\n* When?") == [(1, "Why?"), (2, "When?")]
    assert ranked("Who?\n\n  Why  then?") == [(1, "Who?"), (2, "Why then?")]


QUESTION_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1).filter(lambda t: t.split())


@given(st.lists(QUESTION_TEXT, min_size=1, max_size=4))
def test_a_run_files_questions_read_back_as_written(tmp_path_factory, texts):
    """Quotes, tabs and newlines included: the run file's line reads back (as pandas reads it) to the question."""
    written = list(enumerate(texts, 1))
    path = tmp_path_factory.mktemp("tsv") / "run"
    path.write_text(tsv_lines("t-1", written, "run", "team"), encoding="utf-8")
    ((_, record),) = list(run_records(path))
    assert record["extras"]["dragun_questions"] == [{"rank": r, "text": " ".join(t.split())} for r, t in written]


def test_a_topic_without_examples_for_a_rubric_question_is_a_counted_bad_record(tmp_path):
    import csv
    import shutil

    shutil.copytree(DATA, tmp_path / "data")
    assessed = tmp_path / "data" / "human_assessments" / "question_assessments.csv"
    with open(assessed, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    with open(assessed, "w", newline="", encoding="utf-8") as handle:  # no assessment against topic 2's q-3
        csv.writer(handle).writerows(r for r in rows if not (r[0].endswith("91_2000002") and r[4] == "3"))
    found = list(DragunQuestions(tmp_path / "data").examples())
    assert [e.id for e in found if isinstance(e, Example)] == ["msmarco_v2.1_doc_90_1000001"]
    (bad,) = [e for e in found if not isinstance(e, Example)]
    assert "topic msmarco_v2.1_doc_91_2000002 has no AutoJudge examples for rubric question rank(s) 3" in str(bad)


WRITTEN = "Questions a reader should ask:\n" + "\n".join(
    f"{n}. Who stands behind claim {n} of the article, and is it true?" for n in range(1, 12)
)  # eleven: all are judged and exported, the export saying they are not the track's ten


def test_closed_book_writes_the_questions_offline_and_the_export_scores_again_as_submitted(tmp_path, judge):
    (tmp_path / "rules.json").write_text(json.dumps([{"pattern": "Questions:$", "response": WRITTEN}]))
    run = tmp_path / "run"
    done = cli_here(
        *("--tasks", TASK, "--data", f"{TASK}={DATA}", "--system", "closed_book"),
        *("--model", f"scripted:{tmp_path / 'rules.json'}"), *judge_args(judge), "--output", str(run), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = samples(run, TASK)
    assert all(line["error"] is None and set(line["scores"]) == {KEY} for line in lines)
    prompts = [step["request"]["prompt"] for line in lines for step in line["trace"] if step["kind"] == "llm"]
    assert all("Write the 10 questions a reader should ask" in p and "Title: " in p for p in prompts)
    # eleven questions a topic, 11 per rubric question (5 and 3) and 11 compound checks, the same questions of the
    # second topic checked once (the judge's calls are cached by request)
    assert len(judge.requests) == 11 + 11 * 5 + 11 * 3 == len(set(bodies(judge.requests)))

    exported = tmp_path / "my-run"
    done = cli_here("export", "dragun", str(run), "--output", str(exported), "--run-id", "my-run", "--team-id", "t")
    assert done.returncode == 0, done.stderr
    assert f"DRAGUN Task 1 run file: {exported} (2 topics, 22 questions, run_id my-run)" in done.stdout
    assert "not the track's 10 questions (all are written and judged): msmarco_v2.1_doc_90_1000001 (11)" in done.stdout
    rows = [line.split("\t") for line in exported.read_text(encoding="utf-8").splitlines()]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (line["id"], "t", "my-run", str(n)) for line in lines for n in range(1, 12)
    ]
    assert rows[0][4] == "Who stands behind claim 1 of the article, and is it true?"

    asked = bodies(judge.requests)
    folder = tmp_path / "submitted"
    folder.mkdir()
    (folder / "my-run").write_bytes(exported.read_bytes())
    judge.requests.clear()
    rescored, _ = score_run(tmp_path, judge, folder)
    assert bodies(judge.requests) == asked
    assert {s["id"]: s["scores"] for s in samples(rescored, TASK)} == {line["id"]: line["scores"] for line in lines}


def test_export_asks_which_task_of_a_run_of_both(tmp_path, judge):
    (tmp_path / "rules.json").write_text(
        json.dumps([{"pattern": "Questions:$", "response": "1. Who?"}, {"pattern": "", "response": "A report."}])
    )
    run = tmp_path / "run"
    data = ("--data", f"{TASK}={DATA}", "--data", f"dragun_report={DATA}")
    done = cli_here(
        "--tasks", f"{TASK},dragun_report", *data, "--system", "closed_book",
        "--model", f"scripted:{tmp_path / 'rules.json'}", *judge_args(judge), "--output", str(run), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = cli_here("export", "dragun", str(run))
    assert (
        done.returncode != 0
        and "ran dragun_report and dragun_questions: name the task to export with --task" in done.stderr
    )
    done = cli_here("export", "dragun", str(run), "--task", TASK)
    assert done.returncode == 0 and (tmp_path / f"run__{TASK}").read_text(encoding="utf-8").endswith("\t1\tWho?\n")


def test_repeats_two_judges_agreement_human_labels_ppi_and_cost(tmp_path, judge):
    labels = tmp_path / "labels.jsonl"
    labelled = RECORDING["per_topic"][0]["topic_id"]  # one topic labelled, one not: PPI has both
    labels.write_text(json.dumps({"id": labelled, "metric": KEY, "label": 0.5}) + "\n", encoding="utf-8")
    other = fake_judge()
    try:
        two = ("--judge", "openai:other-judge", "--judge-arg", f"1.base_url={other.base_url}")
        _, results = score_run(tmp_path, judge, RUNS, *two, "--judge-repeats", "2", "--human-labels", str(labels))
    finally:
        other.stop()
    asked = set(bodies(participant_compound_checks() + RECORDING["requests"]))
    assert set(bodies(judge.requests)) == asked  # a repeat is the released request again (seeded apart)
    assert [r["body"]["model"] for r in other.requests] == ["other-judge"] * len(other.requests)
    (per_run,) = RECORDING["per_run"]  # the fake judges answer alike: the mean of the two is either's
    assert results["results"][TASK][KEY] == pytest.approx(float(per_run["score"]))
    agreement = results["judge_agreement"][TASK][KEY]
    assert agreement["raters"] == ["judge 1", "judge 1, repeat 2", "judge 2", "judge 2, repeat 2"]
    assert agreement["measured"] and agreement["percent_agreement"] == 1.0
    human = results["human_agreement"][TASK][KEY]
    assert human["n_labelled"] == 1 and human["n_unlabelled"] == 1 and human["ppi"] is not None
    cost = results["judge_cost"][TASK]["dragun_question_autojudge"]
    assert cost["calls"] > 0


def test_estimate_counts_the_autojudge_calls(tmp_path, judge):
    (tmp_path / "rules.json").write_text(
        json.dumps([{"pattern": "Questions:$", "response": "1. Who wrote it?\n2. Who paid?"}])
    )
    done = cli_here(
        "estimate", "--tasks", TASK, "--data", f"{TASK}={DATA}", "--system", "closed_book",
        "--model", f"scripted:{tmp_path / 'rules.json'}", *judge_args(judge), "--output", str(tmp_path / "run"),
        "--pilot", "100%",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # per topic two compound checks and two per rubric question (5 and 3)
    assert f"llm calls (judge:dragun_question_autojudge): {2 + 2 * 5 + 2 + 2 * 3} " in done.stdout


@pytest.mark.parametrize("tag", sorted({row["run_tag"] for row in RECORDING["human_per_topic"]}))
def test_the_assessors_judgments_as_human_labels_equal_score_py_type_human(tmp_path, tag):
    """score.py --type human on the question assessments, with auto_judge.py's compound checks (recorded)."""
    import csv

    checks = tmp_path / "auto_compound_question_check.csv"
    with open(checks, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(RECORDING["auto_compound_question_check"][0]))
        writer.writeheader()
        writer.writerows(RECORDING["auto_compound_question_check"])
    labels = tmp_path / "labels.jsonl"
    done = cli_here(
        "export", "dragun-human-labels", str(DATA), "--task", TASK, "--run-tag", tag,
        "--compound-check", str(checks), "--output", str(labels),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = {
        label["id"]: label["label"] for label in map(json.loads, labels.read_text(encoding="utf-8").splitlines())
    }
    human = {row["topic_id"]: float(row["score"]) for row in RECORDING["human_per_topic"] if row["run_tag"] == tag}
    assert written == pytest.approx(human, rel=1e-15) and len(written) == len(human)


def test_task_1_human_labels_need_the_compound_checks(tmp_path):
    done = cli_here(
        "export", "dragun-human-labels", str(DATA), "--task", TASK, "--run-tag", "organizer-gpt-oss-t1",
        "--output", str(tmp_path / "labels.jsonl"),
    )  # fmt: skip
    assert done.returncode != 0 and "give --compound-check" in done.stderr and not (tmp_path / "labels.jsonl").exists()


def test_question_assessments_that_are_not_the_tracks_csv_are_one_line_naming_the_file(tmp_path):
    import shutil

    shutil.copytree(DATA, tmp_path / "data")
    assessed = tmp_path / "data" / "human_assessments" / "question_assessments.csv"
    text = assessed.read_text(encoding="utf-8")
    assessed.write_text(text.replace(",1,similar\n", ",one,similar\n", 1), encoding="utf-8")
    done = cli_here("--tasks", TASK, "--data", f"{TASK}={tmp_path / 'data'}", "--system", "closed_book",
                    "--model", "scripted:echo", "--judge", "scripted:echo", "--output", str(tmp_path / "run"))  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{assessed}, line 2: not DRAGUN's question assessments (ValueError" in done.stderr


def test_human_labels_of_assessments_not_the_tracks_are_one_line(tmp_path):
    import shutil

    shutil.copytree(DATA, tmp_path / "data")
    assessed = tmp_path / "data" / "human_assessments" / "question_assessments.csv"
    assessed.write_text(assessed.read_text(encoding="utf-8").replace(",1,similar\n", ",one,similar\n", 1))
    checks = tmp_path / "checks.csv"
    checks.write_text("topic_id,run_tag,run_question_rank,auto_compound_question_assessment\n", encoding="utf-8")
    done = cli_here(
        "export", "dragun-human-labels", str(tmp_path / "data"), "--task", TASK, "--run-tag",
        "dragun-organizers-starter-kit-task-1", "--compound-check", str(checks), "--output", str(tmp_path / "l"),
    )  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr and not (tmp_path / "l").exists()
    assert "holds no DRAGUN rubrics and assessments as the track writes them (ValueError" in done.stderr
