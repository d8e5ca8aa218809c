"""KILT's metrics (facebookresearch/KILT kilt/eval_downstream.py and kilt/eval_retrieval.py), per example,
reproduced exactly; tests/tasks/kilt/test_kilt_metrics.py pins them to values from running those files.

- `kilt_downstream`: accuracy (the stripped output is one of the gold answers, as written), em and f1
  (SQuAD normalisation, max over the gold answers) and rougel (the `rouge` package's ROUGE-L F, as
  upstream calls it: no normalisation, sentences split at every "."). The gold answers are KILT's
  `get_gold_answers`: the outputs' answers, stripped, empty ones dropped. An empty output scores 0. The output is
  scored whole, as upstream reads it ("SUPPORTS." is not the answer SUPPORTS); `extract=first_line` scores its first
  line, `extract=fever_label` the first SUPPORTS or REFUTES in it (both not KILT's: a named departure).
- `kilt_retrieval`: page-level R-precision and recall@k of the documents the system showed, each
  document's page being its `metadata["wikipedia_id"]` (a KILT knowledge-source corpus carries it), and
  the KILT-scores: a downstream value counts only where R-precision is 1 (else 0).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Annotated, Any, Literal

from annotated_types import Ge

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Scores, ScoringContext
from ragbench.api.data import JsonObject
from ragbench.api.text import normalize_answer, token_f1

DOWNSTREAM_KEYS = ("accuracy", "em", "f1", "rougel")
PAGE_KEY = "wikipedia_id"  # Document.metadata: the Wikipedia page a passage is from (KILT's rank key)
Extract = Literal["none", "first_line", "fever_label"]
FEVER_LABEL = re.compile("SUPPORTS|REFUTES")


def gold_answers(example: Example) -> set[str]:
    """eval_downstream.py `get_gold_answers`: every non-empty answer, stripped."""
    answers = example.gold.get("answers") or []
    return {answer.strip() for answer in answers if isinstance(answer, str) and answer.strip()}


def rouge_l(prediction: str, gold: str) -> float:
    """eval_downstream.py `_rougel_score`: `rouge.Rouge().get_scores(...)["rouge-l"]["f"]`, 0 where the
    package refuses an empty hypothesis or reference (only ROUGE-L asked for: its value is the same)."""
    try:
        from rouge import Rouge
    except ImportError as exc:
        raise ConfigError(f"KILT's ROUGE-L needs the rouge package ({exc}); run `pip install ragbench[kilt]`") from exc
    try:
        f1: float = Rouge(metrics=["rouge-l"]).get_scores(prediction, gold, avg=True)["rouge-l"]["f"]
        return f1
    except ValueError:  # "Hypothesis is empty." and the like, as upstream catches it
        return 0.0


def extracted(answer: str, extract: Extract) -> str:
    """The part of the answer that is scored: all of it (`none`, as eval_downstream.py), its first line, or the
    first SUPPORTS or REFUTES in it (all of it where there is none)."""
    if extract == "first_line":
        return answer.strip().split("\n", 1)[0]
    if extract == "fever_label":
        found = FEVER_LABEL.search(answer)
        return found.group(0) if found else answer
    return answer


def downstream(example: Example, prediction: Prediction, extract: Extract = "none") -> Scores:
    """eval_downstream.py `_calculate_metrics` for one example (the answer's part `extract`). No gold answer:
    not scorable (upstream's max over no answers raises)."""
    golds = gold_answers(example)
    if not golds:
        return dict.fromkeys(DOWNSTREAM_KEYS)
    guess = extracted(prediction.answer, extract).strip()
    if not guess:
        return dict.fromkeys(DOWNSTREAM_KEYS, 0.0)
    return {
        "accuracy": float(guess in golds),
        "em": float(max(normalize_answer(guess) == normalize_answer(gold) for gold in golds)),
        "f1": max(token_f1(guess, gold) for gold in golds),
        "rougel": max(rouge_l(guess, gold) for gold in golds),
    }


def extract_config(name: str, extract: Extract) -> JsonObject:
    return {"name": name, "extract": extract} if extract != "none" else {"name": name}


class KiltDownstream(Metric):
    name = "kilt_downstream"
    declares = MetricDeclaration(
        keys=DOWNSTREAM_KEYS,
        gold_needs=("answers",),
        value_range=(0, 1),
    )

    def __init__(self, extract: Extract = "none") -> None:
        self.extract = extract

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        return downstream(example, prediction, self.extract)

    def config(self) -> JsonObject:
        return extract_config(self.name, self.extract)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def gold_pages(provenance: Any) -> list[list[str]]:
    """eval_retrieval.py `_get_ids_list` of the gold: per output with provenance, its pages' ids in order,
    once each (an item without a wikipedia_id is left out)."""
    return [
        _unique([str(item[PAGE_KEY]).strip() for item in evidence if PAGE_KEY in item]) for evidence in provenance or []
    ]


def evidence_sets(provenance: Any) -> list[set[str]]:
    """`get_rank`'s distinct evidence sets, in order (an item without a wikipedia_id counts as the page "",
    as upstream's join makes it)."""
    sets: list[set[str]] = []
    for evidence in provenance or []:
        pages = {str(item[PAGE_KEY]).strip() if PAGE_KEY in item else "" for item in evidence}
        if pages not in sets:
            sets.append(pages)
    return sets


def shown_pages(prediction: Prediction) -> list[str]:
    """The pages of the shown documents in order, once each (upstream's guess provenance)."""
    pages = []
    for doc in prediction.docs:
        page = doc.metadata.get(PAGE_KEY)
        if page is None:
            raise ValueError(
                f"document {doc.id!r} has no {PAGE_KEY} in its metadata: retrieve from an index of "
                "KILT's knowledge source (docs/benchmarks/kilt.md) or give each document its wikipedia_id"
            )
        pages.append(str(page).strip())
    return _unique(pages)


def r_precision(guess: list[str], gold: list[list[str]]) -> float:
    """`rprecision`: the best over the outputs of the share of the first R guessed pages among the R gold ones."""
    return max(
        (sum(page in pages for page in guess[: len(pages)]) / len(pages) if pages else 0.0 for pages in gold),
        default=0.0,
    )


def recall_at_k(guess: list[str], provenance: Any, k: int) -> float:
    """`get_rank` + `_recall_at_k`: each evidence set counts as one point of the rank, True at the guess that
    completes it; recall@k is the completed sets in the first k points over the distinct sets."""
    sets = evidence_sets(provenance)
    if not guess or not sets:
        return 0.0
    rank: list[Any] = []
    for page in guess:
        found = False
        for index, pages in enumerate(sets):
            if page in pages:
                found = True
                marker = f"evidence_set:{index}"
                if marker in rank:
                    rank.remove(marker)
                pages.remove(page)
                rank.append(True if not pages else marker)
        if not found:
            rank.append(False)
    return rank[:k].count(True) / len(sets)


class KiltRetrieval(Metric):
    """R-precision and recall@k (`k`, default 5 as eval_downstream.py reports it) of the shown pages, and
    the KILT-scores (kilt_accuracy, kilt_em, kilt_f1, kilt_rougel; of the answer's part `extract`). A record whose
    outputs have no provenance scores 0, as upstream; one without outputs is not scorable (upstream raises); outputs
    scored from a file that does not say which documents were shown fail (counted)."""

    name = "kilt_retrieval"
    declares = MetricDeclaration(
        gold_needs=("answers", "provenance"),
        value_range=(0, 1),
    )

    def __init__(self, k: Annotated[int, Ge(1)] = 5, extract: Extract = "none") -> None:
        self.k = k
        self.extract = extract
        self.declares = dataclasses.replace(
            self.declares, keys=("rprec", f"recall_at_{k}", *(f"kilt_{key}" for key in DOWNSTREAM_KEYS))
        )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        prediction.shown_docs("KILT's retrieval (each document with its wikipedia_id)")
        provenance = example.gold.get("provenance")
        if provenance == []:  # the record has no outputs (output.provenance of []): upstream's max() over none raises
            return dict.fromkeys(self.declares.keys)
        guess = shown_pages(prediction)
        rprec = r_precision(guess, gold_pages(provenance))
        counts = rprec == 1 or not gold_answers(example)  # no gold answer: not scorable either way
        values = downstream(example, prediction, self.extract) if counts else dict.fromkeys(DOWNSTREAM_KEYS, 0.0)
        return {
            "rprec": rprec,
            f"recall_at_{self.k}": recall_at_k(guess, provenance, self.k),
            **{f"kilt_{key}": value for key, value in values.items()},
        }

    def config(self) -> JsonObject:
        return {**extract_config(self.name, self.extract), "k": self.k}
