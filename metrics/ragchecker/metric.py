"""`ragchecker`: RAGChecker's claim-level metrics (amazon-science/RAGChecker, NeurIPS 2024 D&B), asked of
the run's judge as RAGChecker 0.1.9 asks its extractor and checker with their defaults.

Per example: the judge extracts (subject, predicate, object) claims from the response and from the gold
answer (the task's first gold reference), then checks, five claims to a prompt, each response claim
against the gold answer and against each retrieved chunk (the documents the system showed, their text),
and each gold claim against the response and against each chunk. ragchecker/computation.py's formulas turn
the labels into the example's eleven values; the task's value is their mean, as RAGChecker averages
examples (it reports x100, one decimal). One `--judge` extracts and checks; with two, the first extracts
and the second checks (RAGChecker's extractor_name and checker_name).

A judge call that fails fails the metric on that example (counted; RAGChecker stops). A checking reply with
fewer labels than claims is padded with Neutral as RefChecker does, and counted; so is an extraction that
gives no claims, whose metrics RAGChecker scores 0."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ragbench.api import ConfigError, Example, KeySpec, Metric, MetricDeclaration, Prediction, Scores
from ragbench.api.data import JsonObject

from .claims import Triplet, checking_prompts, extraction_prompt, parse_labels, parse_triplets
from .scores import KEYS, ragchecker_scores

LOWER_IS_BETTER = ("noise_sensitivity_in_relevant", "noise_sensitivity_in_irrelevant", "hallucination")


class RagChecker(Metric):
    name = "ragchecker"
    declares = MetricDeclaration(
        keys=KEYS,
        needs=("judge",),
        judge_roles=("extractor", "checker"),
        value_range=(0, 1),
        # RAGChecker's tutorial: whether less self-knowledge is better "depends on user's preference"
        key_specs={**{key: KeySpec(False, (0, 1)) for key in LOWER_IS_BETTER}, "self_knowledge": KeySpec(None, (0, 1))},
        counters={
            "ragchecker_labels_padded": "checking replies with fewer labels than claims, padded with Neutral "
            "as RefChecker does",
            "ragchecker_no_claims": "extractions (of a response or a gold answer) that gave no claim: the "
            "metrics that need them score 0, as RAGChecker does",
        },
    )

    def __init__(self, joint_check_num: int = 5, extractor_max_new_tokens: int = 1000) -> None:
        if int(joint_check_num) < 1:
            raise ConfigError(f"metric ragchecker: joint_check_num={joint_check_num} must be 1 or more")
        self.joint_check_num = int(joint_check_num)
        # RefChecker's LLMExtractor (temperature 1e-5) and LLMChecker (temperature 0, joint_check_num * 10 + 100)
        self.extraction_sampling = {"temperature": 1e-5, "max_tokens": int(extractor_max_new_tokens)}
        self.checking_sampling = {"temperature": 0.0, "max_tokens": self.joint_check_num * 10 + 100}

    def config(self) -> JsonObject:
        return {
            "name": self.name,
            "joint_check_num": self.joint_check_num,
            "extraction_sampling": dict(self.extraction_sampling),
            "checking_sampling": dict(self.checking_sampling),
        }

    async def extract(self, judge: Any, question: str, text: str, count: Callable[[str], None]) -> list[Triplet]:
        messages = [{"role": "user", "content": extraction_prompt(question, text)}]
        reply = await judge.chat(messages, step="judge:ragchecker:extract", **self.extraction_sampling)
        claims = parse_triplets(reply.text)
        if not claims:
            count("ragchecker_no_claims")
        return claims

    async def check(
        self, judge: Any, question: str, claims: list[Triplet], references: list[str], count: Callable[[str], None]
    ) -> list[list[str]]:
        """The labels [claim][reference] (CheckerBase.check: none for no claims, [] per claim for no references)."""

        async def labels_of(prompt: str, size: int) -> list[str]:
            reply = await judge.chat(
                [{"role": "user", "content": prompt}], step="judge:ragchecker:check", **self.checking_sampling
            )
            labels, padded = parse_labels(reply.text, size)
            if padded:
                count("ragchecker_labels_padded")
            return labels

        async def labels_for(reference: str) -> list[str]:
            prompts = checking_prompts(question, reference, claims, self.joint_check_num)
            return [
                label
                for labels in await asyncio.gather(*(labels_of(p, size) for p, size in prompts))
                for label in labels
            ]

        if not claims:
            return []
        per_reference = await asyncio.gather(*(labels_for(reference) for reference in references))
        return [[labels[i] for labels in per_reference] for i in range(len(claims))]

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        extractor, checker = ctx.judges_for(self)
        golds = ctx.task.gold_references(example.gold)
        if not golds:
            raise ValueError("ragchecker needs a gold answer and this example has none")
        prediction.shown_docs("RAGChecker's claims against the retrieved chunks")
        count = getattr(ctx, "count", None) or (lambda name: None)
        question, answer, response = example.question, golds[0], prediction.answer
        chunks = [doc.text for doc in prediction.docs]
        response_claims, answer_claims = await asyncio.gather(
            self.extract(extractor, question, response, count), self.extract(extractor, question, answer, count)
        )
        answer2response, response2answer, retrieved2answer, retrieved2response = await asyncio.gather(
            self.check(checker, question, response_claims, [answer], count),
            self.check(checker, question, answer_claims, [response], count),
            self.check(checker, question, answer_claims, chunks, count),
            self.check(checker, question, response_claims, chunks, count),
        )
        # against one text, a claim's single label is its label (merge_multi_psg_ret)
        return ragchecker_scores(
            [row[0] for row in answer2response],
            [row[0] for row in response2answer],
            retrieved2answer,
            retrieved2response,
        )
