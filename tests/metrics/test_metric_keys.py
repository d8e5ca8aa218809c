"""Every key a metric reports says which way is better and its range, and results.json carries both;
two metrics reporting one key refuse to start, and `--metric-arg M.key_prefix=P` renames one's keys."""

from __future__ import annotations

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, CorpusValue, KeySpec, Metric, MetricDeclaration, key_spec
from ragbench.metrics.citation import Citation
from ragbench.testing import installed_registry, task_results
from support.helpers import records_without_texts, run, samples

TREE = TEST_DATA / "omnieval" / "gen_datas_test_final"
PREDS = TEST_DATA / "omnieval" / "pred_bm25_TOP2-qwen2-72b"
OMNIEVAL = {
    "tasks": ["omnieval_auto"],
    "system": "recorded",
    "system_args": {"path": str(PREDS)},
    "data": {"omnieval_auto": str(TREE)},
}


@pytest.mark.parametrize(
    "metric,key,higher_is_better,value_range",
    [
        ("crag", "accuracy", True, (0, 1)),
        ("crag", "hallucination", False, (0, 1)),
        ("crag", "missing", False, (0, 1)),
        ("crag", "score", True, (-1, 1)),
        ("crag_repo", "hallucination", False, (0, 1)),
        ("crag_human", "score_h", True, (-1, 1)),
        ("llm_judge", "llm_judge", True, (0, 1)),
        ("llm_judge", "llm_judge_unparsed", False, (0, None)),
        ("omnieval_judge", "hallucination", False, None),
        ("omnieval_judge", "judge_failures", False, (0, None)),
        ("omnieval_judge", "accuracy", True, None),
        ("omnieval_rule", "f1", True, (0, 1)),
        ("omnieval_retrieval", "mrr", True, (0, 1)),
        ("length", "length", None, (0, None)),
        ("qampari", "num_preds", None, (0, None)),
        ("qampari", "qampari_f1", True, (0, 100)),
        ("citation", "citation_f1", True, (0, 100)),
        ("rouge_lsum", "rougeLsum_bootstrap_mid", True, (0, 100)),
        ("str_em", "str_hit", True, (0, 100)),
        ("match", "match", True, (0, 1)),
        ("f1", "f1", True, (0, 1)),
        ("label_accuracy", "label_accuracy", True, (0, 1)),
    ],
)
def test_built_in_metrics_declare_each_keys_direction_and_range(metric, key, higher_is_better, value_range):
    spec = key_spec(installed_registry().metric_class(metric)(), key)
    assert (spec.higher_is_better, spec.range) == (higher_is_better, value_range)


def test_results_carry_each_keys_direction_and_range(tmp_path):
    results = run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", metrics=["match", "+length"])
    details = results["details"]["demo"]
    assert (details["match"]["higher_is_better"], details["match"]["range"]) == (True, [0, 1])
    assert (details["length"]["higher_is_better"], details["length"]["range"]) == (None, [0, None])


def test_a_metric_that_only_sets_higher_is_better_gives_it_to_every_key():
    class OneWayMetric(Metric):
        name = "one_way"
        declares = MetricDeclaration(keys=("errors", "slips"), higher_is_better=False)

    samples_ = [{"id": "a", "error": None, "scores": {"errors": 1.0, "slips": 2.0}}]
    details = task_results(records_without_texts(samples_), [OneWayMetric()], iterations=1000, seed=0)["details"]
    assert [details[k]["higher_is_better"] for k in ("errors", "slips")] == [False, False]
    assert "range" not in details["errors"]
    assert key_spec(OneWayMetric(), "slips") == KeySpec(False, None)


def test_two_metrics_reporting_one_key_refuse_to_start_naming_both(tmp_path):
    with pytest.raises(
        ConfigError,
        match=r"task omnieval_auto: metrics omnieval_rule and f1 both report the key 'f1'; "
        r"rename one's keys, e\.g\. --metric-arg f1\.key_prefix=f1_ ",
    ):
        run(tmp_path, **OMNIEVAL, metrics=["+f1"])
    assert not (tmp_path / "run").exists()


def test_key_prefix_renames_one_metrics_keys_and_both_are_reported(tmp_path):
    alone = run(tmp_path, name="alone", **OMNIEVAL)
    both = run(tmp_path, name="both", **OMNIEVAL, metrics=["+f1"], metric_args={"f1.key_prefix": "token_"})
    assert both["results"]["omnieval_auto"]["f1"] == alone["results"]["omnieval_auto"]["f1"]  # OmniEval's char F1
    assert both["results"]["omnieval_auto"]["token_f1"] is not None and both["complete"]
    assert {"f1", "token_f1"} <= set(samples(tmp_path / "both", "omnieval_auto")[0]["scores"])


def test_a_corpus_metric_reads_its_own_keys_under_a_prefix():
    metric = Citation()
    metric.key_prefix = "alce_"
    scored = [
        {"id": str(i), "error": None, "scores": {"alce_citation_rec": rec, "alce_citation_prec": prec}}
        for i, (rec, prec) in enumerate([(100.0, 50.0), (50.0, 50.0)])
    ]
    details = task_results(records_without_texts(scored), [metric], iterations=1000, seed=0)["details"]
    assert set(details) == {"alce_citation_rec", "alce_citation_prec", "alce_citation_f1"}
    assert details["alce_citation_f1"]["value"] == pytest.approx(2 * 75 * 50 / 125)
    assert details["alce_citation_rec"]["value"] == 75.0


class Median(Metric):
    """A corpus key over the examples whose `value` is scorable; `claimed` overrides the n it says."""

    name = "median"
    declares = MetricDeclaration(keys=("value",), corpus_keys=("median", "first"))
    claimed: int | None = None

    def corpus(self, samples, seed):
        values = sorted(s.scores["value"] for s in samples if s.scores["value"] is not None)
        n = len(values) if self.claimed is None else self.claimed
        return {
            "median": CorpusValue(values[len(values) // 2] if values else None, n),
            "first": samples[0].scores["value"] or 0.0,
        }


def corpus_counts(metric: Metric, values: list) -> dict:
    samples = [{"id": str(i), "error": None, "scores": {"value": v}} for i, v in enumerate(values)]
    details = task_results(records_without_texts(samples), [metric], iterations=1000, seed=0)["details"]
    return {
        key: (details[key]["value"], details[key]["n"], details[key]["n_none"], details[key].get("error"))
        for key in ("median", "first")
    }


def test_a_corpus_value_says_how_many_examples_it_was_computed_over():
    assert corpus_counts(Median(), [1.0, None, 3.0, None, 2.0]) == {
        "median": (2.0, 3, 2, None),  # two not scorable, left out: counted as such
        "first": (1.0, 5, 0, None),
    }  # a plain number: computed over every example given
    assert corpus_counts(Median(), [None, None])["median"] == (None, 0, 2, None)
    wrong = Median()
    wrong.claimed = 9
    median = corpus_counts(wrong, [1.0, 2.0])["median"]
    assert median[0] is None and "says its corpus key 'median' was computed over 9 samples of the 2" in median[3]


class NothingToCalibrate(Median):
    """As hendrycks' calib_err: 0.0 when given too few examples, none included."""

    def corpus(self, samples, seed):
        return {"median": CorpusValue(0.0, 0), "first": 0.0}


def test_a_corpus_value_computed_over_no_example_is_none_not_a_number():
    assert corpus_counts(NothingToCalibrate(), [None, None])["median"] == (None, 0, 2, None)
    details = task_results([], [NothingToCalibrate()], iterations=1000, seed=0)["details"]  # every example failed
    assert (details["first"]["value"], details["first"]["n"]) == (None, 0)
