"""The `crag_mm_rewrite` system: CRAG-MM's query-rewrite RAG pipeline (the repository's Task 2 / 3 runs), in one run.

Upstream does it in two passes. First the `QueryRewrite` agent (example_agents/open_source_model_agents.py) makes two
calls per question: the picture and the question with `QUERY_REWRITE_STEP_1` (an analysis), then the same with the
analysis as the assistant's turn and `QUERY_REWRITE_PROMPT`, decoded under `QueryAnalysis`'s JSON schema. Its answers,
cut to 75 Llama-3.2 tokens like every agent response, go to a response.jsonl. Then `local_evaluation.py
--full-query-path` reads each answer's `updated_question` (`utils.parse_jsonl_to_dict`; the question itself where
the answer is not such JSON) and `get_rag_context` searches the picture (30 hits) and the web with it (the question
where it is empty). The answering agent gets the results under the original question's introduction. Here each
example makes the same two calls, the same cut and choice, one search of the run's retriever (`cragmm_search`
answers it with the picture's image hits, `image_k` 30, then the text's web hits), then the task's answer call
(tasks/crag_mm/prompting.py) over what it found.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Annotated, Any

from annotated_types import Ge
from pydantic import create_model

from ragbench.api import ConfigError, Context, Document, Example, Image, Message, Reader, Task, chat_turn
from ragbench.api.engines import SamplingArgs

from .cut import truncate_response
from .metrics import tokenizer_dir
from .prompts import prompts
from .task import CragMMTask

# QueryRewrite's SamplingParams for both calls (temperature 0, top_p 1, MAX_GENERATION_TOKENS, special tokens skipped)
REWRITE_SAMPLING: SamplingArgs = {"max_tokens": 1000, "temperature": 0.0, "top_p": 1.0, "skip_special_tokens": True}
WEB_SEARCH_RESULTS = 50  # utils/retriever.py NUM_WEB_SEARCH_RESULTS


@functools.cache
def rewrite_schema() -> str:
    """The second call's `json_schema` (an OpenAI `response_format` schema, named): prompt_constants.py's
    `QueryAnalysis` model's, made by pydantic as upstream's is (a model made here, not a class of the module: a
    pydantic model holds its `model_config` dict as a class default)."""
    model = create_model("QueryAnalysis", entity_name=(str, ...), updated_question=(str, ...))
    return json.dumps({"name": "QueryAnalysis", "schema": model.model_json_schema()})


def rewrite_messages(question: str, image: Image | None, analysis: str | None = None) -> list[Message]:
    """QueryRewrite's chat: its system prompt, the picture, the analysis request; with the first call's `analysis`,
    that answer and the rewrite request after them."""
    agents = prompts()["agents"]
    messages = [Message("system", agents["QUERY_REWRITE_SYSTEM"])]
    if image is not None:
        messages.append(chat_turn([image]))
    messages.append(Message("user", agents["QUERY_REWRITE_STEP_1"].format(question=question)))
    if analysis is not None:
        messages += [
            Message("assistant", analysis),
            Message("user", agents["QUERY_REWRITE_PROMPT"].format(question=question)),
        ]
    return messages


def search_query(rewrite: str, question: str) -> str:
    """What the web search is asked, from the rewrite's cut answer: its `updated_question` when the answer is a JSON
    object holding a non-empty one, else the question (parse_jsonl_to_dict's fallback, get_rag_context's `query if
    not full_query`)."""
    try:
        updated = json.loads(rewrite)["updated_question"]
    except (ValueError, TypeError, KeyError, IndexError):
        return question
    return updated if isinstance(updated, str) and updated else question


class CragMMQueryRewrite(Reader):
    """Two rewrite calls, one search with the rewritten question (`top_n` results, upstream's 50), then the task's
    answer over them. Documents come from the run's retriever (`--retriever`); the rewrite calls go to the
    `rewriter` role's model (`--role-model rewriter=...`, else the run's) with upstream's sampling, whatever the
    answer's (`max_tokens`, `temperature`, `top_p`: the task's defaults) is."""

    name = "crag_mm_rewrite"
    declares = dataclasses.replace(
        Reader.declares,
        retrieves=True,
        searches_own_queries=True,
        budget_options={"passages": "top_n"},
        roles=("rewriter",),  # upstream's rewrite pass is a run of its own, with its own model
    )

    def __init__(self, top_n: Annotated[int, Ge(1)] = WEB_SEARCH_RESULTS, **options: Any) -> None:
        super().__init__(**options)
        self.top_n = int(top_n)

    def check(self, task: Task) -> None:
        if not isinstance(task, CragMMTask):
            raise ConfigError(
                f"system {self.name} runs on the CRAG-MM tasks (crag_mm_single, crag_mm_multi), not on {task.name}: "
                "its prompts and its 75-token cut are that benchmark's; use --system vanilla there"
            )

    async def rewritten(self, example: Example, ctx: Context) -> str:
        """The question the search is asked (the two calls, the 75-token cut, the fallback)."""
        image = example.images[0] if example.images else None
        rewriter = ctx.model("rewriter")
        first = await rewriter.chat(rewrite_messages(example.question, image), step="analyse", **REWRITE_SAMPLING)
        second = await rewriter.chat(
            rewrite_messages(example.question, image, first.text),
            step="rewrite",
            json_schema=rewrite_schema(),
            **REWRITE_SAMPLING,
        )
        return search_query(truncate_response(second.text, tokenizer_dir(ctx)), example.question)

    async def documents(self, example: Example, ctx: Context) -> list[Document]:
        query = await self.rewritten(example, ctx)
        if ctx.retriever is None:  # a Context built outside a run
            return example.docs[: self.top_n]
        return await ctx.retriever.search(query, self.top_n)
