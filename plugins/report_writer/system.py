"""The report systems: `report_rag`, retrieve then write, and `plan_search_write`, plan, search each sub-question,
then write; both end with writing.py's write step (cited sources, the word limit)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from annotated_types import Ge

from ragbench.api import Context, Document, Example, Prediction

from .prompts import render
from .writing import ReportWriter, declaration

LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)]|Sub-question \d+:)\s*")  # a plan line's bullet or number


class ReportRag(ReportWriter):
    """The plain baseline: the question's top `top_n` passages, one report over them (options: ReportWriter)."""

    name = "report_rag"

    async def run(self, example: Example, ctx: Context) -> Prediction:
        with ctx.group("retrieval"):
            found = await ctx.required_retriever().search(example.question, self.top_n)
            docs = await ctx.task.prompting.passages(found)
        return await self.write(example, ctx, docs, [])


def plan_lines(text: str, most: int) -> list[str]:
    """The sub-questions of a plan: its non-empty lines without bullets or numbers, each once, the first `most`."""
    lines = (LIST_MARK.sub("", line).strip() for line in text.splitlines())
    return list(dict.fromkeys(line for line in lines if line))[:most]


def interleaved(rankings: list[list[Document]], most: int) -> list[Document]:
    """The rankings' documents taken rank by rank across the searches (each search's first, then each one's
    second ...), each document once (by id, else by text), at most `most`: every sub-question gets its best passages shown."""
    shown: dict[str, Document] = {}
    for rank in range(max(map(len, rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking) and len(shown) < most:
                doc = ranking[rank]
                shown.setdefault(doc.text if doc.id is None else doc.id, doc)
    return list(shown.values())


class PlanSearchWrite(ReportWriter):
    """Plan, search, write: the model plans at most `max_sub_questions` sub-questions (plan.j2, one a line), the
    question and each sub-question are searched (top `k` each), their passages are interleaved rank by rank up to
    `top_n`, and the report is written over them, the sub-questions listed in its prompt. A plan with no line
    searches the question alone (counted: `empty_plans`). Options beyond ReportWriter's:
      max_sub_questions  sub-questions searched (5)
      k                  passages per search (5)
      plan_tokens        tokens of the plan (512)
    """

    name = "plan_search_write"
    declares = declaration(
        "max_sub_questions",
        means={"mean_sub_questions": lambda report: len(report["sub_questions"])},
        counts={"empty_plans": "empty_plan"},
    )

    def __init__(
        self,
        max_sub_questions: Annotated[int, Ge(1)] = 5,
        k: Annotated[int, Ge(1)] = 5,
        plan_tokens: Annotated[int, Ge(1)] = 512,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.max_sub_questions = int(max_sub_questions)
        self.k = int(k)
        self.plan_tokens = int(plan_tokens)

    async def run(self, example: Example, ctx: Context) -> Prediction:
        question = ctx.task.prompting.query_text(example)
        with ctx.group("plan"):
            plan = await self.ask(
                ctx, render("plan.j2", question=question, most=self.max_sub_questions), "plan", self.plan_tokens
            )
        sub_questions = plan_lines(plan, self.max_sub_questions)
        retriever = ctx.required_retriever()
        with ctx.group("retrieval"):
            rankings = [
                await retriever.search(query, self.k) for query in dict.fromkeys([example.question, *sub_questions])
            ]
            docs = await ctx.task.prompting.passages(interleaved(rankings, self.top_n))
        return await self.write(example, ctx, docs, sub_questions, empty_plan=not sub_questions)
