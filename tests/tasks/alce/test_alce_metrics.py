"""ALCE metrics against values produced by running ALCE eval.py (tests/data/parity/alce_*.json say how)."""

from __future__ import annotations

import asyncio
import math

import pytest

from ragbench.api import Document, Prediction
from ragbench.metrics.alce_correctness import ClaimsNli, Length, QampariF1, StrEm
from ragbench.metrics.citation import Citation, ListCitation, remove_citations
from ragbench.metrics.rouge import RougeLsum, bootstrap_mid
from ragbench.tasks.alce.tasks import AlceAsqa, AlceEli5, AlceQampari
from ragbench.testing import make_context
from support.alce_helpers import ALCE_DATA, DATA_FILES, NLI_REPLAY, StandInNli, scored_run, write_predictions
from support.helpers import cli_here, run, samples

TASKS = {"asqa": AlceAsqa, "qampari": AlceQampari, "eli5": AlceEli5}
METRICS = {
    "asqa": [Length(), StrEm(), RougeLsum(), Citation()],
    "qampari": [Length(), QampariF1(), ListCitation()],
    "eli5": [Length(), RougeLsum(), Citation(), ClaimsNli()],
}
SCORED = [("asqa", "default"), ("asqa", "summary"), ("qampari", "default"), ("eli5", "default")]


def per_item_scores(dataset: str, variant: str) -> list[tuple[dict, dict]]:
    run_ = scored_run(dataset, variant)
    task = TASKS[dataset](data_path=ALCE_DATA / DATA_FILES[dataset], run_py_cleanup=False)
    out = []
    for example, item, expected in zip(task.examples(), run_["items"], run_["per_item"]):
        prediction = Prediction(
            example.id,
            answer=task.prompting.postprocess(item["output"]),
            docs=[Document.from_dict(d) for d in item["docs"]],
        )
        ours: dict = {}
        for metric in METRICS[dataset]:
            value = metric.score(example, prediction, make_context(task, nli=StandInNli()))
            value = asyncio.run(value) if asyncio.iscoroutine(value) else value
            ours.update(value if isinstance(value, dict) else {metric.name: value})
        out.append((ours, expected))
    return out


def same(ours, upstream) -> bool:
    if upstream is None or (isinstance(upstream, float) and math.isnan(upstream)):
        return ours is None
    return ours == pytest.approx(upstream, abs=1e-9)


@pytest.mark.parametrize("dataset,variant", SCORED)
def test_every_metric_of_every_item_equals_eval_py(dataset, variant):
    for ours, expected in per_item_scores(dataset, variant):
        for key, value in ours.items():
            assert same(value, expected[key]), (key, value, expected[key])


def score_run(tmp_path, dataset: str, variant: str = "default", raw: bool = False) -> dict:
    name = f"alce_{dataset}"
    predictions = write_predictions(tmp_path / "predictions.jsonl", dataset, variant)
    task_args = {} if raw else {"run_py_cleanup": False}
    if variant != "default":
        task_args.update(variant="sum_or_ext", use_shorter=variant)
    return run(
        tmp_path,
        tasks=[name],
        system="recorded",
        system_args={"path": str(predictions)},
        data={name: str(ALCE_DATA / DATA_FILES[dataset])},
        nli=f"replay:{NLI_REPLAY}",
        task_args=task_args,
    )


@pytest.mark.parametrize("dataset,variant", SCORED)
def test_scoring_run_py_outputs_equals_eval_py_on_every_metric(tmp_path, dataset, variant):
    results = score_run(tmp_path, dataset, variant)
    assert results["complete"]
    ours = results["results"][f"alce_{dataset}"]
    upstream = scored_run(dataset, variant)["aggregate"]
    for key, value in upstream.items():
        if key in ("str_em", "str_hit") and dataset != "asqa":
            continue  # eval.py reports 0 when the first item has no qa_pairs; not a metric of this task
        if key == "rougeLsum":  # upstream's number is the bootstrap mid, here drawn with the run seed (0)
            assert ours["rougeLsum_bootstrap_mid"] == pytest.approx(value, abs=1e-9)
        elif key != "mauve_call":
            assert ours[key] == pytest.approx(value, abs=1e-9), key
    recall, precision = upstream["citation_rec"], upstream["citation_prec"]
    assert ours["citation_f1"] == pytest.approx(2 * precision * recall / (precision + recall), abs=1e-9)


def test_corpus_keys_count_the_examples_their_value_was_computed_over(tmp_path):
    # one ELI5 output has no statements: its citation recall and precision are not scorable, and
    # citation_f1, the F1 of their means, is computed without it
    details = score_run(tmp_path, "eli5")["details"]["alce_eli5"]
    counts = {key: (details[key]["n"], details[key]["n_none"]) for key in details}
    assert counts["citation_f1"] == counts["citation_rec"] == counts["citation_prec"] == (4, 1)
    assert counts["rougeLsum_bootstrap_mid"] == counts["rougeLsum"] == (5, 0)


def test_rouge_exact_mean_is_the_mean_of_per_item_eval_py_values(tmp_path):
    results = score_run(tmp_path, "asqa")
    per_item = [expected["rougeLsum"] for _, expected in per_item_scores("asqa", "default")]
    assert results["results"]["alce_asqa"]["rougeLsum"] == pytest.approx(sum(per_item) / len(per_item), abs=1e-9)


def test_scoring_raw_generations_equals_eval_py(tmp_path):
    from conftest import write_jsonl
    from support.alce_helpers import fixture, record_id, records

    data, run_ = fixture("eli5"), scored_run("eli5")
    rows = [
        {"id": record_id(r, i), "output": raw, "docs": item["docs"]}
        for i, (r, raw, item) in enumerate(zip(records("eli5"), data["raw_outputs"], run_["items"]))
    ]
    predictions = write_jsonl(tmp_path / "raw.jsonl", rows)
    results = run(
        tmp_path,
        tasks=["alce_eli5"],
        system="recorded",
        system_args={"path": str(predictions)},
        data={"alce_eli5": str(ALCE_DATA / DATA_FILES["eli5"])},
        nli=f"replay:{NLI_REPLAY}",
    )
    for key in ("citation_rec", "citation_prec", "claims_nli", "length"):
        assert results["results"]["alce_eli5"][key] == pytest.approx(run_["aggregate"][key], abs=1e-9)


def test_score_command_with_replayed_nli_equals_eval_py(tmp_path):
    predictions = write_predictions(tmp_path / "p.jsonl", "qampari")
    done = cli_here(
        "score",
        "--task",
        "alce_qampari",
        "--data",
        str(ALCE_DATA / DATA_FILES["qampari"]),
        "--predictions",
        str(predictions),
        "--nli",
        f"replay:{NLI_REPLAY}",
        "--task-arg",
        "run_py_cleanup=false",
        "--output",
        str(tmp_path / "out"),
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    line = next(row for row in done.stdout.splitlines() if "| qampari_rec_top5 |" in row)
    assert f"{scored_run('qampari')['aggregate']['qampari_rec_top5']:.4f}" in line


def test_citation_metrics_without_nli_fail_before_the_run_in_one_line(tmp_path):
    predictions = write_predictions(tmp_path / "p.jsonl", "asqa")
    done = cli_here(
        "score",
        "--task",
        "alce_asqa",
        "--data",
        str(ALCE_DATA / DATA_FILES["asqa"]),
        "--predictions",
        str(predictions),
        "--output",
        str(tmp_path / "out"),
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "ragbench: error: metric(s) citation (alce_asqa) need an NLI model; pass --nli ENGINE:MODEL "
        "(e.g. hf:google/t5_xxl_true_nli_mixture, or replay:nli_calls.jsonl) (or choose other metrics with --metrics)"
    ]
    assert not (tmp_path / "out").exists()


def test_a_run_writes_its_nli_decisions_as_a_replay_file(tmp_path):
    first = score_run(tmp_path, "eli5")
    log = tmp_path / "run" / "nli_calls.jsonl"
    assert first["cost"]["nli"]["computed"] == len(log.read_text().splitlines())
    name = "alce_eli5"
    predictions = tmp_path / "predictions.jsonl"
    again = run(
        tmp_path,
        name="again",
        tasks=[name],
        system="recorded",
        system_args={"path": str(predictions)},
        data={name: str(ALCE_DATA / DATA_FILES["eli5"])},
        nli=f"replay:{log}",
        task_args={"run_py_cleanup": False},
    )
    assert again["results"] == first["results"]


def test_identical_nli_pairs_are_computed_once(tmp_path):
    results = score_run(tmp_path, "qampari")
    nli = results["cost"]["nli"]
    assert nli["computed"] < nli["requests"]
    assert results["cost"]["llm_calls"] == nli["computed"]


# --- rules, one by one ------------------------------------------------------------------------
DOCS = [Document(None, f"T{i}", f"text {i}") for i in range(1, 5)]


def citation(
    output: str, decide=lambda premise, hypothesis: 1, docs=DOCS, metric: Citation | None = None
) -> tuple[dict, list]:
    class Recording(StandInNli):
        async def entails(self, premise, hypothesis):
            self.asked.append((premise, hypothesis))
            return decide(premise, hypothesis)

    nli = Recording()
    scores = asyncio.run(
        (metric or Citation()).score(None, Prediction("x", answer=output, docs=docs), make_context(AlceAsqa, nli=nli))
    )
    return scores, nli.asked


def test_zero_cites_the_last_shown_document():
    scores, asked = citation("Claim [0].")
    assert asked == [("Title: T4\ntext 4", "Claim.")]


def test_out_of_range_is_checked_before_keeping_three():
    scores, asked = citation("Claim [1][2][3][9].")
    assert scores == {"citation_rec": 0.0, "citation_prec": 0.0} and asked == []


def test_only_three_citations_are_kept_and_duplicates_count():
    scores, asked = citation("Claim [2][2][1][4].", decide=lambda p, h: int(p.count("Title") != 1))
    assert asked[0] == ("Title: T2\ntext 2\nTitle: T2\ntext 2\nTitle: T1\ntext 1", "Claim.")
    # each doc alone fails, the others (one T2 removed) entail: all three are over-citations
    assert scores == {"citation_rec": 100.0, "citation_prec": 0.0}


def test_only_the_first_number_of_a_list_or_range_is_read():
    _, asked = citation("A [2, 3]. B [1-3].")
    assert [premise for premise, _ in asked] == ["Title: T2\ntext 2", "Title: T1\ntext 1"]


def test_empty_output_is_skipped_for_prose_but_scored_zero_for_lists():
    assert citation("")[0] == {"citation_rec": None, "citation_prec": None}
    example = type("E", (), {"question": "Q?"})()
    scores = asyncio.run(
        ListCitation().score(
            example, Prediction("x", answer="", docs=DOCS), make_context(AlceQampari, nli=StandInNli())
        )
    )
    assert scores == {"citation_rec": 0.0, "citation_prec": 0.0}


def test_zero_with_no_shown_documents_counts_as_out_of_range():
    assert citation("Claim [0].", docs=[])[0] == {"citation_rec": 0.0, "citation_prec": 0.0}


def test_at_most_citations_is_an_option():
    _, asked = citation("Claim [1][2][3][4].", metric=Citation(at_most_citations=4))
    assert asked[0][0].count("Title") == 4


@pytest.mark.parametrize(
    "text,expected",
    [
        ("text [1][2].", "text."),
        ("a [2, 3] b", "a, 3 b"),
        ("a [1-3]", "a-3"),
        ("a [1 | 2]", "a 2"),
        ("a [[1]2]", "a [2"),
    ],
)
def test_remove_citations_as_utils_py(text, expected):
    assert remove_citations(text) == expected


def test_claims_premise_has_citations_removed_twice():
    nli = StandInNli()
    example = type("E", (), {"gold": {"claims": ["c"]}})()
    asyncio.run(ClaimsNli().score(example, Prediction("x", answer="a [[1]2] b"), make_context(AlceEli5, nli=nli)))
    assert nli.asked == [("a b", "c")]


def test_qampari_duplicates_stay_in_precision_and_aliases_count_once():
    example = type("E", (), {"gold": {"answers": [["On the Beach", "On The Beach (novel)"], ["Marazan"]]}})()
    scores = QampariF1().score(example, Prediction("x", answer="marazan [1], Marazan, On the beach (novel), x."))
    assert scores["num_preds"] == 4 and scores["qampari_prec"] == 75.0 and scores["qampari_rec"] == 100.0


def test_str_em_is_a_substring_match_without_word_boundaries():
    example = type("E", (), {"gold": {"qa_pairs": [{"short_answers": ["java"]}, {"short_answers": ["The"]}]}})()
    assert StrEm().score(example, Prediction("x", answer="I like javascript [1].")) == {
        "str_em": 100.0,
        "str_hit": 100.0,
    }


def test_bootstrap_mid_equals_rouge_score_bootstrap_aggregator_with_the_same_seed():
    import numpy as np
    from rouge_score import scoring

    values = [0.1, 0.5, 0.25, 0.9, 0.3, 0.0, 0.75]
    aggregator = scoring.BootstrapAggregator()
    for value in values:
        aggregator.add_scores({"rougeLsum": scoring.Score(precision=value, recall=value, fmeasure=value)})
    np.random.seed(7)
    expected = aggregator.aggregate()["rougeLsum"].mid.fmeasure
    assert bootstrap_mid(values, 7) == pytest.approx(expected, abs=1e-12)


def test_predictions_without_docs_fail_citation_metrics_instead_of_scoring_zero(tmp_path):
    predictions = write_predictions(tmp_path / "predictions.jsonl", "asqa", with_docs=False)
    results = run(
        tmp_path,
        tasks=["alce_asqa"],
        system="recorded",
        system_args={"path": str(predictions)},
        data={"alce_asqa": str(ALCE_DATA / DATA_FILES["asqa"])},
        nli=f"replay:{NLI_REPLAY}",
        task_args={"run_py_cleanup": False},
    )
    citing = [s for s in samples(tmp_path / "run", "alce_asqa") if "[" in s["prediction"]["answer"]]
    assert citing and all('no "docs"' in s["score_errors"]["citation"] for s in citing)
    detail = results["details"]["alce_asqa"]["citation_rec"]
    assert detail["n_errors"] == len(citing) and detail["n"] + detail["n_none"] == 6 - len(citing)
    assert results["details"]["alce_asqa"]["str_em"]["n_errors"] == 0  # correctness is still scored
