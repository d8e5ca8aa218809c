"""The write step both report systems end with: the sources numbered [1]..[n] in the order shown, the report
written over them (write.j2), cut to the word limit, its citations counted against the sources shown."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from annotated_types import Ge

from ragbench.api import (
    ConfigError,
    Context,
    Document,
    Example,
    OutputFormat,
    Prediction,
    Preflight,
    RecordedExtras,
    System,
    SystemDeclaration,
    Task,
)
from ragbench.api.text import cited_numbers, sent_tokenize

from .limits import within
from .prompts import render

EXTRAS = "report"
BRACKETED = re.compile(r"\[(\d+)\]")  # a number in brackets in a source, shown as (n): no citation marker


def source_line(doc: Document) -> str:
    """A source as the write prompt shows it after its number: "Title: text" on one line."""
    content = f"{doc.title}: {doc.text}" if doc.title else doc.text
    return BRACKETED.sub(r"(\1)", " ".join(content.split()))


def declaration(
    searches: str | None = None,
    means: dict[str, Callable[[Any], float]] | None = None,
    counts: dict[str, str] | None = None,
) -> SystemDeclaration:
    """What the core reads of a report system: it searches (its own queries where a `searches` budget option is
    named), shows `top_n` passages, sends its own prompts, and records each report's words and citations."""
    return SystemDeclaration(
        retrieves=True,
        searches_own_queries=searches is not None,
        budget_options={"passages": "top_n", **({"searches": searches} if searches else {})},
        prompt_style="report",
        own_defaults=("top_n",),  # a task's top_n (TREC RAG's 100 for recall@100) is no report's number of sources
        recorded=RecordedExtras(
            EXTRAS,
            means={"mean_words_written": "words_written", "mean_words_kept": "words_kept", **(means or {})},
            counts={
                "reports_over_limit": "over_limit",
                "citations": "citations",
                "citations_to_no_source": "citations_to_no_source",
                **(counts or {}),
            },
            output_format=OutputFormat(
                "report within its word limit",
                followed=lambda report: not report["over_limit"],
                of=lambda report: report["word_limit"] is not None,
                fix="each was cut to its last whole sentence within the limit; a model that keeps to the limit its prompt states loses nothing",
            ),
        ),
    )


class ReportWriter(System):
    """Options shared by the report systems:
    top_n       passages shown to the writer, numbered [1]..[top_n] (20: TREC RAG 2024's most references)
    max_words   the report's word limit, stated in the prompt and enforced (None: none; trec_rag24 and
                trec_rag25 give 400, the tracks' limit)
    max_tokens  tokens of the report (2048; deep_research_bench gives 8192)
    temperature sampling temperature of every call (0: greedy)
    """

    declares = declaration()

    def __init__(
        self,
        top_n: Annotated[int, Ge(1)] = 20,
        max_words: Annotated[int, Ge(1)] | None = None,
        max_tokens: Annotated[int, Ge(1)] = 2048,
        temperature: float = 0.0,
    ) -> None:
        self.top_n = int(top_n)
        self.max_words = None if max_words is None else int(max_words)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)

    def preflight(self, check: Preflight, task: Task) -> None:
        """A word limit cuts a report at its sentences, which nltk's Punkt finds: checked before any example."""
        super().preflight(check, task)
        if self.max_words is None:
            return
        with check.step(f"system {self.name}: nltk's sentence splitting installed (max_words={self.max_words})"):
            try:
                sent_tokenize("")
            except ConfigError as exc:
                raise ConfigError(
                    f"system {self.name} cuts a report over max_words={self.max_words} at its sentences, with "
                    f"nltk's Punkt ({exc.__cause__}): run `pip install 'ragbench[trec]'`"
                ) from None

    async def ask(self, ctx: Context, prompt: str, step: str, max_tokens: int) -> str:
        """One user turn to a chat model, the text to any other; the model's text."""
        if ctx.llm.chat_model:
            messages = [{"role": "user", "content": prompt}]
            response = await ctx.llm.chat(messages, step=step, max_tokens=max_tokens, temperature=self.temperature)
        else:
            response = await ctx.llm.generate(prompt, step=step, max_tokens=max_tokens, temperature=self.temperature)
        return response.text

    async def write(
        self, example: Example, ctx: Context, docs: list[Document], sub_questions: list[str], **extras: Any
    ) -> Prediction:
        """The report over `docs` (numbered in this order) covering `sub_questions`, cut to `max_words`; `extras`
        join its record."""
        prompting = ctx.task.prompting
        prompt = render(
            "write.j2",
            question=prompting.query_text(example),
            sources=[source_line(doc) for doc in docs],
            sub_questions=[question for question in sub_questions if question != example.question],
            max_words=self.max_words,
        )
        with ctx.group("report"):
            written = await self.ask(ctx, prompt, "report", self.max_tokens)
        kept = within(written, self.max_words)
        answer = prompting.postprocess(kept.text)
        cited = cited_numbers(answer)
        record = {
            "word_limit": self.max_words,
            "words_written": kept.words_written,
            "words_kept": kept.words_kept,
            "over_limit": self.max_words is not None and kept.words_written > self.max_words,
            "citations": len(cited),
            "citations_to_no_source": sum(not 1 <= number <= len(docs) for number in cited),
            "sub_questions": sub_questions,
            **extras,
        }
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=written,
            docs=docs,
            citations=prompting.citations(answer),
            extras={EXTRAS: record},
        )
