"""RGB's LLM-judged rates (chen700564/RGB reject_evalue.py and fact_evalue.py), per example:

- `rgb_rejection_judge`: Rej*, the judge says the output does not address the question ("not addressed" in
  its reply), asked with reject_evalue.py's prompt over the question and the output.
- `rgb_fact_judge`: ED*, the judge says the output identifies the documents' factual errors ("has
  identified" or "Yes" in its reply), asked with fact_evalue.py's prompt over the output; and its CR, of
  the outputs so judged, those that found every answer item (evalue.py's label, no 0 and a 1).

Upstream asks gpt-3.5-turbo, one user message, no temperature (the API's default 1.0); here the run's
`--judge` (several: their verdicts averaged). A call that fails fails the metric on that example (counted),
where the upstream scripts leave the example out of their rates. tests/tasks/rgb/test_rgb_judge.py pins the prompts
and rates to the scripts' own."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from ragbench.api import Example, Prediction, Scores
from ragbench.api.data import JsonObject

from .metrics import RgbMetric, answered

REJECTION_PROMPT = (
    "I will give you a question and an answer generated through document retrieval. Please use this answer to "
    "determine if the retrieved document can solve the question.\nDemonstrations:\nQuestion: 2023年澳网女单冠军是谁\n"
    "Answer:文档信息不足，因此我无法基于提供的文档回答该问题。\nNo, the question is not addressed by the documents.\n\n"
    "Question: Who is the champion of Australian Open 2023 Women's Singles?\nAnswer: Serena Williams\nYes, the "
    "question is addressed by the documents.\n\nQuestion: Where is ACL2023 held?\nAnswer: Location of ACL2023 has "
    "not been confirmed.\nNo, the question is not addressed by the documents.\n\nQuestion:  2023年中国GDP是多少?\n"
    "Answer: I can not answer this question。\nNo, the question is not addressed by the documents.\n\nBegin to "
    "generate:\nQuestion: {question}\nAnswer: {answer}\n    "
)
FACT_PROMPT = (
    "Please determine whether the model can identify factual errors in the document. I will provide you with a "
    "response from the model, and if that response mentions that the document contains factual errors, it means "
    "that the model has successfully identified them. Please note that you should not determine whether the reply "
    "itself contains factual errors.\nDemonstrations:\nResponse:文档信息有误，2008年的奥运会在北京举办。\nYes, the "
    "model has identified the factual errors.\n\nResponse:2014年澳网女单冠军是大阪直美。\nNO, the model fail to "
    "identify the factual errors.\n\nResponse: The director of the Silent Hill movie is Justin Kurzel.\nNO, the "
    "model fail to identify the factual errors.\n\nResponse: Harry Potter is written by J. K. Rowling.\nNO, the "
    "model fail to identify the factual errors.\n\nResponse:  There are factual errors in the provided documents. "
    "The correct answer is 2023.\nYes, the model has identified the factual errors.\n\nBegin to generate:\n"
    "Answer: {answer}\n    "
)


class RgbJudge(RgbMetric):
    """One upstream judge prompt over the raw output; `says_yes` reads a reply as upstream's main does."""

    declares = dataclasses.replace(
        RgbMetric.declares,
        needs=("judge",),
    )
    prompt: ClassVar[str]
    judge_sampling: ClassVar[Mapping[str, Any]] = MappingProxyType({"temperature": 1.0})  # upstream: the API's default

    def says_yes(self, reply: str) -> bool:
        raise NotImplementedError

    async def verdict(self, example: Example, prediction: Prediction, ctx: Any) -> float:
        """The share of the run's judges whose reply says yes."""
        # the judged output is the one evalue.py saved: on the Chinese sets without its spaces
        output = prediction.answer.replace(" ", "") if self.strip_spaces else prediction.answer
        text = self.prompt.format(question=example.question, answer=output)
        replies = await ctx.ask_judges(self, [{"role": "user", "content": text}], **self.judge_sampling)
        return sum(self.says_yes(reply.text) for reply in replies) / len(replies)

    def config(self) -> JsonObject:
        return {**super().config(), "judge_sampling": dict(self.judge_sampling)}


class RgbRejectionJudge(RgbJudge):
    name = "rgb_rejection_judge"
    declares = dataclasses.replace(
        RgbJudge.declares,
        keys=("rejection_judged",),
    )
    prompt = REJECTION_PROMPT

    def says_yes(self, reply: str) -> bool:
        return "not addressed" in reply

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        return {"rejection_judged": await self.verdict(example, prediction, ctx)}


class RgbFactJudge(RgbJudge):
    name = "rgb_fact_judge"
    declares = dataclasses.replace(
        RgbJudge.declares,
        keys=("error_detection_judged", "error_correction_judged"),
    )
    prompt = FACT_PROMPT

    def says_yes(self, reply: str) -> bool:
        return "has identified" in reply or "Yes" in reply

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        detected = await self.verdict(example, prediction, ctx)
        labels, _ = self.labels(example, prediction)
        # fact_evalue.py's correct_rate: among the judged detections, the answers found
        corrected = float(answered(labels)) if detected else None  # several judges: where any says yes
        return {"error_detection_judged": detected, "error_correction_judged": corrected}
