"""Each task says how to read its gold (`Task.gold_references`): the built-in tasks read the records
their loaders make, the default reads `answers` or a `label`, and the metrics that know no benchmark
(llm_judge, hf:NAME) ask the task, so a plugin task's own gold shape reaches them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import Example, Prediction, Task, TaskPrompting, TaskScoring
from ragbench.metrics.match import ExactMatch, Match
from ragbench.tasks.alce.tasks import AlceAsqa, AlceEli5, AlceQampari
from ragbench.tasks.crag.task import CragTask1, example_from_record
from ragbench.tasks.selfrag.tasks import PubHealth
from ragbench.testing import ScriptedLLM, run_eval
from support.crag_helpers import crag_record


def first_gold(task: Task) -> dict:
    task.prepare()
    return next(e for e in task.examples() if isinstance(e, Example)).gold


def test_alce_tasks_read_their_long_answers_and_qampari_its_list_as_one_text():
    asqa = AlceAsqa(data_path=TEST_DATA / "alce" / "asqa_eval_gtr_top100.json")
    gold = first_gold(asqa)
    assert asqa.gold_references(gold) == gold["long_answers"] and len(gold["long_answers"]) == 2
    assert asqa.gold_references(
        {"qa_pairs": [{"short_answers": ["a", "b"]}, {"short_answers": ["c"]}], "answer": "", "long_answers": []}
    ) == ["a", "b", "c"]
    qampari = AlceQampari(data_path=TEST_DATA / "alce" / "qampari_eval_gtr_top100.json")
    gold = first_gold(qampari)
    assert qampari.gold_references(gold) == [gold["answer"]]
    assert qampari.gold_references({"answers": [["Marazan", "marazan"], ["On the Beach"]], "answer": ""}) == [
        "Marazan, On the Beach"
    ]
    eli5 = AlceEli5(data_path=TEST_DATA / "alce" / "eli5_eval_bm25_top100.json")
    gold = first_gold(eli5)
    assert eli5.gold_references(gold) == [gold["answer"]] and gold["claims"]


def test_crag_reads_its_answer_then_the_alternatives():
    gold = example_from_record(crag_record(0, alt_ans=["answer zero"]), 1, "crag.jsonl").gold
    assert CragTask1().gold_references(gold) == ["answer 0", "answer zero"]


def test_the_default_reads_answers_else_the_label():
    assert Task().gold_references({"answers": ["Paris", 1]}) == ["Paris", "1"]
    assert PubHealth().gold_references({"answers": [], "label": "SUPPORTS"}) == ["SUPPORTS"]
    assert Task().gold_references({"solution": "x"}) == []


class RiddlePrompting(TaskPrompting):
    def build_prompt(self, example, docs=None, **options):
        return f"Riddle: {example.question}\nAnswer:"


class Riddles(Task):
    """A task whose gold is its own shape: {"solution": {"text": ...}}."""

    name = "riddles"
    scoring = TaskScoring(metrics=("match",))
    prompting = RiddlePrompting()

    def examples(self):
        yield Example(id="r1", question="What has keys but opens no lock?", gold={"solution": {"text": "a piano"}})

    def gold_references(self, gold):
        return [gold["solution"]["text"]]


def test_the_llm_judge_is_shown_the_tasks_own_reading_of_its_gold():
    judge = ScriptedLLM({"Reference answer\\(s\\): a piano\n": "correct", "": "incorrect"})
    run = run_eval(Riddles, "closed_book", ScriptedLLM("a piano"), metrics=["llm_judge"], judges=[judge])
    assert run.scores["riddles"]["llm_judge"] == 1.0
    assert (
        "Reference answer(s): a piano\n" in run.samples["riddles"][0].judge_trace[0].request["messages"][0]["content"]
    )


def test_an_evaluate_metric_gets_the_tasks_references_and_records_no_per_example_error():
    pytest.importorskip("evaluate", reason="pip install 'ragbench[evaluate]'")
    name = f"hf:{TEST_DATA / 'evaluate' / 'word_overlap.py'}"
    run = run_eval(Riddles, "closed_book", ScriptedLLM("a piano"), metrics=[name])
    assert run.scores["riddles"][name] == 1.0 and run.complete
    assert run.samples["riddles"][0].score_errors == {}


def test_each_sample_carries_the_tasks_reading_of_its_gold():
    run = run_eval(Riddles, "closed_book", ScriptedLLM("a piano"))
    [sample] = run.samples["riddles"]
    assert sample.gold == {"solution": {"text": "a piano"}} and sample.gold_references == ["a piano"]


class BrokenReading(Riddles):
    name = "broken_reading"

    def gold_references(self, gold):
        return [gold["answer"]]


def test_a_reading_of_the_gold_that_raises_is_recorded_and_the_example_still_scored(tmp_path):
    run = run_eval(BrokenReading, "closed_book", ScriptedLLM("a piano"), output=tmp_path / "run")
    [line] = (tmp_path / "run" / "samples" / "broken_reading.jsonl").read_text().splitlines()
    assert json.loads(line)["gold_references_error"] == "KeyError: 'answer'"
    assert run.samples["broken_reading"][0].gold_references == [] and "match" in run.scores["broken_reading"]


class CapitalsPrompting(TaskPrompting):
    def build_prompt(self, example, docs=None, **options):
        return f"Question: {example.question}\nAnswer:"


class Capitals(Task):
    """A Python task whose records' gold is `golds` (one example each), as a plugin's `examples` yields it."""

    name = "capitals"
    scoring = TaskScoring(metrics=("em", "match"))
    golds: list = []
    prompting = CapitalsPrompting()

    def examples(self):
        for index, gold in enumerate(self.golds):
            yield Example(id=f"q{index}", question="What is the capital of France?", gold=gold, index=index)


def capitals_run(golds, tmp_path=None):
    task = type("Capitals", (Capitals,), {"golds": golds})
    return run_eval(task, "closed_book", ScriptedLLM("Paris"), output=tmp_path)


def test_a_string_of_gold_answers_is_one_answer_not_its_characters():
    run = capitals_run([{"answers": "Paris"}, {"answers": "s"}, {"claims": "Paris is in France."}])
    paris, s, claims = run.samples["capitals"]
    assert paris.gold == {"answers": ["Paris"]} and paris.gold_references == ["Paris"]
    assert paris.scores == {"em": 1.0, "match": 1.0} and s.scores["em"] == 0.0  # read as ["P", "a", ...]: 0.0, 1.0
    assert claims.gold == {"claims": ["Paris is in France."]}


def test_gold_that_would_be_mis_scored_is_a_bad_record_with_a_one_line_reason(tmp_path):
    run = capitals_run(
        [
            {"answers": {"text": "Paris"}},
            {"answers": ["Paris", 1]},
            {"answers": b"Paris"},
            {"label": ["SUPPORTS"]},
            ["Paris"],
            {"answers": ["Paris"]},
        ],
        tmp_path / "run",
    )
    records = run.samples["capitals"]
    assert [r.bad_record for r in records] == [True] * 5 + [False]
    assert [r.error for r in records[:5]] == [
        "bad record: capitals:1: example 'q0': gold 'answers': expected a string or a list of strings (or of alias "
        "lists), got dict {'text': 'Paris'}",
        "bad record: capitals:2: example 'q1': gold 'answers': expected a string or a list of strings (or of alias "
        "lists), got a list holding int 1",
        "bad record: capitals:3: example 'q2': gold 'answers': expected a string or a list of strings (or of alias "
        "lists), got bytes b'Paris'",
        "bad record: capitals:4: example 'q3': gold 'label': expected one string, number or true/false, got list "
        "['SUPPORTS']",
        "bad record: capitals:5: example 'q4': gold is list ['Paris'], not a mapping of gold kinds (e.g. "
        '{"answers": [...]})',
    ]
    assert run.results["counts"]["capitals"]["bad_records"] == 5 and not run.complete
    assert run.scores["capitals"]["em"] == 1.0  # of the one example whose gold reads


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["Paris", "s", "paris", ""])
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
ANSWER = st.sampled_from(["Paris", "s", "PARIS", "the Paris", ""]) | st.text(max_size=5)
WELL_FORMED = (
    ANSWER | st.lists(ANSWER, min_size=1, max_size=3) | st.lists(st.lists(ANSWER, max_size=3), min_size=1, max_size=3)
)
GOLDS = (
    st.fixed_dictionaries(
        {"answers": WELL_FORMED | JSON}, optional={"label": st.none() | ANSWER | JSON, "claims": WELL_FORMED | JSON}
    )
    | JSON
)


def well_formed(gold):
    """The gold as it should be scored (a lone string of a text-list kind is that one text), or None when
    its shape would be mis-scored."""
    if not isinstance(gold, dict):
        return None
    out = dict(gold)
    for key in ("answers", "claims"):
        value = out.get(key, [])
        out[key] = [value] if isinstance(value, str) else value
        texts = (
            [t for item in out[key] for t in item]
            if key == "answers" and isinstance(out[key], list) and all(isinstance(item, list) for item in out[key])
            else out[key]
        )
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return None
        if key not in gold:
            del out[key]
    label = out.get("label")
    return out if label is None or isinstance(label, (str, int, float)) else None


@given(gold=GOLDS)
def test_an_example_checks_its_gold_when_it_is_built(gold):
    example = Example(id="q7", question="What is the capital of France?", gold=gold)
    expected = well_formed(gold)
    if expected is None:
        assert example.gold_error.startswith("example 'q7': gold ") and "\n" not in example.gold_error
    else:
        assert example.gold_error is None and example.gold == expected


@pytest.mark.parametrize(
    "gold, error",
    [
        (
            {"answers": [1, {}], "label": float("nan")},
            "gold 'answers': expected a string or a list of strings (or of alias lists), got a list holding int 1",
        ),
        (
            {"answers": ["Paris"], "label": float("inf")},
            "gold 'label': expected one string, number or true/false, got inf",
        ),
        ({"claims": ["Paris", None]}, "gold 'claims': expected a string or a list of strings, got a list holding None"),
    ],
)
def test_an_example_built_with_gold_the_metrics_would_mis_score_names_itself_and_the_kind(gold, error):
    assert Example(id="fr", question="Capital?", gold=gold).gold_error == f"example 'fr': {error}"


def scored_directly(metric, gold):
    """What `metric` makes of the answer "Paris" against `gold`: ("score", value) or ("error", exception type)."""
    try:
        return "score", metric.score(
            Example(id="x", question="q", gold=gold), Prediction(example_id="x", answer="Paris")
        )
    except Exception as exc:
        return "error", type(exc).__name__


# Each example is a whole run (most of its cost): 10 runs of 4-20 golds check more golds (~100) than 30 runs of 1-5.
@given(st.lists(GOLDS, min_size=4, max_size=20))
@settings(max_examples=10)
def test_any_gold_of_a_python_task_is_scored_as_its_well_formed_equivalent_or_counted_as_a_bad_record(golds):
    run = capitals_run(golds)
    for gold, sample in zip(golds, run.samples["capitals"], strict=True):
        expected = well_formed(gold)
        if expected is None:
            assert sample.bad_record and "gold" in sample.error and "\n" not in sample.error
            continue
        assert not sample.bad_record and sample.gold == expected
        assert sample.gold_references == [str(text) for text in Task().gold_references(expected)]
        for metric in (ExactMatch(), Match()):
            got = (
                ("error", sample.score_errors[metric.name].partition(":")[0])
                if metric.name in sample.score_errors
                else ("score", sample.scores[metric.name])
            )
            assert got == scored_directly(metric, expected)
