"""A judge against human labels: accuracy, Cohen's kappa and the confusion table
(ragbench._statistics.label_agreement), and the labels file they are read from
(ragbench._reports.judging.human_labels)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench._reports.judging.human_labels import read_human_labels
from ragbench._statistics.label_agreement import MAX_CATEGORIES, agreement
from ragbench.api import ConfigError, cohen_kappa


def test_kappa_of_a_textbook_two_by_two_table():
    """20 both yes, 5 human yes judge no, 10 human no judge yes, 15 both no: p_o 0.7, p_e 0.5, kappa 0.4."""
    human = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    judge = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    found = agreement(human, judge)
    assert found is not None
    assert found.accuracy == pytest.approx(0.7)
    assert found.kappa == pytest.approx(0.4)
    assert found.labels == [0.0, 1.0]
    assert found.confusion == [[15, 10], [5, 20]]  # rows: the human's value, columns: the judge's


def test_kappa_is_undefined_where_both_raters_give_one_value_throughout():
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None


def test_a_continuous_score_has_no_agreement_figures():
    values = [i / 100 for i in range(MAX_CATEGORIES + 1)]
    assert agreement(values, values) is None


ratings = st.lists(
    st.tuples(st.sampled_from([-1.0, 0.0, 0.5, 1.0]), st.sampled_from([-1.0, 0.0, 0.5, 1.0])), min_size=1
)


@given(ratings)
def test_the_confusion_table_counts_every_example_once_and_its_diagonal_is_the_accuracy(pairs):
    human, judge = [h for h, _ in pairs], [j for _, j in pairs]
    found = agreement(human, judge)
    assert found is not None
    assert sum(map(sum, found.confusion)) == len(pairs)
    assert sum(found.confusion[i][i] for i in range(len(found.labels))) / len(pairs) == pytest.approx(found.accuracy)
    kappa = cohen_kappa(human, judge)
    assert kappa is None or -1 - 1e-12 <= kappa <= 1 + 1e-12
    if human == judge and kappa is not None:
        assert kappa == pytest.approx(1.0)


def test_labels_are_read_from_jsonl_and_csv_alike(tmp_path):
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(
        '{"id": "q1", "metric": "llm_judge", "label": 1}\n\n{"id": "q2", "metric": "llm_judge", "label": 0, "task": "demo"}\n'
    )
    csv = tmp_path / "labels.csv"
    csv.write_text("id,metric,label,task\nq1,llm_judge,1,\nq2,llm_judge,0,demo\n")
    for path in (jsonl, csv):
        labels = read_human_labels(path)
        assert labels.for_task("demo") == {"llm_judge": {"q1": 1.0, "q2": 0.0}}
        assert labels.for_task("other") == {"llm_judge": {"q1": 1.0}}


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"id": "q1", "metric": "llm_judge"}\n', "labels.jsonl:1: no label"),
        ('{"id": "q1", "metric": "llm_judge", "label": "yes"}\n', "labels.jsonl:1: label 'yes' is not a number"),
        (
            '{"id": "q1", "metric": "m", "label": 1}\n{"id": "q1", "metric": "m", "label": 0}\n',
            "labels.jsonl:2: example 'q1' already has label 1.0",
        ),
        ("[1, 2]\n", "labels.jsonl:1: not a JSON object"),
        ('{"id": "q1", "metric": "m", "label": 1\n', "labels.jsonl:1: not a JSON object"),
        ('{"id": "q1", "metric": "m", "label": NaN}\n', "labels.jsonl:1: label nan is not a finite number"),
    ],
)
def test_a_bad_labels_line_is_a_configuration_error_naming_its_line(tmp_path, text, problem):
    path = tmp_path / "labels.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem.replace(".", r"\.").replace("(", r"\(")):
        read_human_labels(path)


def test_a_csv_without_the_label_column_is_a_configuration_error(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("id,metric\nq1,llm_judge\n")
    with pytest.raises(ConfigError, match="the CSV header lacks label"):
        read_human_labels(path)
