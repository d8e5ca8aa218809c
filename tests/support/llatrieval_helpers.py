"""Shared pieces of the LLatrieval tests: the synthetic documents of the parity fixtures, a script that
answers every LLatrieval step (for `ragbench.testing.ScriptedLLM` or the `scripted` engine), an
in-memory retriever and the ASQA test data."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from conftest import TEST_DATA
from ragbench.api import Document, Example
from ragbench.api.engines import Request
from ragbench.api.retrieval import Retriever
from ragbench.plugins.llatrieval.prompts import SUMMARY_KEY
from ragbench.tasks.alce.tasks import AlceAsqa


def parity(name: str) -> dict:
    return json.loads((TEST_DATA / "parity" / f"llatrieval_{name}.json").read_text(encoding="utf-8"))


def make_docs(n: int, start: int = 0, field: str = "summary_use_sub", words: int = 12) -> list[Document]:
    """The fixture generator's documents (make_parity.py make_docs), with the upstream field as our summary."""
    docs = []
    for i in range(start, start + n):
        filler = " ".join(f"w{i}x{j}" for j in range(words))
        docs.append(
            Document(
                id=str(1000 + i),
                title=f"Title {i}",
                text=f"Passage text {i}: {filler}.",
                metadata={SUMMARY_KEY: f"Summary {i}: {filler}."},
            )
        )
    return docs


def upstream_doc(record: dict, field: str) -> Document:
    return Document(id=record["id"], title=record["title"], text=record["text"], metadata={SUMMARY_KEY: record[field]})


def role(request: Request, name: str) -> str:
    return next((content for r, content in request.messages or () if r == name), "")


def shown_count(request: Request) -> int:
    return role(request, "user").count("\nContent:\n")


class StepScript:
    """A model for every LLatrieval step, told apart by the system message. `verdict(user, calls)` decides
    verification; selection keeps the last k shown; every request is logged by step."""

    def __init__(
        self, verdict: Callable[[str, int], str] = lambda user, n: "[YES]", select: Callable[[int], str] | None = None
    ) -> None:
        self.verdict = verdict
        self.select = select or (
            lambda shown: "Selected Documents: " + " ".join(str(i) for i in range(shown - 4, shown + 1))
        )
        self.log: dict[str, list[Request]] = {}

    def step(self, request: Request) -> str:
        system = role(request, "system")
        if "DocSelectorGPT" in system:
            return "select"
        if "JudgeGPT" in system or "ScoreGPT" in system:
            return "verify"
        if "missing content" in system:
            return "update_query"
        if "proper citations" in system:
            return "answer"
        if role(request, "user").startswith("Please write a passage"):
            return "hyde_query"
        return "summarize"

    def __call__(self, request: Request) -> str:
        step = self.step(request)
        self.log.setdefault(step, []).append(request)
        user = role(request, "user")
        if step == "select":
            return self.select(shown_count(request))
        if step == "verify":
            return self.verdict(user, len(self.log[step]))
        if step == "update_query":
            return "missing " + re.sub(r"\s+", " ", user.split("\n")[1])
        if step == "answer":
            return "An answer [1][2]."
        if step == "hyde_query":
            return "A passage."
        return "  summary of " + re.search(r"Title: (.*)", user).group(1) + " \n"


class TopicRetriever(Retriever):
    """Documents named after the query: `k` of them, ids "<query words>#i" (so each query finds new ones)."""

    name = "topic"

    def __init__(self) -> None:
        self.queries: list[list[str]] = []

    def search(self, queries, k):
        self.queries.append(list(queries))
        out = []
        for query in queries:
            key = "-".join(query.split()[:6])
            out.append(
                [
                    Document(
                        id=f"{key}#{i}", title=f"{key} {i}", text=f"Text about {query} number {i}.", score=float(k - i)
                    )
                    for i in range(k)
                ]
            )
        return out


def asqa_task(**args) -> AlceAsqa:
    task = AlceAsqa(data_path=TEST_DATA / "alce" / "asqa_eval_gtr_top100.json", **args)
    task.prepare()
    return task


def asqa_examples(task: AlceAsqa | None = None) -> list[Example]:
    return [e for e in (task or asqa_task()).examples() if isinstance(e, Example)]


always_yes = StepScript()
always_no = StepScript(verdict=lambda user, n: "[NO]")


def count_characters(text: str) -> int:
    """A pluggable token counter (token_counter=support.llatrieval_helpers:count_characters)."""
    return len(text)
