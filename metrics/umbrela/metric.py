"""`umbrela`: each passage the system showed graded 0-3 for the question by the run's `--judge`, as castorini's
umbrela 0.0.7 grades a query's candidates with its GPTJudge (`judge`): one chat per passage, in the passages'
order, its system message and prompt (`prompt_type` bing, its default, or basic; zero-shot, or with
`few_shot_count` its few-shot prompt: bing's four fixed examples, or basic's drawn from qrels, examples.py), its sampling
(`sampling`), each reply read by its patterns (replies.py). An HTTP 400 is an empty reply, as umbrela's
BadRequestError is. Reported per example: the mean grade and the share of passages graded 2 or 3 (umbrela's
relevant, as its kappa binarises and trec_eval's `-l 2` reads its qrels); a reply with no digit 0-3 is graded 0 as
umbrela grades it, and counted (`umbrela_invalid`, umbrela's `result_status` 0)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragbench.api import (
    ConfigError,
    Example,
    KeySpec,
    Metric,
    MetricDeclaration,
    Prediction,
    Preflight,
    SampleRecord,
    Scores,
)
from ragbench.api.data import JsonObject
from ragbench.api.engines import RequestError, SamplingArgs

from ..segment_texts import SegmentTexts, existing_corpus
from .examples import examples_text
from .qrels_eval import JUDGED_STEP, count_pairs, declaration, holes, judge_cat, judged_pairs, kappas
from .replies import grade

PROMPTS = json.loads(Path(__file__).with_name("prompts.json").read_text(encoding="utf-8"))
MAX_TOKENS = 100  # umbrela's `judge` default
QRELS_MAX_TOKENS = 200  # what umbrela's qrel evaluation asks
REASONING_MAX_TOKENS = 4096  # umbrela's for reasoning models when max_tokens is its default
REASONING_MARKERS = ("o1", "o3", "o4", "gpt-5")  # anywhere in the model name, as umbrela tests it
SYSTEM_TO_USER_MARKERS = ("o1", "o3", "o4")


def reasoning_style(model: str) -> bool:
    return any(marker in model for marker in REASONING_MARKERS)


def messages(model: str, prompt: str) -> list[dict[str, str]]:
    """umbrela's chat: its system message, then the prompt; for o1/o3/o4 models one user message of both."""
    if any(marker in model for marker in SYSTEM_TO_USER_MARKERS):
        return [{"role": "user", "content": PROMPTS["system"] + "\n" + prompt}]
    return [{"role": "system", "content": PROMPTS["system"]}, {"role": "user", "content": prompt}]


UNSENT = ("n", "seed")  # umbrela's client sends neither


def sampling(model: str, max_tokens: int = MAX_TOKENS) -> SamplingArgs:
    """umbrela's chat.completions sampling, number for number as its body holds it: greedy (0.0) with top_p 1 (the
    int), max_tokens, frequency_penalty 0.5 and presence_penalty 0 (the int); or for a reasoning model temperature
    1.0, no top_p, no penalties and 4,096 max_completion_tokens; never n or a seed."""
    if reasoning_style(model):
        tokens = REASONING_MAX_TOKENS if max_tokens == MAX_TOKENS else max_tokens
        return {
            "temperature": 1.0,
            "max_tokens": tokens,
            "left_to_server": ("top_p", *UNSENT),
            "max_tokens_as": "max_completion_tokens",
        }
    return {
        "temperature": 0.0,
        "top_p": 1,
        "left_to_server": UNSENT,
        "max_tokens_as": "max_tokens",
        "frequency_penalty": 0.5,
        "presence_penalty": 0,
        "max_tokens": max_tokens,
    }


class Umbrela(Metric):
    name = "umbrela"
    declares = MetricDeclaration(
        keys=("umbrela", "umbrela_relevant"),
        needs=("judge",),
        judge_roles=("judge",),
        key_specs={"umbrela": KeySpec(True, (0, 3)), "umbrela_relevant": KeySpec(True, (0, 1))},
        counters={
            "umbrela_invalid": "passages whose judge reply holds no digit 0-3 (or was refused with HTTP 400): "
            "graded 0, as umbrela grades them (its result_status 0)"
        },
    )

    def __init__(
        self,
        prompt_type: str = "bing",
        k: int | None = None,
        max_tokens: int | None = None,
        few_shot_count: int = 0,
        few_shot_qrels: str | None = None,
        few_shot_topics: str | None = None,
        few_shot_corpus: str | None = None,
        few_shot_seed: int = 0,
        passages: str = "shown",
        corpus: str | None = None,
        judge_cat: str = "0123",
    ) -> None:
        if prompt_type not in PROMPTS["templates"]:
            raise ConfigError(f"metric umbrela: prompt_type '{prompt_type}' is not one of bing, basic")
        try:
            self.k = None if k is None else int(k)
            default = QRELS_MAX_TOKENS if passages == "qrels" else MAX_TOKENS
            self.max_tokens = default if max_tokens is None else int(max_tokens)
        except ValueError:
            raise ConfigError(
                f"metric umbrela: k and max_tokens are whole numbers, not {k!r}, {max_tokens!r}"
            ) from None
        if (self.k is not None and self.k < 1) or self.max_tokens < 1:
            raise ConfigError(f"metric umbrela: k and max_tokens must be 1 or more, not {k}, {max_tokens}")
        try:
            self.few_shot_count, self.few_shot_seed = int(few_shot_count), int(few_shot_seed)
        except ValueError:
            raise ConfigError(
                f"metric umbrela: few_shot_count and few_shot_seed are whole numbers, not {few_shot_count!r}, "
                f"{few_shot_seed!r}"
            ) from None
        if self.few_shot_count < 0:
            raise ConfigError(f"metric umbrela: few_shot_count must be 0 or more, not {few_shot_count}")
        self.prompt_type, self.passages = prompt_type, passages
        self.segments = self.qrels_evaluation(corpus, judge_cat)
        self.sources = {"qrels": few_shot_qrels, "topics": few_shot_topics, "corpus": few_shot_corpus}
        self.examples = self.few_shot_examples()

    def qrels_evaluation(self, corpus: str | None, cat: str) -> SegmentTexts | None:
        """passages=qrels (umbrela's qrel evaluation, qrels_eval.py): the corpus the pairs' texts are read from."""
        if self.passages not in ("shown", "qrels"):
            raise ConfigError(f"metric umbrela: passages={self.passages} is not one of shown, qrels")
        if (self.passages == "qrels") != (corpus is not None) or (self.passages == "qrels" and self.k is not None):
            raise ConfigError(
                "metric umbrela: passages=qrels judges the topic's qrels pairs, their text read from corpus=PATH: "
                "give corpus with passages=qrels only, and k (the shown passages judged) without it"
            )
        try:
            self.judge_cat = judge_cat(cat)
        except ValueError as exc:
            raise ConfigError(f"metric umbrela: {exc}") from None
        if corpus is None:
            return None
        self.declares = declaration(self.declares)
        return SegmentTexts(existing_corpus(self.name, corpus))

    def preflight(self, check: Preflight, task: Any) -> None:
        """passages=qrels: every topic's pairs are read from the corpus in one pass (segment_texts.py)."""
        if self.segments is not None:
            self.segments.want_topics(task, lambda example: [docid for docid, _ in holes(example, self.judge_cat)])

    def few_shot_examples(self) -> str:
        """The examples the few-shot basic prompt shows (bing's few-shot prompt holds its own four; zero-shot none)."""
        given = {name: path for name, path in self.sources.items() if path is not None}
        wanted = self.few_shot_count > 0 and self.prompt_type == "basic"
        if wanted and len(given) < len(self.sources) or given and not wanted:
            raise ConfigError(
                "metric umbrela: few_shot_qrels, few_shot_topics and few_shot_corpus (where its few-shot examples "
                "are drawn from) go with few_shot_count > 0 and prompt_type=basic, all three: the few-shot bing "
                "prompt holds four examples of its own"
            )
        if not wanted:
            return ""
        paths = {name: Path(path) for name, path in given.items()}
        return examples_text(paths["qrels"], paths["topics"], paths["corpus"], self.few_shot_count, self.few_shot_seed)

    def config(self) -> JsonObject:
        """The judge's settings; the few-shot ones only where few-shot prompts are used, so that a zero-shot run's
        config stays comparable with zero-shot runs' configs that have no few-shot keys."""
        config = super().config() | {"prompt_type": self.prompt_type, "k": self.k, "max_tokens": self.max_tokens}
        if self.segments is not None:
            config |= {"passages": self.passages, "judge_cat": "".join(map(str, self.judge_cat))}
        if not self.few_shot_count:
            return config
        few_shot = {f"few_shot_{name}": path for name, path in self.sources.items()}
        return config | {"few_shot_count": self.few_shot_count, "few_shot_seed": self.few_shot_seed} | few_shot

    def prompt(self, query: str, passage: str) -> str:
        templates = PROMPTS["fewshot" if self.few_shot_count else "templates"]
        return str(templates[self.prompt_type].format(examples=self.examples, query=query, passage=passage))

    async def ask(self, judge: Any, query: str, passage: str) -> str:
        """The judge's reply lowercased, as umbrela keeps it; "" where the request is refused (HTTP 400)."""
        model = judge.engine.model
        chat = messages(model, self.prompt(query, passage))
        try:
            reply = await judge.chat(chat, step=f"judge:{self.name}", **sampling(model, self.max_tokens))
        except RequestError:
            return ""
        return str(reply.text).lower()

    async def texts(self, example: Example, prediction: Prediction, ctx: Any) -> list[str]:
        """The passages to judge: those shown (the top k), or the topic's qrels pairs (their grades counted)."""
        if self.segments is None:
            return [doc.text for doc in (prediction.docs[: self.k] if self.k else prediction.docs)]
        judged = holes(example, self.judge_cat)
        return await self.segments.texts([docid for docid, _ in judged])

    async def grades(self, example: Example, prediction: Prediction, ctx: Any) -> list[tuple[int, bool]]:
        """Each judged passage's grade and whether umbrela's patterns found it, in the passages' order."""
        (judge,) = ctx.judges_for(self)
        passages = await self.texts(example, prediction, ctx)
        replies = await asyncio.gather(*(self.ask(judge, example.question, text) for text in passages))
        graded = [grade(reply) for reply in replies]
        if self.segments is not None:
            judged = holes(example, self.judge_cat)
            count_pairs(ctx.count, [human for _, human in judged], graded)
            ctx.record_step(JUDGED_STEP, outputs=judged_pairs(self.judge_cat, judged, graded))
        return graded

    def corpus(self, samples: list[SampleRecord], seed: int) -> Mapping[str, float | None]:
        """passages=qrels: the kappas of the judge's grades against the qrels' over the run (qrels_eval.py)."""
        return kappas(samples, self.name) if self.segments is not None else {}

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        graded = await self.grades(example, prediction, ctx)
        if not graded:  # no passage shown: nothing to judge
            return {"umbrela": None, "umbrela_relevant": None}
        count = getattr(ctx, "count", None)
        if count:
            for _ in range(sum(not valid for _, valid in graded)):
                count("umbrela_invalid")
        values = [value for value, _ in graded]
        return {
            "umbrela": sum(values) / len(values),
            "umbrela_relevant": sum(value >= 2 for value in values) / len(values),
        }
