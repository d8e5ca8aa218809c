"""CRAG auto-evaluation (accuracy, hallucination, missing, score) and human-label Score_h.

Per prediction, exactly as both upstream evaluators (`local_evaluation.py` of the KDD Cup 2024
starter kit and of facebookresearch/CRAG) do it:
  1. cut the prediction to 75 Llama-2 tokens (encode, drop BOS, keep 75, decode), then strip;
  2. missing iff the lower-cased text contains "i don't know" (ASCII apostrophe; nothing else
     counts as missing - not "I don’t know", not an apology, not an empty answer);
  3. exact match (lower-cased, stripped) => accurate;
  4. otherwise ask the judge; a reply that does not parse, or a call that fails after the
     engine's retries, is "not accurate" and so counts as a hallucination (both are counted and
     shown: `judge_unparsed`, and the failed calls among the infrastructure failures).
Judge protocols:
  kddcup2024  (default) starter kit: gold = `answer` only (alt_ans ignored), Accuracy-JSON prompt,
              the whole reply lower-cased and `json.loads`-ed; accurate iff "accuracy" is true.
  crag_repo   facebookresearch/CRAG as intended (its file crashes as published): gold = [answer] +
              alt_ans, one by one: exact match, "invalid" in both => accurate, "invalid" in one =>
              next gold, else judge; score-JSON prompt, regex on the last {...} block.
Several judges (`--judge A --judge B`) are averaged per example, which equals the paper's
average of per-judge accuracy / hallucination / missing / score.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from ragbench.api import EngineError, Example, KeySpec, Metric, MetricDeclaration, Prediction, Scores
from ragbench.api.data import JsonObject, parse_json, tokenizer_in_context

from ..shared.cut_tokenizer import CutTokenizer
from .prompts import judge_prompt

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MAX_PREDICTION_TOKENS = 75
MISSING_PHRASE = "i don't know"
TOKENIZER_ENV = "CRAG_LLAMA2_TOKENIZER"
TOKENIZER = CutTokenizer(
    TOKENIZER_ENV,
    "llama2_tokenizer",
    "CRAG scoring cuts predictions to 75 Llama-2 tokens and needs that tokenizer",
    "facebookresearch/CRAG tokenizer/",
)


@lru_cache(maxsize=4)
def llama2_tokenizer(path: str) -> Tokenizer:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(Path(path) / "tokenizer.json"))


def tokenizer_dir(ctx: Any) -> str:
    """The Llama-2 tokenizer folder: the task's `tokenizer` option, else $CRAG_LLAMA2_TOKENIZER."""
    return tokenizer_in_context(
        ctx,
        TOKENIZER_ENV,
        "CRAG auto-eval needs the Llama-2 tokenizer folder: --task-arg tokenizer=DIR "
        f"(facebookresearch/CRAG tokenizer/) or ${TOKENIZER_ENV}",
    )


def truncate_prediction(text: str, tokenizer_path: str) -> str:
    """local_evaluation.py trim_predictions_to_max_token_length, then `.strip()`: token ids
    1..75 of the encoding (position 0 is BOS), decoded without skipping special tokens."""
    tokenizer = llama2_tokenizer(tokenizer_path)
    ids = tokenizer.encode(text).ids[1 : MAX_PREDICTION_TOKENS + 1]
    return tokenizer.decode(ids, skip_special_tokens=False).strip()


def cut_to_tokens(text: str, max_tokens: int, tokenizer_path: str) -> str:
    """The first `max_tokens` Llama-2 tokens of `text` (the straightforward-RAG windows)."""
    tokenizer = llama2_tokenizer(tokenizer_path)
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    return text if len(ids) <= max_tokens else tokenizer.decode(ids[:max_tokens], skip_special_tokens=False)


def read_kddcup2024(reply: str | None) -> bool | None:
    """Starter kit parse_response: lower-case, json.loads, "accuracy" is true or "true"; None when
    the reply does not parse (upstream then scores it not accurate)."""
    if not reply:  # `if response:` - an empty or missing reply is never parsed
        return None
    try:
        data = parse_json(reply.lower())
    except ValueError:
        return None
    if not isinstance(data, dict) or "accuracy" not in data:
        return None
    value = data["accuracy"]
    return value is True or (isinstance(value, str) and value.lower() == "true")


def parse_kddcup2024(reply: str | None) -> bool:
    return read_kddcup2024(reply) is True


_BRACES = re.compile(r"{([^}]*)}")
_SCORE = re.compile(r'"score"\s*:\s*(\d+)')


def read_crag_repo(reply: str | None) -> bool | None:
    """CRAG repo parse_response: the last brace block without a nested "}", its "score": digits;
    1 => accurate, other numbers => not accurate, no score => None (upstream: not accurate)."""
    if not reply:
        return None
    blocks = _BRACES.findall(reply)
    text = "{" + blocks[-1] + "}" if blocks else ""
    match = _SCORE.search(text)
    return int(match.group(1)) == 1 if match else None


def parse_crag_repo(reply: str | None) -> bool:
    return read_crag_repo(reply) is True


class CragAutoEval(Metric):
    """Protocol `kddcup2024` (the default; see the module docstring)."""

    name = "crag"
    declares = MetricDeclaration(
        gold_needs=("crag_answer",),
        needs=("judge",),
        keys=("accuracy", "hallucination", "missing", "score", "exact_accuracy"),
        # shares of the examples: accurate, hallucinated and missing add up to 1; score = accuracy - hallucination
        value_range=(0, 1),
        key_specs={
            "hallucination": KeySpec(False, (0, 1)),
            "missing": KeySpec(False, (0, 1)),
            "score": KeySpec(True, (-1, 1)),
        },
        counters={
            "judge_unparsed": "judge replies that did not parse, scored not accurate (a hallucination) as upstream does"
        },
    )
    protocol: ClassVar[str] = "kddcup2024"
    # upstream sets no temperature (API default 1.0) and asks for response_format json_object
    judge_sampling: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"temperature": 1.0, "max_tokens": 512, "json_mode": True}
    )

    def config(self) -> JsonObject:
        return {"name": self.name, "protocol": self.protocol, "judge_sampling": dict(self.judge_sampling)}

    def ground_truths(self, example: Example) -> list[str]:
        return [str(example.gold.get("answer", "")).strip()]

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        # in the run's worker processes (a thread outside a run): loading the Llama-2 tokenizer takes
        # ~0.25 s, not on the event loop
        resources = getattr(ctx, "resources", None)
        cut = resources.workers.run if resources is not None else asyncio.to_thread
        text = await cut(truncate_prediction, prediction.answer, tokenizer_dir(ctx))
        lowered = text.lower()
        if MISSING_PHRASE in lowered:
            return self.row(accurate=0.0, missing=True, exact=False)
        decided = self.rule_verdict(example, lowered)
        if decided is not None:
            return self.row(accurate=float(decided), missing=False, exact=decided)
        judges = ctx.judges_for(self)
        count = getattr(ctx, "count", None) or (lambda name: None)
        verdicts = await asyncio.gather(*(self.judge_row(judge, example, text, lowered, count) for judge in judges))
        return self.row(accurate=sum(verdicts) / len(verdicts), missing=False, exact=False)

    def row(self, accurate: float, missing: bool, exact: bool) -> Scores:
        missing_value = 1.0 if missing else 0.0
        hallucination = 1.0 - accurate - missing_value
        out: Scores = {
            "accuracy": accurate,
            "hallucination": hallucination,
            "missing": missing_value,
            "score": accurate - hallucination,
        }
        if "exact_accuracy" in self.declares.keys:
            out["exact_accuracy"] = 1.0 if exact else 0.0
        return out

    def rule_verdict(self, example: Example, lowered: str) -> bool | None:
        """Starter kit: an exact match is accurate (counted in `exact_accuracy`); else the judge."""
        return True if lowered == self.ground_truths(example)[0].lower() else None

    async def judge_row(
        self, judge: Any, example: Example, prediction: str, lowered: str, count: Callable[[str], None]
    ) -> bool:
        return await self.ask(judge, example, self.ground_truths(example)[0], prediction, read_kddcup2024, count)

    async def ask(
        self,
        judge: Any,
        example: Example,
        ground_truth: str,
        prediction: str,
        read: Callable[[str | None], bool | None],
        count: Callable[[str], None],
    ) -> bool:
        """The judge's verdict; a reply `read` cannot parse is not accurate (upstream) and counted."""
        prompt = judge_prompt(self.protocol)
        messages = [
            {"role": "system", "content": prompt["system"]},
            {
                "role": "user",
                "content": prompt["user_template"].format(
                    query=example.question, ground_truth=ground_truth, prediction=prediction
                ),
            },
        ]
        try:
            response = await judge.chat(messages, step=f"judge:{self.protocol}", **self.judge_sampling)
        except EngineError:  # upstream: attempt_api_call returns None => not accurate
            return False
        verdict = read(response.text)
        if verdict is None:
            count("judge_unparsed")
        return verdict is True


def _invalid_rule(lowered: str, gold_lower: str) -> bool | None:
    """CRAG repo, per ground truth: exact match or "invalid" in both => accurate; "invalid" in
    exactly one => this ground truth fails without a judge; otherwise None (ask the judge)."""
    if lowered == gold_lower or ("invalid" in lowered and "invalid" in gold_lower):
        return True
    if ("invalid" in lowered) != ("invalid" in gold_lower):
        return False
    return None


class CragRepoAutoEval(CragAutoEval):
    """Protocol `crag_repo`: facebookresearch/CRAG local_evaluation.py with its crashes fixed
    (prediction_lowercase assigned before use; ground truths = [answer] + alt_ans, each stripped)."""

    name = "crag_repo"
    declares = dataclasses.replace(
        CragAutoEval.declares,
        keys=("accuracy", "hallucination", "missing", "score"),
    )
    protocol = "crag_repo"
    judge_sampling = MappingProxyType({"temperature": 0.0, "max_tokens": 512, "json_mode": True})  # local_evaluation.py

    def ground_truths(self, example: Example) -> list[str]:
        return [str(g).strip() for g in [example.gold.get("answer", ""), *(example.gold.get("alt_ans") or [])]]

    def rule_verdict(self, example: Example, lowered: str) -> bool | None:
        """The upstream loop up to its first judge call: True if a rule accepts a ground truth
        before any needs the judge, False if rules reject them all, None otherwise."""
        for gold in self.ground_truths(example):
            verdict = _invalid_rule(lowered, gold.lower())
            if verdict is not False:
                return verdict
        return False

    async def judge_row(
        self, judge: Any, example: Example, prediction: str, lowered: str, count: Callable[[str], None]
    ) -> bool:
        """The upstream loop over ground truths in order; the first success stops it."""
        for gold in self.ground_truths(example):
            verdict = _invalid_rule(lowered, gold.lower())
            if verdict is None:
                verdict = await self.ask(judge, example, gold, prediction, read_crag_repo, count)
            if verdict:
                return True
        return False


HUMAN_SCORES = {"perfect": 1.0, "acceptable": 0.5, "missing": 0.0, "incorrect": -1.0}
# The human label on the auto-eval's three-way scale (paper section 4.1: perfect and acceptable are accurate).
HUMAN_AUTO_EVAL = {"perfect": 1.0, "acceptable": 1.0, "missing": 0.0, "incorrect": -1.0}


class CragHumanEval(Metric):
    """Score_h from human labels (paper section 4.1): perfect 1, acceptable 0.5, missing 0,
    incorrect -1, averaged. The label comes with the prediction (`label` in a predictions file
    scored by `ragbench score`); predictions without one are not scorable here. The same label on the
    auto-eval's scale (`human_accuracy`: perfect or acceptable; `human_score`: accurate 1, missing 0,
    incorrect -1) is what results.json's `human_agreement` checks the crag / crag_repo judge against."""

    name = "crag_human"
    declares = MetricDeclaration(
        gold_needs=("crag_answer",),
        keys=("score_h", "human_accuracy", "human_score"),
        value_range=(-1, 1),
        human_labels_for={"human_accuracy": "accuracy", "human_score": "score"},
    )

    def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        label = prediction.extras.get("label")
        if label is None:
            return {key: None for key in self.declares.keys}
        label = str(label).strip().lower()
        if label not in HUMAN_SCORES:
            raise ValueError(f"label {label!r} is not one of {', '.join(HUMAN_SCORES)}")
        auto_eval = HUMAN_AUTO_EVAL[label]
        return {"score_h": HUMAN_SCORES[label], "human_accuracy": float(auto_eval == 1.0), "human_score": auto_eval}
