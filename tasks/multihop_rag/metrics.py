"""MultiHop-RAG's metrics (yixuantt/MultiHop-RAG qa_evaluate.py and retrieval_evaluate.py), per example,
reproduced exactly; tests/tasks/multihop_rag/test_multihop_rag_metrics.py pins them to values from running those files.

- `multihop_rag_qa`: `accuracy`, qa_evaluate.py's `has_intersection`: the lower-cased output and gold
  answer, split at whitespace, share a word (no other normalisation: "yes." is not "yes"). An output
  holding "The answer" is first cut to the quoted text of `The answer to the question is "..."` when it
  has one. The mean over the examples is qa_evaluate.py's precision, recall and F1, which are all that
  share; its "accuracy" line (added 2025-04) is (tp + tn) / (tp + tn + fp + fn) with tn = n - tp and
  fn = n - tp, i.e. n / (3n - 2tp), 1/3 when nothing matches, and is not reproduced. An empty gold answer
  is not scorable (upstream leaves the query out).
- `multihop_rag_retrieval`: Hits@4, Hits@10, MAP@10 and MRR@10 of the shown documents against the
  evidence facts: spaces and newlines taken out of both, a document is relevant when a fact is a
  substring of it (the document as llama-index gives it to retrieval_evaluate.py: its metadata lines
  `title: ...`, `published_at: ...`, `source: ...`, a blank line, its text). MAP@10 is upstream's: at each
  relevant rank r, the facts found there for the first time over r, summed over the first 10 ranks and
  divided by min(facts, 10). Null queries are not scorable (upstream leaves them out), nor is a query
  without evidence (upstream divides by zero).
"""

from __future__ import annotations

import re
from typing import Any

from ragbench.api import Document, Example, Metric, MetricDeclaration, Prediction, Scores, ScoringContext

QUOTED_ANSWER = re.compile(r'The answer to the question is "(.*?)"')
NULL_QUERY = "null_query"
HITS_AT = (4, 10)
DEPTH = 10  # MAP@10, MRR@10: the first 10 documents shown
METADATA_LINES = ("published_at", "source")  # after the title, in the order the repository's JSONReader sets them
RETRIEVAL_KEYS = (*(f"hits_at_{k}" for k in HITS_AT), f"map_at_{DEPTH}", f"mrr_at_{DEPTH}")


def extracted_answer(output: str) -> str:
    """qa_evaluate.py `extract_answer` (which it applies where the output holds "The answer": any match of the
    pattern does)."""
    match = QUOTED_ANSWER.search(output)
    return match.group(1) if match else output


def shares_a_word(prediction: str, gold: str) -> bool:
    """qa_evaluate.py `has_intersection` of the lower-cased texts."""
    return bool(set(prediction.lower().split()) & set(gold.lower().split()))


class MultiHopRagQA(Metric):
    name = "multihop_rag_qa"
    declares = MetricDeclaration(
        keys=("accuracy",),
        gold_needs=("answers",),
        value_range=(0, 1),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        answers = example.gold.get("answers") or []
        if len(answers) > 1:  # qa_evaluate.py lower-cases the answer: a list there is a crash, not its first item
            raise ValueError(
                f"the record's answer is a list of {len(answers)} ({answers[0][:40]!r}, ...); "
                "MultiHop-RAG's answer is one string"
            )
        gold = answers[0] if answers else ""
        if not gold:
            return {"accuracy": None}
        return {"accuracy": float(shares_a_word(extracted_answer(prediction.answer), gold))}


def retrieved_text(doc: Document) -> str:
    """The document as simple_retrieval.py saves it (`get_content(metadata_mode=MetadataMode.LLM)`): its
    metadata as `key: value` lines, a blank line, its text; metadata it lacks is left out."""
    lines = [f"title: {doc.title}"] if doc.title else []
    lines += [f"{key}: {doc.metadata[key]}" for key in METADATA_LINES if key in doc.metadata]
    return "\n".join(lines) + "\n\n" + doc.text if lines else doc.text


def _compact(text: str) -> str:
    return text.replace(" ", "").replace("\n", "")


def retrieval_scores(retrieved: list[str], facts: list[str]) -> Scores:
    """retrieval_evaluate.py `calculate_metrics` for one query."""
    gold = [_compact(fact) for fact in facts]
    found: list[str] = []
    first_rank = None
    precision_sum = 0.0
    for rank, text in enumerate((_compact(text) for text in retrieved[:DEPTH]), start=1):
        if not any(fact in text for fact in gold):
            continue
        first_rank = first_rank or rank
        new = 0
        for fact in gold:  # a fact listed twice counts once, as upstream's find_gold
            if fact in text and fact not in found:
                new += 1
                found.append(fact)
        precision_sum += new / rank
    return {
        **{f"hits_at_{k}": float(first_rank is not None and first_rank <= k) for k in HITS_AT},
        f"map_at_{DEPTH}": precision_sum / min(len(gold), DEPTH),
        f"mrr_at_{DEPTH}": 1 / first_rank if first_rank else 0.0,
    }


def evidence_facts(evidence: Any) -> list[str]:
    """The evidence list's facts; an item without one (or not text) fails the example (counted), as upstream's
    KeyError."""
    items = evidence or []
    if not isinstance(items, list) or not all(
        isinstance(item, dict) and isinstance(item.get("fact"), str) for item in items
    ):
        raise ValueError(f'evidence_list: expected a list of {{"fact": text, ...}} objects, got {str(evidence)[:60]}')
    return [item["fact"] for item in items]


class MultiHopRagRetrieval(Metric):
    """Hits@4, Hits@10, MAP@10, MRR@10 of the documents shown, in order. Outputs scored from a file that
    does not say which documents were shown fail (counted), never a 0."""

    name = "multihop_rag_retrieval"
    declares = MetricDeclaration(
        keys=RETRIEVAL_KEYS,
        gold_needs=("evidence",),
        value_range=(0, 1),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        facts = evidence_facts(example.gold.get("evidence"))
        if example.meta.get("question_type") == NULL_QUERY or not facts:
            return dict.fromkeys(RETRIEVAL_KEYS)
        return retrieval_scores(
            [retrieved_text(doc) for doc in prediction.shown_docs("MultiHop-RAG's retrieval")], facts
        )
