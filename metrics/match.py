"""Answer matching as Self-RAG computes it (retrieval_lm/metrics.py, run_short_form.py), plus a
normalised variant. Upstream functions are reproduced exactly, quirks included; the tests pin
them to values produced by running the upstream code.

`em` and `f1` normalise as SQuAD does by default; `normalize=triviaqa` uses TriviaQA's official
evaluation (triviaqa_evaluation.py `normalize_answer`), whose `NormalizedAliases` were made with it."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any, Literal

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Score, ScoringContext
from ragbench.api.data import JsonObject
from ragbench.api.text import normalize_answer, token_f1

_TRIVIAQA_PUNCTUATION = frozenset(string.punctuation + "‘’´`")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_triviaqa(text: str) -> str:
    """TriviaQA's `normalize_answer`: underscores to spaces, lowercase, every punctuation mark (ASCII
    and ‘ ’ ´ `) to a space - SQuAD's deletes them: "Bob's" is "bob s" here, "bobs" there - then
    articles dropped and whitespace collapsed."""
    text = "".join(" " if ch in _TRIVIAQA_PUNCTUATION else ch for ch in text.replace("_", " ").lower())
    return " ".join(_ARTICLES.sub(" ", text).split())


NORMALIZERS: dict[str, Callable[[str], str]] = {"squad": normalize_answer, "triviaqa": normalize_triviaqa}


def raw_match(prediction: str, golds: list[str]) -> int:
    """Self-RAG `match`: 1 if any gold is a raw, case-sensitive substring of the prediction."""
    return int(any(gold in prediction for gold in golds))


def exact_match(prediction: str, gold: str, normalize: Callable[[str], str] = normalize_answer) -> bool:
    return normalize(prediction) == normalize(gold)


def golds_of(example: Example) -> list[str]:
    return list(example.gold.get("answers") or [])


class AnswerMetric(Metric):
    """A metric of the answer against the gold answers, valued in [0, 1] (1 is right)."""

    declares = MetricDeclaration(
        gold_needs=("answers",),
        value_range=(0, 1),
    )


class Match(AnswerMetric):
    name = "match"

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        return float(raw_match(prediction.answer, golds_of(example)))


class SelfRagMatch(AnswerMetric):
    """run_short_form.py main(), per row: drop a leading "#" or ":", turn an output containing
    "SUPPORTS" into "true" (else "REFUTES" into "false") whatever the task, then `match`.
    Upstream crashes on an empty output (IndexError); here it scores 0."""

    name = "selfrag_match"

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        text = prediction.answer
        if not text:
            return 0.0
        if text[0] in "#:":
            text = text[1:]
        if "SUPPORTS" in text:
            text = "true"
        elif "REFUTES" in text:
            text = "false"
        return float(raw_match(text, golds_of(example)))


class NormalizedMatch(AnswerMetric):
    """Fixed `match`: SQuAD-normalised gold inside the SQuAD-normalised output, on word boundaries
    ("pol" no longer matches "police"); empty golds are ignored."""

    name = "match_normalized"

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        output = f" {normalize_answer(prediction.answer)} "
        golds = [normalize_answer(g) for g in golds_of(example)]
        return float(any(gold and f" {gold} " in output for gold in golds))


class NormalizedAnswerMetric(AnswerMetric):
    """A metric whose answer normalisation is chosen: `normalize=squad` (default) or `triviaqa`."""

    def __init__(self, normalize: Literal["squad", "triviaqa"] = "squad") -> None:
        if normalize not in NORMALIZERS:
            raise ConfigError(f"metric {self.name}: normalize '{normalize}' is not one of {', '.join(NORMALIZERS)}")
        self.normalize = normalize
        self.normalizer = NORMALIZERS[normalize]

    def config(self) -> JsonObject:
        return {"name": self.name, "normalize": self.normalize}


# How long one gold pattern may take to match: CuratedTREC's take microseconds; one that backtracks
# catastrophically would hang the run, as it hangs FlashRAG's evaluation (`regex` matches "(a*)*b" at once
# where `re` takes 2.2 s over 24 characters, but "(.*){1,32000}[bc]" defeats both: 2 s with `re` at 22
# characters, doubling with each one).
REGEX_SECONDS = 1.0


def regex_module(metric: str) -> Any:
    """The `regex` package (re's syntax and matching, VERSION0, with a time limit `re` lacks)."""
    try:
        import regex
    except ImportError:
        raise ConfigError(
            f"metric {metric}: regex=true matches gold patterns with the `regex` package, for its time "
            "limit: pip install 'ragbench[flashrag]'"
        ) from None
    return regex


def gold_matches(gold: str, output: str, whole: bool) -> bool:
    """Whether `gold`, a regular expression (CuratedTREC's), matches `output` case-insensitively as FlashRAG's
    `em` (`whole`: all of it, re.fullmatch) and `acc` (anywhere, re.search) match it. A pattern that does not
    compile, or takes over REGEX_SECONDS to match, fails the example's score (counted): the first stops
    FlashRAG's evaluation, the second hangs it."""
    regex = regex_module("em/cover_em")
    try:
        pattern = regex.compile(gold, regex.IGNORECASE | regex.VERSION0)
    except regex.error as exc:
        raise ValueError(f"gold answer {gold!r} is not a regular expression ({exc})") from exc
    try:
        return (pattern.fullmatch if whole else pattern.search)(output, timeout=REGEX_SECONDS) is not None
    except TimeoutError:
        raise ValueError(
            f"gold answer {gold!r} took over {REGEX_SECONDS:g} s to match (a pattern that backtracks "
            "catastrophically); fix the pattern in the data"
        ) from None


class RegexAnswerMetric(NormalizedAnswerMetric):
    """A metric whose gold answers may be regular expressions (`regex=true`), matched against the normalised
    output as written (FlashRAG does so for CuratedTREC)."""

    def __init__(self, normalize: Literal["squad", "triviaqa"] = "squad", regex: bool = False) -> None:
        super().__init__(normalize)
        self.regex = bool(regex)
        if self.regex:
            regex_module(self.name)

    def config(self) -> JsonObject:
        return {**super().config(), "regex": True} if self.regex else super().config()


class ExactMatch(RegexAnswerMetric):
    """Self-RAG `metric_max_over_ground_truths(exact_match_score, ...)`. No golds: not scorable
    (upstream raises). `regex=true`: a gold pattern matching the whole normalised output (FlashRAG's `em` on
    CuratedTREC, `re.fullmatch`)."""

    name = "em"

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        golds = golds_of(example)
        if not golds:
            return None
        if self.regex:
            output = self.normalizer(prediction.answer)
            return float(any(gold_matches(g, output, whole=True) for g in golds))
        return float(max(exact_match(prediction.answer, g, self.normalizer) for g in golds))


class TokenF1(NormalizedAnswerMetric):
    """Token F1, max over the golds. `empty_agree=true`: an answer and a gold that both normalise to
    nothing ("", "the", "!") score 1, as MuSiQue's evaluation (SQuAD v2.0's `compute_f1`) does;
    Self-RAG, HotpotQA and TriviaQA score them 0 (the default)."""

    name = "f1"

    def __init__(self, normalize: Literal["squad", "triviaqa"] = "squad", empty_agree: bool = False) -> None:
        super().__init__(normalize)
        self.empty_agree = bool(empty_agree)

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        golds = golds_of(example)
        return max(token_f1(prediction.answer, g, self.normalizer, self.empty_agree) for g in golds) if golds else None

    def config(self) -> JsonObject:
        return {**super().config(), "empty_agree": True} if self.empty_agree else super().config()
