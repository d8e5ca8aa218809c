"""The system x task matrix: every built-in system on every built-in task, offline, with known numbers.

Each cell runs on small upstream-format data (tests/matrix_fixtures.py) with a scripted model that gives
the gold answer to the first example and a wrong one (sharing no word with the gold) to the second, a
scripted NLI judge that entails unless the premise is the wrong answer, and a CRAG judge that finds every
non-exact answer wrong. The metric values each cell must report are worked out by hand below from the
fixture records; a cell the registry or the system refuses fails unless INTENDED_REFUSALS lists it."""
from __future__ import annotations

import pytest
from matrix_fixtures import TASK_DATA, cell_config

from ragbench.errors import ConfigError
from ragbench.run.evaluator import Evaluator, RunConfig
from ragbench.registry import get_registry

REGISTRY = get_registry()
BUILTIN = "ragbench"
SYSTEMS = [name for name in REGISTRY.names("systems") if REGISTRY.entries["systems"][name].provider == BUILTIN]
TASKS = [name for name in REGISTRY.names("tasks") if REGISTRY.entries["tasks"][name].provider == BUILTIN]

# (system, task) -> the reason the cell is refused before the run (a substring of the one-line error).
INTENDED_REFUSALS: dict[tuple[str, str], str] = {}

HALF = {"match": 0.5, "selfrag_match": 0.5, "match_normalized": 0.5, "em": 0.5, "f1": 0.5}
CRAG = {"accuracy": 0.5, "hallucination": 0.5, "missing": 0.0, "score": 0.0,  # score = accuracy - hallucination
        "exact_accuracy": 0.5,  # the gold answer matches exactly; the wrong one goes to the judge, which says no
        "score_h": None}  # human labels only come with predictions files
# ASQA, first record right: its first long answer, "[1]" before each '.': 17 words; 2 of its 3 qa_pairs
# (Mawsynram, Lloró; not Cherrapunji/Sohra) are in it; ROUGE-Lsum 100 against that long answer. Punkt ends a
# sentence at the question's "?'" so the output has 3 sentences, 2 citing [1] (entailed): recall 2/3,
# precision 2/2. Second record "zzz": 1 word, no answer, ROUGE 0, no citation (recall 0, precision 0).
# citation_f1 is the F1 of the mean recall and precision: 2 * 33.3 * 50 / 83.3 = 40.
ASQA = {"length": 9.0, "str_em": 100 / 3, "str_hit": 0.0, "rougeLsum": 50.0, "rougeLsum_bootstrap_mid": 50.0,
        "citation_rec": 100 / 3, "citation_prec": 50.0, "citation_f1": 40.0}
# QAMPARI, first right: its 7 answers, each cited: 15 words, 7 predictions all gold (P = R = F1 = 100, top-5
# as well), 7 statements entailed by [1]; second "zzz": 1 word, 1 wrong prediction, no citation.
QAMPARI = {"length": 8.0, "qampari_prec": 50.0, "qampari_rec": 50.0, "qampari_rec_top5": 50.0, "qampari_f1": 50.0,
           "qampari_f1_top5": 50.0, "num_preds": 4.0, "citation_rec": 50.0, "citation_prec": 50.0,
           "citation_f1": 50.0}
# ELI5, first right: its 3 claims, each cited: 11 + 9 + 4 = 24 words, equal to the reference answer (ROUGE
# 100), every claim entailed; second "zzz": 1 word, no claim entailed (the NLI judge's "0"), no citation.
ELI5 = {"length": 12.5, "rougeLsum": 50.0, "rougeLsum_bootstrap_mid": 50.0, "claims_nli": 50.0,
        "citation_rec": 50.0, "citation_prec": 50.0, "citation_f1": 50.0}
# OmniEval, first right "5年" (jieba: 5 / 年): Rouge-1/2/L F 2PR/(P+R+1e-8) as rouge-chinese computes it, char
# F1 1, EM 1/2 (averaged over the two answer forms "5年", "五年"); second "zzz": 0 everywhere. No documents are
# shown on these records, so MAP/MRR have nothing to score.
ROUGE_ZH = 2 / (2 + 1e-8) / 2
OMNIEVAL = {"rouge_1": ROUGE_ZH, "rouge_2": ROUGE_ZH, "rouge_l": ROUGE_ZH, "f1": 0.5, "em": 0.25,
            "map": None, "mrr": None}

EXPECTED: dict[str, dict[str, float | None]] = {
    "popqa": HALF,
    "pubhealth": {"match": 0.5, "selfrag_match": 0.5, "label_accuracy": 0.5},  # "false" twice; golds false, true
    "arc_challenge": {"match": 0.5, "selfrag_match": 0.5, "choice_accuracy": 0.5},  # "B" (gold) then "D"
    "squad": {"match": 0.5, "match_normalized": 0.5},  # "Paris" (gold) then "zzz"
    "demo": {k: HALF[k] for k in ("match", "match_normalized", "em", "f1")},  # "Paris" (gold) then "zzz"
    "asqa": ASQA, "alce_asqa": ASQA, "alce_qampari": QAMPARI, "alce_eli5": ELI5,
    "crag_t1": CRAG, "crag_t2": CRAG, "crag_t3": CRAG,
    "omnieval_auto": OMNIEVAL, "omnieval_human": OMNIEVAL,
}
NO_CITATIONS = {"citation_rec": 0.0, "citation_prec": 0.0, "citation_f1": 0.0}
# Self-RAG writes "<segment>." and the system makes it "<segment> [1].": only the last of the right answer's
# sentences is cited (ASQA: 1 of 3, ELI5: 1 of 3; the one citation entailed) and the wrong answer "zzz [1]." is
# cited and entailed by its passage: recall (1/3 + 1) / 2, precision (1 + 1) / 2, F1 2 * 66.7 * 100 / 166.7 = 80.
SELF_CITED = {"citation_rec": 200 / 3, "citation_prec": 100.0, "citation_f1": 80.0}
OVERRIDES: dict[tuple[str, str], dict[str, float | None]] = {
    # closed book shows no documents: every "[1]" points at nothing (ALCE scores it 0)
    **{("closed_book", task): NO_CITATIONS for task in ("asqa", "alce_asqa", "alce_qampari", "alce_eli5")},
    **{("selfrag", task): SELF_CITED for task in ("asqa", "alce_asqa", "alce_eli5")},
}


def expected(system: str, task: str) -> dict[str, float | None]:
    return {**EXPECTED[task], **OVERRIDES.get((system, task), {})}


def test_every_builtin_task_has_matrix_data_and_expected_values():
    missing = sorted(set(TASKS) - set(TASK_DATA))
    assert not missing, f"add a data builder for {missing} to TASK_DATA in tests/matrix_fixtures.py"
    missing = sorted(set(TASKS) - set(EXPECTED))
    assert not missing, f"add the expected metric values of {missing} to EXPECTED in tests/test_matrix.py"


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("system", SYSTEMS)
def test_cell_scores_the_scripted_answers_as_worked_out(system, task, tmp_path):
    config = RunConfig(**cell_config(task, system, tmp_path))
    reason = INTENDED_REFUSALS.get((system, task))
    if reason is not None:
        with pytest.raises(ConfigError, match=reason) as refused:
            Evaluator(config)
        assert "\n" not in str(refused.value) and not (tmp_path / "run").exists()
        return
    results = Evaluator(config).run().results
    assert results["complete"], results.get("failures")
    counts = results["counts"][task]
    assert counts["scored"] == counts["records"] == 2
    details = results["details"][task]
    assert not any(entry.get("n_errors") for entry in details.values()), details
    got = {key: entry["value"] for key, entry in details.items()}
    want = expected(system, task)
    assert set(got) == set(want), f"metric keys changed: got {sorted(got)}, expected {sorted(want)}"
    assert got == {key: pytest.approx(value, abs=1e-9) if value is not None else None
                   for key, value in want.items()}
