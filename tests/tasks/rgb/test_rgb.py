"""RGB's tasks and metrics against values produced by running RGB's evalue.py (tests/data/parity/rgb.json
records the commit and how): the passages each example shows, the prompt, and the labels and rates."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA, write_jsonl
from ragbench.api import ConfigError, Example, Prediction, RecordError, key_spec
from ragbench.tasks.rgb.metrics import RgbAccuracy, RgbCounterfactual
from ragbench.testing import installed_registry, run_eval

PARITY = json.loads((TEST_DATA / "parity" / "rgb.json").read_text(encoding="utf-8"))
CASES = PARITY["cases"]


def case_id(case: dict) -> str:
    return f"{case['dataset']}-n{case['noise_rate']}-p{case['passage_num']}-c{case.get('correct_rate', 0)}"


def task_of(dataset: str, data=None, **options):
    return installed_registry().load("tasks", f"rgb_{dataset}")(
        data or TEST_DATA / "rgb" / f"{dataset}.json", **options
    )


def examples_of(case: dict) -> list[Example]:
    options = {key: case[key] for key in ("noise_rate", "passage_num", "correct_rate") if key in case}
    examples = list(task_of(case["dataset"], **options).examples())
    assert all(isinstance(e, Example) for e in examples), examples
    return examples


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_examples_show_the_passages_evalue_py_samples(case):
    examples = examples_of(case)
    assert [e.id for e in examples] == [str(u["id"]) for u in case["examples"]]
    assert [[d.text for d in e.docs] for e in examples] == [u["docs"] for u in case["examples"]]


@pytest.mark.parametrize("dataset", ["en", "zh"])
def test_prompt_is_evalue_py_instruction_and_system_message(dataset):
    case = next(c for c in CASES if c["dataset"] == dataset and c["noise_rate"] == 0.4 and c["passage_num"] == 5)
    task = task_of(dataset, noise_rate=0.4)
    example = list(task.examples())[0]
    upstream = PARITY["prompts"][dataset]
    prompt = task.prompting.build_prompt(example, example.docs)
    assert prompt == upstream["instruction"].format(QUERY=example.question, DOCS="\n".join(case["examples"][0]["docs"]))
    assert task.own_documents  # the provided retriever shows them, in this order
    assert task.prompting.chat_messages(prompt) == [
        {"role": "system", "content": upstream["system"]},
        {"role": "user", "content": prompt},
    ]


def scored(case: dict) -> list[tuple[dict, dict]]:
    """(upstream's line, ragbench's scores) per example, the outputs scored by the task's own metrics."""
    task = task_of(case["dataset"], **{k: case[k] for k in ("noise_rate", "passage_num", "correct_rate") if k in case})
    strip = case["dataset"].startswith("zh")
    metrics = [RgbAccuracy(strip_spaces=strip)] + (
        [RgbCounterfactual(strip_spaces=strip)] if "fact" in case["dataset"] else []
    )
    assert sorted(task.scoring.metrics) == sorted(m.name for m in metrics)
    assert all(
        task.scoring.metric_options.get(m.name, {}) == ({"strip_spaces": True} if strip else {}) for m in metrics
    )
    out = []
    for example, upstream in zip(task.examples(), case["examples"]):
        prediction = Prediction(example_id=example.id, answer=PARITY["outputs"][example.question])
        out.append((upstream, {k: v for m in metrics for k, v in m.score(example, prediction).items()}))
    return out


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rgb_metric_equals_evalue_py(case):
    rows = scored(case)
    for upstream, scores in rows:
        label = upstream["label"]
        assert scores["accuracy"] == float(0 not in label and 1 in label)
        assert scores["rejected"] == float(label == [-1])
    assert mean([scores["all_rate"] for _, scores in rows]) == pytest.approx(case["scores"]["all_rate"])


@pytest.mark.parametrize("case", [c for c in CASES if "fact" in c["dataset"]], ids=case_id)
def test_rgb_fact_metric_equals_evalue_py(case):
    rows = scored(case)
    assert [scores["error_detection"] for _, scores in rows] == [u["factlabel"] for u, _ in rows]
    assert mean([scores["error_detection"] for _, scores in rows]) == pytest.approx(case["scores"]["fact_check_rate"])
    corrections = [scores["error_correction"] for _, scores in rows if scores["error_correction"] is not None]
    assert mean(corrections) == pytest.approx(case["scores"]["correct_rate"])


def test_the_cases_cover_each_rule():
    """The parity outputs exercise aliases and case, the Chinese spaces, a rejection, one that is no rejection
    for its capitals, a missing item, and an error detected with a rejection (counted corrected)."""
    labels = {(c["dataset"], tuple(u["label"])) for c in CASES for u in c["examples"]}
    assert {
        ("en", (1,)),
        ("en", (1, 0)),
        ("en", (-1,)),
        ("zh", (1,)),
        ("zh", (-1,)),
        ("en_int", (1,) * 7),
        ("en_int", (1, 1, 0)),
        ("en_fact", (-1,)),
    } <= labels
    all_rates = {(c["dataset"], c["noise_rate"]): c["scores"]["all_rate"] for c in CASES if c["passage_num"] == 5}
    assert all_rates[("zh", 1.0)] == 1.0 and all_rates[("zh", 0.0)] == 0.5  # at noise 1, a rejection counts


@pytest.mark.parametrize(
    "options, message",
    [
        ({"noise_rate": 1.5}, "noise_rate must be a number from 0 to 1"),
        ({"passage_num": 0}, "passage_num must be a whole number of at least 1"),
        ({"noise_rate": "high"}, "noise_rate must be"),
    ],
)
def test_bad_options_are_one_line(options, message):
    with pytest.raises(ConfigError, match=message) as refused:
        task_of("en", **options)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("noise_rate, correct_rate", [(0.6, 0.6), (0.5, 0.5), (1.0, 0.2)])
def test_counterfactual_rates_asking_more_passages_than_passage_num_are_one_line(noise_rate, correct_rate):
    """ceil(5 x 0.5) negatives and as many true passages are 6 of 5: evalue.py stops at random.sample."""
    with pytest.raises(ConfigError, match="lower one of them") as refused:
        task_of("en_fact", noise_rate=noise_rate, correct_rate=correct_rate, passage_num=5)
    assert "\n" not in str(refused.value)


def test_a_record_without_negatives_is_a_bad_record_naming_the_field(tmp_path):
    data = write_jsonl(tmp_path / "en.json", [{"id": 0, "query": "q", "answer": ["a"], "positive": ["a."]}])
    [outcome] = list(task_of("en", data=data).examples())
    assert isinstance(outcome, RecordError) and "negative" in str(outcome), outcome


def test_a_record_without_its_answer_is_a_bad_record_naming_the_field(tmp_path):
    data = write_jsonl(tmp_path / "en.json", [{"id": 0, "query": "q", "positive": ["a."], "negative": ["b."]}])
    [outcome] = list(task_of("en", data=data).examples())
    assert isinstance(outcome, RecordError) and "field 'answer': missing field" in str(outcome), outcome


def test_integration_passages_not_grouped_per_answer_item_are_a_bad_record(tmp_path):
    """evalue.py shuffles each group in place and stops on a string; its characters are no passages."""
    data = write_jsonl(
        tmp_path / "en_int.json",
        [{"id": 0, "query": "q", "answer": ["a", "b"], "positive": ["a is 1.", "b is 2."], "negative": ["c."]}],
    )
    [outcome] = list(task_of("en_int", data=data).examples())
    assert isinstance(outcome, RecordError) and "positive" in str(outcome), outcome


@pytest.mark.parametrize("answer", [3, [["a", 1]], {"text": "a"}])
def test_an_answer_checkanswer_cannot_read_is_a_bad_record_naming_it(tmp_path, answer):
    data = write_jsonl(
        tmp_path / "en.json", [{"id": 0, "query": "q", "answer": answer, "positive": ["a."], "negative": ["b."]}]
    )
    [outcome] = list(task_of("en", data=data).examples())
    assert isinstance(outcome, RecordError) and "answer" in str(outcome), outcome


def test_the_reference_answer_is_every_item_by_its_first_alias():
    task = task_of("en_int")
    assert [task.gold_references(e.gold) for e in task.examples()][:2] == [
        ["Ansgar Pell, Evermouth"],
        ["Ansgar Pell, Evermouth, Trask"],
    ]
    assert task_of("en_fact").gold_references({"rgb_answer": "Evermouth"}) == ["Evermouth"]


@pytest.mark.parametrize("passage_num", [3, 5])
def test_vanilla_shows_every_sampled_passage_in_order(tmp_path, passage_num):
    """The task makes passage_num vanilla's top_n: the prompt holds exactly the passages evalue.py shows."""
    case = next(c for c in CASES if c["dataset"] == "en" and c["noise_rate"] == 0.4 and c["passage_num"] == passage_num)
    run = run_eval(
        "rgb_en",
        "vanilla",
        "scripted:echo",
        data=TEST_DATA / "rgb" / "en.json",
        task_args={"noise_rate": 0.4, "passage_num": passage_num},
        bootstrap_iters=10,
    )
    shown = [[doc.text for doc in record.docs] for record in run.samples["rgb_en"]]
    assert shown == [u["docs"] for u in case["examples"]]


def test_rejected_has_no_better_direction():
    """A rejection is right at noise_rate 1 and wrong where passages hold the answer: compare and the viewer
    must not call either direction better."""
    assert key_spec(RgbAccuracy(), "rejected").higher_is_better is None
    assert key_spec(RgbAccuracy(), "all_rate").higher_is_better is True
