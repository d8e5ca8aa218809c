"""ALCE citation recall, precision and F1 (eval.py `compute_autoais`), judged by `ctx.nli`.

Rules kept exactly as upstream (princeton-nlp/ALCE eval.py, commit 246c476):
- statements: Punkt sentences of the output (ASQA, ELI5), or for QAMPARI-style lists
  `question + " " + piece.strip()` for each comma-separated piece of
  `output.rstrip().rstrip(".").rstrip(",")`; an output without statements is skipped (None);
- a statement's citations are every `\\[\\d+` match anywhere in it, as `int - 1`: only the first
  number of "[1, 2]" or "[1-3]" is seen, and `[0]` becomes -1, i.e. the last shown document;
- no citation, or any citation past the shown documents (checked before truncation), gives
  recall 0; otherwise the first `at_most_citations` (3) are kept, duplicates included, their
  documents joined by "\\n" are the premise and the citation-free statement the hypothesis;
- precision: a statement with recall 1 and more than one kept citation earns a point per cited
  document unless that document alone does not entail it while the other cited documents (one
  occurrence removed) do; any other statement earns its recall value; item precision = points /
  kept citations (0 without any).
One deviation, where upstream crashes: `[0]` with no shown documents counts as out of range.
`citation_f1` is LLatrieval's eval.py addition: 2PR/(P+R) of the dataset-level P and R.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ragbench.api import (
    CorpusValue,
    Document,
    Example,
    Metric,
    MetricDeclaration,
    Prediction,
    SampleRecord,
    Scores,
)
from ragbench.api.data import JsonObject
from ragbench.api.text import cited_numbers, list_items, remove_citations, sent_tokenize


def answer_list_statements(question: str, output: str) -> list[str]:
    """QAMPARI statements: the question followed by each comma-separated answer."""
    return [question + " " + piece.strip() for piece in list_items(output)]


def format_document(doc: Document) -> str:
    """eval.py `_format_document`: the full passage (`sent` for QA-extracted docs), never a summary."""
    return f"Title: {doc.title}\n{doc.metadata.get('sent', doc.text)}"


def resolve(refs: list[int], n_docs: int) -> list[int] | None:
    """The 0-based indices if every citation is in range, else None (none given, or one too
    large; -1 from `[0]` indexes the last doc, as Python does upstream)."""
    if not refs or n_docs == 0 or any(ref >= n_docs for ref in refs):
        return None
    return refs


class MissingDocuments(ValueError):
    """Citations with no documents to check them against: an error, never a silent 0."""


def check_documents_known(prediction: Prediction) -> None:
    """Outputs scored from a predictions file without "docs": which documents the citations point to
    is unknown, so citation metrics fail (counted) instead of reporting upstream's 0 for every citation."""
    if prediction.extras.get(Prediction.DOCS_UNKNOWN) and cited_numbers(prediction.answer):
        raise MissingDocuments(
            'the answer cites documents but the predictions line has no "docs" (the documents '
            "shown to the model, in order): add them to score citations"
        )


async def citation_scores(
    statements: list[str], docs: list[Document], nli: Any, at_most_citations: int | None = 3
) -> Scores | None:
    """Per-item citation recall and precision (x100) of `statements` against the shown `docs`."""
    if not statements:
        return None
    targets = [remove_citations(statement).strip() for statement in statements]
    kept: list[list[int] | None] = []
    for statement in statements:
        refs = resolve([n - 1 for n in cited_numbers(statement)], len(docs))
        kept.append(refs[:at_most_citations] if refs is not None and at_most_citations is not None else refs)

    def passage(refs: list[int]) -> str:
        return "\n".join(format_document(docs[ref]) for ref in refs)

    recalls = await asyncio.gather(
        *(nli.entails(passage(refs), target) if refs is not None else _zero() for refs, target in zip(kept, targets))
    )
    checks = [
        (i, refs, position)
        for i, refs in enumerate(kept)
        if refs is not None and recalls[i] and len(refs) > 1
        for position in range(len(refs))
    ]
    alone = await asyncio.gather(*(nli.entails(passage([refs[p]]), targets[i]) for i, refs, p in checks))
    without = [(i, refs, p) for (i, refs, p), supported in zip(checks, alone) if not supported]
    others = await asyncio.gather(
        *(nli.entails(passage(_remove_one(refs, refs[p])), targets[i]) for i, refs, p in without)
    )
    overcited = sum(others)
    precision_points = (
        len(checks)
        - overcited
        + sum(recalls[i] for i, refs in enumerate(kept) if not (refs is not None and recalls[i] and len(refs) > 1))
    )
    total_citations = sum(len(refs) for refs in kept if refs is not None)
    return {
        "citation_rec": 100 * sum(recalls) / len(statements),
        "citation_prec": 100 * precision_points / total_citations if total_citations > 0 else 0.0,
    }


async def _zero() -> int:
    return 0


def _remove_one(refs: list[int], ref: int) -> list[int]:
    """`list.remove`: the first occurrence only, as eval.py's `subset_exclude.remove(psgs_id)`."""
    rest = list(refs)
    rest.remove(ref)
    return rest


class Citation(Metric):
    """ALCE citation recall/precision for prose answers (ASQA, ELI5): statements are sentences."""

    name = "citation"
    declares = MetricDeclaration(
        gold_needs=("citations",),
        keys=("citation_rec", "citation_prec"),
        corpus_keys=("citation_f1",),
        value_range=(0, 100),
        needs=("nli",),
    )

    def __init__(self, at_most_citations: int = 3) -> None:
        self.at_most_citations = int(at_most_citations)

    def statements(self, example: Example, answer: str) -> list[str]:
        return sent_tokenize(answer)

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        check_documents_known(prediction)
        scores = await citation_scores(
            self.statements(example, prediction.answer), prediction.docs, ctx.nli, self.at_most_citations
        )
        return scores if scores is not None else {key: None for key in self.declares.keys}

    def corpus(self, samples: list[SampleRecord], seed: int) -> dict[str, CorpusValue]:
        """F1 of the mean recall and precision over the examples that have both (an output without
        statements has neither: not scorable, left out and counted as such)."""
        pairs = [
            (s.scores["citation_rec"], s.scores["citation_prec"])
            for s in samples
            if s.scores.get("citation_rec") is not None and s.scores.get("citation_prec") is not None
        ]
        if not pairs:
            return {"citation_f1": CorpusValue(None, 0)}
        recall, precision = (sum(values) / len(pairs) for values in zip(*pairs))
        return {
            "citation_f1": CorpusValue(
                2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0, len(pairs)
            )
        }

    def config(self) -> JsonObject:
        return {"name": self.name, "at_most_citations": self.at_most_citations}


class ListCitation(Citation):
    """ALCE citation recall/precision for answer lists (QAMPARI): one statement per answer."""

    name = "citation_list"

    def statements(self, example: Example, answer: str) -> list[str]:
        return answer_list_statements(example.question, answer)
