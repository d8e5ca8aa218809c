"""The base of generic readers: systems that send the task's own baseline prompt (`TaskPrompting.reader_prompt`)
over the documents they choose, generate once and post-process as the task does. The built-in
`closed_book` (no documents) and `vanilla` (the retriever's top documents) are its two subclasses; a
third-party reader subclasses it and overrides `documents`. The run's refiner (`--refiner`) turns the
documents into what the prompt shows (when it gives one text, the sample keeps the documents it read)."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Ge

from .._context import Context
from .._system import System
from .._task.prompting import TaskPrompting
from .._types import Document, Example, Prediction
from .._values.sampling import SamplingArgs
from .refined_text import is_refined_text

Limit = Annotated[int, Ge(1)] | Literal["none"] | None
Value = float | Literal["none"] | None


class Reader(System):
    """One generation per example. `chat` sends the task prompt as a single user message
    (through the model's chat template, as Self-RAG's baselines do for chat models). `max_tokens`,
    `temperature` or `top_p` set to `none` (or null) is left to the server: an API engine sends no such field,
    as a client that does not set it (CRAG-MM's GPTAgent sends no token limit); a local engine decodes with its
    default (`Sampling`'s)."""

    def __init__(
        self,
        max_tokens: Limit = 15,
        temperature: Value = 0.0,
        top_p: Value = 1.0,
        chat: bool = False,
        stop: str | list[str] | None = None,
    ) -> None:
        # 15 new tokens and greedy decoding: Self-RAG run_baseline_lm.py's max_new_tokens default;
        # upstream samples (temperature 0.8, top_p 0.95) - pass those to reproduce it exactly.
        # `stop` (a string or list, e.g. "\n" as ALCE's run.py uses for open models) ends generation early.
        # the keywords of its one LLM call: those of its options given a value, and those left to the server
        self.sampling: SamplingArgs = {}
        if isinstance(max_tokens, int):
            self.sampling["max_tokens"] = int(max_tokens)
        if isinstance(temperature, (int, float)):
            self.sampling["temperature"] = float(temperature)
        if isinstance(top_p, (int, float)):
            self.sampling["top_p"] = float(top_p)
        left = tuple(name for name in ("max_tokens", "temperature", "top_p") if name not in self.sampling)
        if left:
            self.sampling["left_to_server"] = left
        if stop:
            self.sampling["stop"] = [stop] if isinstance(stop, str) else list(stop)
        self.chat = bool(chat)

    async def documents(self, example: Example, ctx: Context) -> list[Document] | None:
        """The documents to show (None: closed book)."""
        raise NotImplementedError

    async def run(self, example: Example, ctx: Context) -> Prediction:
        prompting = ctx.task.prompting
        with ctx.group("retrieval"):  # the viewer's timeline: retrieval and a task's own steps, then the answer
            docs = await self.documents(example, ctx)
            refined = await ctx.retriever.refine(example.question, docs) if docs and ctx.retriever else docs
            prompt, shown = await prompting.reader_prompt(example, ctx, refined)
        # a refiner's text in place of the documents: the sample keeps the documents it read, which metrics
        # of documents score (as FlashRAG's retrieval metrics score its retrieval_result)
        docs = docs if is_refined_text(refined) else shown
        sampling = prompting.answer_sampling(ctx.llm.engine.model, self.sampling)
        if isinstance(prompt, list) or self.chat:
            messages = prompt if isinstance(prompt, list) else prompting.chat_messages(prompt)
            response = await ctx.llm.chat(messages, step="answer", **sampling)
        else:
            response = await ctx.llm.generate(prompt, step="answer", **sampling)
        answer = prompting.postprocess(response.text)
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=response.text,
            docs=docs or [],
            citations=prompting.citations(answer),
            extras=documents_read(prompting, docs or []),
        )


def documents_read(prompting: TaskPrompting, docs: list[Document]) -> dict[str, int]:
    """A prediction's extras: how many of its `docs` the prompt showed, where fewer (`Prediction.DOCS_READ`)."""
    read = prompting.documents_read(docs)
    return {Prediction.DOCS_READ: read} if read < len(docs) else {}
