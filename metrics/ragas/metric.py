"""The five RAGAS metrics on ragbench's judge: each asks the run's `--judge` ragas's prompts, one call at a
time in ragas's order, and computes its score as ragas 0.4.3's collections metric does (the file each
follows is named in its docstring). The inputs: ragas's `user_input` is the question, `response` the
answer, `retrieved_contexts` the texts of the documents the system showed, `reference` the task's first gold
answer. Where ragas raises on an empty input the example fails with that reason (counted); where ragas
scores NaN the value is None (not scorable), and where its arithmetic overflows on a huge verdict (infinity, or
OverflowError) None and counted. A reply instructor refuses is re-asked as instructor re-asks it
(replies.py); where instructor gives up (every attempt refused, a reply cut at max_tokens, or an attempt its client
cannot send) ragas raises, and here the example is not scored and is counted. A refused reply over
`replies.REASK_CHARS` is not sent back (counted too): its re-asks would be past any judge's context."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from pydantic import ValidationError

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Preflight, Scores
from ragbench.api.data import JsonObject, json_object
from ragbench.api.retrieval import model_location

from .prompts import messages, sampling
from .replies import ATTEMPTS, REASK_CHARS, Content, content, read, reask, sendable


class NotScored(Exception):
    """Instructor gave up on the judge's replies (ragas raises): the example is not scored (`ragas_gave_up`)."""


class RagasMetric(Metric):
    """What the five share: the judge call, the reply reading and the inputs ragas requires."""

    declares = MetricDeclaration(
        needs=("judge",),
        judge_roles=("judge",),
        value_range=(0, 1),
        counters={
            "ragas_unparsed": "judge replies instructor refuses (not the bare JSON of ragas's output model, checked "
            "strictly): each is asked again with pydantic's error, as instructor asks, while attempts remain",
            "ragas_gave_up": f"judge calls where instructor gives up and ragas raises: {ATTEMPTS} replies refused, "
            "a reply cut at max_tokens, or a conversation its client cannot send (not UTF-8); or a refused reply too "
            "long to send back (ragas_reply_too_long); the example is not scored",
            "ragas_reply_too_long": f"refused judge replies over {REASK_CHARS:,} characters (no reply a model gives "
            "within ragas's 1,024 tokens): not sent back in a re-ask, which no judge's context holds; the example is "
            "not scored",
            "ragas_overflow": "examples whose judge verdicts are so large (10^200, say) that ragas's arithmetic "
            "overflows, to infinity or OverflowError: no score holds it; the example is not scored",
        },
    )

    def config(self) -> JsonObject:
        return {"name": self.name, "sampling": json_object(sampling(""))}

    async def ask(
        self, ctx: Any, prompt: str, given: Mapping[str, object], examples: str = "default"
    ) -> dict[str, Any]:
        """The judge's reply to ragas's prompt `prompt` over `given`, read as ragas's output model, asked again
        as instructor asks; `NotScored` where instructor gives up."""
        (judge,) = ctx.judges_for(self)
        conversation: list[Mapping[str, Content]] = list(messages(prompt, given, examples))
        for _ in range(ATTEMPTS):
            if not sendable(conversation):  # instructor's client fails to encode it, and instructor gives up
                raise self.gave_up(
                    ctx,
                    "the conversation is not UTF-8 (a lone surrogate): instructor's client "
                    "cannot send it (InstructorRetryException)",
                )
            reply = await judge.chat(conversation, step=f"judge:{self.name}", **sampling(judge.engine.model))
            if reply.finish_reason == "length":  # instructor's IncompleteOutputException: not asked again
                raise self.gave_up(
                    ctx, "the judge's reply was cut at max_tokens (instructor's IncompleteOutputException)"
                )
            replied = content(reply)
            try:
                return read(replied, prompt)
            except ValidationError as exc:
                self.counted(ctx, "ragas_unparsed")
                chars = len(reply.content_parts or reply.text)
                if chars > REASK_CHARS:
                    self.counted(ctx, "ragas_reply_too_long")
                    raise self.gave_up(
                        ctx, f"the judge's refused reply is {chars:,} characters: not sent back"
                    ) from None
                conversation = [*conversation, *reask(replied, exc)]
        raise self.gave_up(ctx, f"instructor refused all {ATTEMPTS} of the judge's replies (InstructorRetryException)")

    def gave_up(self, ctx: Any, why: str) -> NotScored:
        """The example not scored, counted (`ragas_gave_up`): where ragas raises."""
        self.counted(ctx, "ragas_gave_up")
        return NotScored(why)

    def counted(self, ctx: Any, counter: str) -> None:
        count = getattr(ctx, "count", None)
        if count:
            count(counter)

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        try:
            value = await self.value(example, prediction, ctx)
        except NotScored:
            return {self.name: None}
        except OverflowError:  # a verdict so large that ragas's same arithmetic raises
            value = math.inf
        if value is not None and math.isinf(value):  # ragas's infinity, which no score holds
            self.counted(ctx, "ragas_overflow")
            return {self.name: None}
        return {self.name: None if value is None or math.isnan(value) else value}

    async def value(self, example: Example, prediction: Prediction, ctx: Any) -> float | None:
        raise NotImplementedError

    def question(self, example: Example) -> str:
        return self.required(example.question, "a question", "the example's")

    def answer(self, prediction: Prediction) -> str:
        return self.required(prediction.answer, "an answer", "this prediction's")

    def contexts(self, prediction: Prediction) -> list[str]:
        prediction.shown_docs(f"{self.name}'s retrieved contexts")
        if not prediction.docs:
            raise ValueError(f"{self.name} needs retrieved contexts and this prediction shows no documents")
        return [doc.text for doc in prediction.docs]

    def reference(self, example: Example, ctx: Any) -> str:
        golds = ctx.task.gold_references(example.gold)
        return self.required(golds[0] if golds else "", "a gold answer (ragas's reference)", "the example's")

    def required(self, text: str, what: str, whose: str) -> str:
        if not text:
            raise ValueError(f"{self.name} needs {what} and {whose} is empty (ragas refuses it too)")
        return text


def average_precision(verdicts: list[int]) -> float:
    """ragas's context precision of verdicts in ranking order (collections/context_precision/metric.py)."""
    numerator = sum(sum(verdicts[: i + 1]) / (i + 1) * verdict for i, verdict in enumerate(verdicts))
    return numerator / (sum(verdicts) + 1e-10)


def fbeta(tp: int, fp: int, fn: int, beta: float) -> float:
    """ragas's fbeta_score (metrics/utils.py): 0 where precision and recall are both 0."""
    precision = tp / (tp + fp) if tp + fp else 0
    recall = tp / (tp + fn) if tp + fn else 0
    if precision == 0 and recall == 0:
        return 0.0
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


class RagasFaithfulness(RagasMetric):
    """collections/faithfulness: the answer's statements, then each judged against the joined contexts."""

    name = "ragas_faithfulness"

    async def value(self, example: Example, prediction: Prediction, ctx: Any) -> float | None:
        answer, question, contexts = self.answer(prediction), self.question(example), self.contexts(prediction)
        statements = (await self.ask(ctx, "statements", {"question": question, "answer": answer}))["statements"]
        if not statements:
            return None
        verdicts = await self.ask(ctx, "nli", {"context": "\n".join(contexts), "statements": statements})
        judged = verdicts["statements"]
        return sum(1 for s in judged if s["verdict"]) / len(judged) if judged else None


# ragas bounds none of these: it takes a verdict (an `attributed`) of any integer and does not clamp what it computes
# from it (a judge's 2 gives context precision and context recall 2, ragas_verdicts.json; verdicts 1 then -1 context
# precision 1e10), and response relevancy is a mean of cosines, below 0 for questions unrelated to the question
UNBOUNDED = replace(RagasMetric.declares, value_range=None)


class RagasContextPrecision(RagasMetric):
    """collections/context_precision (ContextPrecision, with reference): each context judged useful or not
    for reaching the gold answer, in ranking order, then their average precision."""

    name = "ragas_context_precision"
    declares = UNBOUNDED

    async def value(self, example: Example, prediction: Prediction, ctx: Any) -> float | None:
        question, reference = self.question(example), self.reference(example, ctx)
        verdicts = [
            (await self.ask(ctx, "context_precision", {"question": question, "context": c, "answer": reference}))[
                "verdict"
            ]
            for c in self.contexts(prediction)
        ]
        return average_precision(verdicts)


class RagasContextRecall(RagasMetric):
    """collections/context_recall: the share of the gold answer's statements the joined contexts support."""

    name = "ragas_context_recall"
    declares = UNBOUNDED

    async def value(self, example: Example, prediction: Prediction, ctx: Any) -> float | None:
        question, reference, contexts = self.question(example), self.reference(example, ctx), self.contexts(prediction)
        given = {"question": question, "context": "\n".join(contexts), "answer": reference}
        classified = (await self.ask(ctx, "context_recall", given))["classifications"]
        return sum(c["attributed"] for c in classified) / len(classified) if classified else None


class RagasFactualCorrectness(RagasMetric):
    """collections/factual_correctness: the answer's claims judged against the gold answer and (mode recall
    or f1) the gold answer's claims against the answer; precision, recall or F-beta, rounded to 2 places."""

    name = "ragas_factual_correctness"
    MODES = ("precision", "recall", "f1")
    LEVELS = ("low", "high")

    def __init__(self, mode: str = "f1", beta: float = 1.0, atomicity: str = "low", coverage: str = "low") -> None:
        if mode not in self.MODES:
            raise ConfigError(f"metric {self.name}: mode={mode} is not one of {', '.join(self.MODES)}")
        for option, level in (("atomicity", atomicity), ("coverage", coverage)):
            if level not in self.LEVELS:
                raise ConfigError(f"metric {self.name}: {option}={level} is not low or high")
        self.mode, self.beta, self.atomicity, self.coverage = mode, float(beta), atomicity, coverage

    def config(self) -> JsonObject:
        return super().config() | {
            "mode": self.mode,
            "beta": self.beta,
            "atomicity": self.atomicity,
            "coverage": self.coverage,
        }

    async def verified(self, ctx: Any, text: str, against: str) -> list[bool]:
        """The claims of `text`, each judged against `against`."""
        given = {"response": text, "atomicity": self.atomicity, "coverage": self.coverage}
        claims = (await self.ask(ctx, "claims", given, f"{self.atomicity}/{self.coverage}"))["claims"]
        if not claims:
            return []
        verdicts = await self.ask(ctx, "claim_nli", {"context": against, "statements": claims})
        return [bool(s["verdict"]) for s in verdicts["statements"]]

    async def value(self, example: Example, prediction: Prediction, ctx: Any) -> float | None:
        answer, reference = self.answer(prediction), self.reference(example, ctx)
        of_answer = await self.verified(ctx, answer, reference)
        of_reference = await self.verified(ctx, reference, answer) if self.mode != "precision" else []
        tp = sum(of_answer)
        fp = len(of_answer) - tp
        fn = len(of_reference) - sum(of_reference) if self.mode != "precision" else 0
        if self.mode == "precision":
            score = tp / (tp + fp + 1e-8)
        elif self.mode == "recall":
            score = tp / (tp + fn + 1e-8)
        else:
            score = fbeta(tp, fp, fn, self.beta)
        return float(np.round(score, 2))


class RagasResponseRelevancy(RagasMetric):
    """collections/answer_relevancy: `strictness` questions generated from the answer (one call each, the same
    prompt), their mean cosine similarity to the question under a sentence-transformers encoder, 0 when
    every generation calls the answer noncommittal."""

    name = "ragas_response_relevancy"
    declares = UNBOUNDED

    def __init__(self, strictness: int = 3, embeddings: str = "embedded") -> None:
        if int(strictness) < 1:
            raise ConfigError(f"metric {self.name}: strictness={strictness} must be 1 or more")
        self.strictness, self.embeddings = int(strictness), embeddings
        self._encoder: Any = None

    def config(self) -> JsonObject:
        return {**super().config(), "strictness": self.strictness, "embeddings": self.embeddings}

    def preflight(self, check: Preflight, task: Any) -> None:
        """The encoder's package and folder, before any example (the model itself loads at the first)."""
        if importlib.util.find_spec("sentence_transformers") is None:
            check.problem(f"metric {self.name} needs sentence-transformers: pip install 'ragbench[retrieval]'")
            return
        try:
            model_location(self.embeddings)
        except ConfigError as exc:
            check.problem(f"metric {self.name}: {exc}")

    def encoder(self) -> Any:
        """The sentence-transformers model, loaded at its first use ("embedded": the packaged all-MiniLM-L6-v2)."""
        if self._encoder is None:
            from sentence_transformers import SentenceTransformer  # the preflight checked it is there

            self._encoder = SentenceTransformer(model_location(self.embeddings))
        return self._encoder

    def embedded(self, texts: str | list[str]) -> np.ndarray:
        """As ragas's HuggingFaceEmbeddings: normalised, batches of 32, as float64."""
        vectors = self.encoder().encode(texts, normalize_embeddings=True, batch_size=32, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float64)

    async def value(self, example: Example, prediction: Prediction, ctx: Any) -> float | None:
        question, answer = self.question(example), self.answer(prediction)
        generated = [await self.ask(ctx, "question", {"response": answer}) for _ in range(self.strictness)]
        kept = [g for g in generated if g["question"]]
        if not kept:
            return 0.0
        noncommittal = all(g["noncommittal"] for g in kept)
        question_vector = self.embedded(question).reshape(1, -1)
        vectors = self.embedded([g["question"] for g in kept]).reshape(len(kept), -1)
        norm = np.linalg.norm(vectors, axis=1) * np.linalg.norm(question_vector, axis=1)
        cosine = np.dot(vectors, question_vector.T).reshape(-1) / norm
        return float(cosine.mean() * int(not noncommittal))
