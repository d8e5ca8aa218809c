"""O2-Searcher (Mei et al., 2025) as FlashRAG runs it (`O2SearcherPipeline`, flashrag/pipeline/
reasoning_pipeline.py:356-487 at commit 1ee5249, examples/methods/run_exp.py:668-691): a conversation that
grows by user messages, where the other reasoning-search methods continue one text."""

from __future__ import annotations

import asyncio
import re
from typing import ClassVar

from ragbench.api import Context, Example, Prediction

from .prompts import (
    O2_SEARCHER_ERROR,
    O2_SEARCHER_LEARNINGS,
    O2_SEARCHER_STOP,
    O2_SEARCHER_SYSTEM,
    O2_SEARCHER_USER,
    R1_SEARCHER_DOC,
)
from .system import NO_ANSWER, ReasoningSearch, SearchFormat, Turn, ended, extract_between

O2_SEARCHER = SearchFormat(
    O2_SEARCHER_USER, ("<query>", "</query>"), ("<learnings>", "</learnings>"), R1_SEARCHER_DOC, O2_SEARCHER_STOP
)
SEARCH_TAGS = ("<search>", "</search>")


def completed(output: str) -> str:
    """A search output cut at the stop string "></search" completed with ">" (reasoning_pipeline.py:443-444)."""
    return output if SEARCH_TAGS[1] in output else output + ">"


def read_o2_output(output: str) -> Turn:
    """FlashRAG's reading of one output (reasoning_pipeline.py:436-460): "</answer>" anywhere is an answer (the
    text of the last <answer> ... </answer>); else "<search>" is a search, its queries every <query> ...
    </query> of the last <search> ... </search>, unstripped; neither is `unformatted` (the model is told so
    and tries again)."""
    if "</answer>" in output:
        assert O2_SEARCHER.answer is not None  # its tags, given above
        return Turn("answer", str(extract_between(output, *O2_SEARCHER.answer)))
    if SEARCH_TAGS[0] not in output:
        return Turn("unformatted", output.strip())
    block = extract_between(completed(output), *SEARCH_TAGS)
    queries = tuple(re.findall(r"<query>(.*?)</query>", block, flags=re.DOTALL)) if block else ()
    return Turn("search", queries[0], queries) if queries else Turn("bad_query", NO_ANSWER)


class O2Searcher(ReasoningSearch):
    """O2-Searcher: the system prompt and "Initial query:{question}" start a conversation; each output that
    searches becomes a user message (stripped), the passages of all its queries (top `topk` each, in query
    order, numbered on) another user message "Search learnings: <learnings>...</learnings>.\\n"; an output
    that neither answers nor searches is followed by FlashRAG's error message (it is not kept) and the model
    tries again, until the rounds run out. A chat model gets the messages, a plain model their texts joined by
    blank lines (FlashRAG's `get_string(messages=...)`).

    Options as `r1_searcher`'s, with `topk` 3 (run_exp.py:677). Departure: a search block with no
    <query> inside ends the example with "No valid answer found" as FlashRAG does for a block it cannot read;
    FlashRAG crashes on an empty one (`sum` of a string)."""

    name = "o2_searcher"
    search_format: ClassVar[SearchFormat] = O2_SEARCHER
    default_topk = 3

    async def run(self, example: Example, ctx: Context) -> Prediction:
        sampling = self.sampling()
        messages = [
            {"role": "system", "content": O2_SEARCHER_SYSTEM},
            {"role": "user", "content": O2_SEARCHER_USER.format(question=example.question)},
        ]
        shown, searches = [], 0
        for round_no in range(self.max_retrieval_num):
            with ctx.group(f"iteration {round_no + 1}"):
                if ctx.llm.chat_model:
                    response = await ctx.llm.chat(messages, step="reason", **sampling)
                else:
                    prompt = "\n\n".join(m["content"] for m in messages if m["content"])
                    response = await ctx.llm.generate(prompt, step="reason", **sampling)
                output = response.text
                turn = read_o2_output(output)
                ctx.record_step("read output", inputs={"output": output}, outputs={turn.kind: turn.text})
                if turn.kind in ("answer", "bad_query"):
                    break
                if turn.kind == "unformatted":
                    messages.append({"role": "user", "content": O2_SEARCHER_ERROR})
                    continue
                messages.append({"role": "user", "content": completed(output).strip()})
                found = await asyncio.gather(
                    *(ctx.required_retriever().search(query, self.topk) for query in turn.queries)
                )
                docs = [doc for hits in found for doc in hits]
                searches += 1
                shown.extend(docs)
                learnings = self.search_format.passages(docs)
                messages.append({"role": "user", "content": O2_SEARCHER_LEARNINGS.format(learning_str=learnings)})
        else:
            turn = Turn("rounds_out", NO_ANSWER)
        return ended(example, turn, output, shown, round_no + 1, searches)
