"""FlashRAG's `bleu` (flashrag/evaluator/metrics.py `BLEU`): the output and every gold answer cut into tokens
by the 13a tokenizer (FlashRAG's _bleu.py copies sacrebleu's `Tokenizer13a`, used here: the tokens are equal
on every text of the parity data), scored by tensorflow/nmt's `compute_bleu` (`nmt_bleu`).
FlashRAG's number is the corpus BLEU over all examples (`bleu`, a corpus key); its per-example list is
`sentence_bleu`. tests/tasks/flashrag/test_flashrag_bleu_tokens.py pins both to values from running upstream's files."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable

from ragbench.api import ConfigError, CorpusValue, Example, Prediction, SampleRecord, Scores, ScoringContext
from ragbench.api.data import JsonObject

from .match import AnswerMetric, golds_of

EMPTY_OUTPUT = "bleu_empty_output"


def tokenizer_13a() -> Callable[[str], list[str]]:
    """sacrebleu's Tokenizer13a as FlashRAG's copy returns it: a list of tokens (sacrebleu joins them by spaces)."""
    try:
        from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    except ImportError as exc:
        raise ConfigError(f"FlashRAG's BLEU needs sacrebleu ({exc}); run `pip install ragbench[flashrag]`") from exc
    tokenizer = Tokenizer13a()  # type: ignore[no-untyped-call]  # sacrebleu leaves its __init__ unannotated
    return lambda text: tokenizer(text).split()


def ngram_counts(tokens: list[str], max_order: int) -> Counter[tuple[str, ...]]:
    return Counter(
        tuple(tokens[i : i + order]) for order in range(1, max_order + 1) for i in range(len(tokens) - order + 1)
    )


def nmt_bleu(
    references: list[list[list[str]]], outputs: list[list[str]], max_order: int = 4, smooth: bool = False
) -> float:
    """tensorflow/nmt's `compute_bleu` (FlashRAG's _bleu.py): n-gram matches clipped by the most of each n-gram in
    any one reference, summed over the examples; the brevity penalty over the sum of each example's SHORTEST
    reference length; `smooth`: Lin and Och's add-one on every order. Written here because no installable
    library computes it: sacrebleu's BLEU and nltk's corpus_bleu take the reference length closest to each
    output's (measured on parity case shortest_reference_not_closest: 0.6911 from both, 0.8165 here as in
    FlashRAG) and smooth otherwise; Hugging Face evaluate's `bleu` is this code but loads its script from the
    Hub at run time. Where FlashRAG divides by zero on outputs without tokens, the brevity penalty is its limit,
    0. Each example needs a reference with tokens (FlashRAG: a reference of none divides by zero)."""
    matches, possible = [0] * max_order, [0] * max_order
    reference_length = output_length = 0
    for refs, output in zip(references, outputs):
        reference_length += min(len(ref) for ref in refs)
        output_length += len(output)
        merged: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            merged |= ngram_counts(ref, max_order)
        for ngram, count in (ngram_counts(output, max_order) & merged).items():
            matches[len(ngram) - 1] += count
        for order in range(1, max_order + 1):
            possible[order - 1] += max(0, len(output) - order + 1)
    if smooth:
        precisions = [(m + 1.0) / (p + 1.0) for m, p in zip(matches, possible)]
    else:
        precisions = [m / p if p > 0 else 0.0 for m, p in zip(matches, possible)]
    geo_mean = math.exp(sum((1.0 / max_order) * math.log(p) for p in precisions)) if min(precisions) > 0 else 0.0
    ratio = output_length / reference_length
    penalty = 1.0 if ratio > 1.0 else math.exp(1 - 1.0 / ratio) if ratio > 0 else 0.0
    return geo_mean * penalty


class FlashRagBleu(AnswerMetric):
    """FlashRAG's `bleu` (`bleu_max_order` 4, `bleu_smooth` false: `max_order`, `smooth`): `bleu` the corpus
    BLEU over the scorable examples, `sentence_bleu` each one's. Golds without 13a tokens are left out (in
    FlashRAG one divides by zero) and an example with no gold left is not scorable. An output without tokens
    scores 0 and is in the corpus (its shortest gold's length in the brevity penalty), as FlashRAG's corpus
    step computes it; FlashRAG's per-example step divides by zero on it: counted."""

    name = "bleu"
    declares = dataclasses.replace(
        AnswerMetric.declares,
        keys=("sentence_bleu",),
        corpus_keys=("bleu",),
        counters={EMPTY_OUTPUT: "outputs without a 13a token, scored 0 (FlashRAG's per-example BLEU divides by zero)"},
    )

    def __init__(self, max_order: int = 4, smooth: bool = False) -> None:
        if not isinstance(max_order, int) or isinstance(max_order, bool) or max_order < 1:
            raise ConfigError(f"metric bleu: max_order must be a whole number from 1, got {max_order!r}")
        if not isinstance(smooth, bool):
            raise ConfigError(f"metric bleu: smooth must be true or false, got {smooth!r}")
        self.max_order, self.smooth = max_order, smooth
        self.tokenize = tokenizer_13a()

    def tokens(self, answer: str, golds: list[str]) -> tuple[list[str], list[list[str]]]:
        """The output's tokens and those of each gold that has any."""
        return self.tokenize(answer), [tokens for tokens in map(self.tokenize, golds) if tokens]

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        output, refs = self.tokens(prediction.answer, golds_of(example))
        if not refs:
            return {"sentence_bleu": None}
        if not output:
            getattr(ctx, "count", lambda name: None)(EMPTY_OUTPUT)
        return {"sentence_bleu": nmt_bleu([refs], [output], self.max_order, self.smooth)}

    def corpus(self, samples: list[SampleRecord], seed: int) -> dict[str, CorpusValue]:
        pairs = [
            self.tokens(s.answer, list(s.gold.get("answers") or []))
            for s in samples
            if s.scores.get("sentence_bleu") is not None
        ]
        if not pairs:
            return {"bleu": CorpusValue(None, 0)}
        outputs, references = zip(*pairs)
        return {"bleu": CorpusValue(nmt_bleu(list(references), list(outputs), self.max_order, self.smooth), len(pairs))}

    def config(self) -> JsonObject:
        return {"name": self.name, "max_order": self.max_order, "smooth": self.smooth}
