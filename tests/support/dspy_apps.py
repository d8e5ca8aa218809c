"""DSPy modules the `dspy` system's tests run as a user's own (`--system dspy --system-arg
module=support.dspy_apps:NAME`): real DSPy, configured offline with its own dummies - `DummyLM` answering each Varn
question (by a part of the question the prompt holds) and `dummy_rm` over the Varn passages as the retriever model
`dspy.Retrieve` searches - as the RAG module of DSPy's tutorials (retrieve, then a `ChainOfThought` over the
context), and each misbehaving in one way where its name says so."""

from __future__ import annotations

import time
from typing import Any

import dspy
from dspy.utils.dummies import DummyLM, dummy_rm

from support.rag_apps import CORPUS, QUESTIONS

lm = DummyLM({question: {"reasoning": "From the context.", "answer": answer} for _, question, answer in QUESTIONS})
dspy.configure(lm=lm, rm=dummy_rm([p["text"] for p in CORPUS]))


class RAG(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        self.retrieve = dspy.Retrieve(k=2)
        self.respond = dspy.ChainOfThought("context, question -> answer")

    def forward(self, question: str) -> dspy.Prediction:
        context = self.retrieve(question).passages
        return dspy.Prediction(context=context, answer=self.respond(context=context, question=question).answer)


class Failing(RAG):
    def forward(self, question: str) -> dspy.Prediction:
        self.retrieve(question)
        raise RuntimeError("the LM is down")


class NumberAnswer(dspy.Module):
    def forward(self, question: str) -> dspy.Prediction:
        return dspy.Prediction(answer=42)


class BlocksLoop(dspy.Module):
    """Its `aforward` makes a blocking call (called through `acall`, on the run's event loop)."""

    def forward(self, question: str) -> dspy.Prediction:
        return dspy.Prediction(answer="Olm")

    async def aforward(self, question: str) -> dspy.Prediction:
        time.sleep(0.3)  # a blocking call inside async code: every other example waits
        return dspy.Prediction(answer="Olm")


class Mutates(dspy.Module):
    """Changes everything it is given (its copies): the conversation's turns, the example's meta and extras."""

    def forward(self, question: str, history: list[Any], meta: dict[str, Any], extras: dict[str, Any]) -> Any:
        history.clear()
        meta["source"] = "changed"
        extras.clear()
        return dspy.Prediction(answer="Olm")


rag = RAG()
predict = dspy.Predict("question -> answer")  # a module of DSPy's own, called through its `acall`


def not_a_module() -> Any:
    return {"answer": "Olm"}
