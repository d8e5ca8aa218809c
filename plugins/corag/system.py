"""CoRAG (Wang et al., 2025, "Chain-of-Retrieval Augmented Generation") as FlashRAG runs it (`CoRAGPipeline`,
flashrag/pipeline/reasoning_pipeline.py:718-824 at commit 1ee5249, examples/methods/run_exp.py:718-747)."""

from __future__ import annotations

import re
from typing import Annotated

from annotated_types import Ge

from ragbench.api import Context, Document, Example, Prediction, RecordedExtras, System
from ragbench.api.flashrag import flashrag_sampling, flashrag_searching, title_and_text

from .prompts import (
    FINAL_ANSWER,
    INTERMEDIATE_ANSWER,
    MULTI_HOP_DATASETS,
    MULTI_HOP_TASK_DESC,
    SUBQUERY,
    TASK_DESC,
    WIKI_DATASETS,
    WIKI_TASK_DESC,
    past_steps,
)

EXTRAS = "corag"


def normalize_subquery(text: str) -> str:
    """`_normalize_subquery` (reasoning_pipeline.py:818-824): stripped, surrounding double quotes dropped, a
    leading "Intermediate query N: " dropped."""
    text = text.strip()
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1]
    if text.startswith("Intermediate query"):
        text = re.sub(r"^Intermediate query \d+: ", "", text)
    return text


def contents(doc: Document) -> str:
    """A passage as FlashRAG's corpus holds it: the title line, then the text."""
    title, text = title_and_text(doc)
    return f"{title}\n{text}"


def task_description(task_name: str) -> str:
    """run_exp.py's task description for a dataset (:722-727), by the start of the task's name."""
    if task_name.startswith(MULTI_HOP_DATASETS):
        return MULTI_HOP_TASK_DESC
    if task_name.startswith(WIKI_DATASETS):
        return WIKI_TASK_DESC
    return TASK_DESC


class CoRag(System):
    """CoRAG: `max_iter_num` rounds, always all of them (FlashRAG never ends a chain early): the model writes a
    follow-up sub-query from the intermediate queries and answers so far, it is searched (top `topk`), and the
    model answers it from those passages; then one final answer from every passage retrieved (in order,
    repeats kept, numbered from 0) and the chain. The prediction is that answer as generated.

    Each prompt is one user message: a chat model gets it as a chat request (FlashRAG's run_exp sets
    `is_reasoning`, which renders the chat template whatever the model), a plain model its text.

    Options (defaults from FlashRAG):
      max_iter_num   sub-queries per question (4, reasoning_pipeline.py:728)
      topk           passages per sub-query (5: retrieval_topk of examples/methods/my_config.yaml)
      step_tokens    tokens of each sub-query, intermediate and final answer (64, :741-757); not `max_tokens`,
                     which a task sets for its readers
      task_desc      the prompts' task description; default as run_exp.py:722-727 picks it for the
                     dataset: multi-hop for hotpotqa/musique/2wikimultihopqa/bamboogle tasks, Wikipedia for
                     nq/triviaqa, else its generic one
    Sampling is FlashRAG's vLLM generator's: greedy, stop "<|eot_id|>"; special tokens kept except in the
    final answer (skip_special_tokens, :741-757 and run_exp.py:736).
    """

    name = "corag"
    declares = flashrag_searching(
        "max_iter_num",
        recorded=RecordedExtras(
            EXTRAS,
            means={
                "mean_sub_queries": lambda chain: len(chain["sub_queries"]),
                "mean_distinct_sub_queries": lambda chain: len(set(chain["sub_queries"])),
            },
            counts={"empty_sub_queries": "empty_sub_queries"},
        ),
    )

    def __init__(
        self,
        max_iter_num: Annotated[int, Ge(1)] = 4,
        topk: Annotated[int, Ge(1)] = 5,
        step_tokens: Annotated[int, Ge(1)] = 64,
        task_desc: str | None = None,
    ) -> None:
        self.max_iter_num = int(max_iter_num)
        self.topk = int(topk)
        self.step_tokens = int(step_tokens)
        self.task_desc = task_desc

    async def _ask(self, ctx: Context, content: str, step: str, skip_special_tokens: bool = False) -> str:
        sampling = flashrag_sampling("vllm", max_tokens=self.step_tokens, skip_special_tokens=skip_special_tokens)
        if ctx.llm.chat_model:
            response = await ctx.llm.chat([{"role": "user", "content": content}], step=step, **sampling)
        else:
            response = await ctx.llm.generate(content, step=step, **sampling)
        return response.text

    async def run(self, example: Example, ctx: Context) -> Prediction:
        task_desc = self.task_desc or task_description(ctx.task.name)
        subqueries: list[str] = []
        subanswers: list[str] = []
        retrieved: list[Document] = []
        for round_no in range(1, self.max_iter_num + 1):
            with ctx.group(f"iteration {round_no}"):
                prompt = SUBQUERY.format(
                    past=past_steps(subqueries, subanswers), task_desc=task_desc, query=example.question
                )
                written = await self._ask(ctx, prompt, "sub-query")
                subquery = normalize_subquery(written)
                ctx.record_step("sub-query", inputs={"output": written}, outputs={"query": subquery})
                subqueries.append(subquery)
                docs = await ctx.required_retriever().search(subquery, self.topk)
                retrieved.extend(docs)
                context = "".join(f"{contents(doc)}\n\n" for doc in docs).strip()
                subanswers.append(
                    await self._ask(
                        ctx, INTERMEDIATE_ANSWER.format(context=context, subquery=subquery), "intermediate answer"
                    )
                )
        with ctx.group("final answer"):
            context = "".join(f"Doc {i}: {contents(doc)}\n\n" for i, doc in enumerate(retrieved)).strip()
            answer = await self._ask(
                ctx,
                FINAL_ANSWER.format(
                    context=context,
                    past=past_steps(subqueries, subanswers),
                    task_desc=task_desc,
                    query=example.question,
                ),
                "final answer",
                skip_special_tokens=True,
            )
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=answer,
            docs=retrieved,
            extras={EXTRAS: {"sub_queries": subqueries, "empty_sub_queries": subqueries.count("")}},
        )
