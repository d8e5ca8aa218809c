"""Reasoning models that search as they think (FlashRAG's `ReasoningPipeline` family, flashrag/pipeline/
reasoning_pipeline.py at commit 1ee5249): the model writes until it closes a search tag, the passages for that
query come back in the model's own document format, appended to everything written so far, and it goes on,
until it writes an answer or the rounds run out.

One class, `ReasoningSearch`; each method is a `SearchFormat` (its prompt, tags, stop strings, passage
format): R1-Searcher (`r1_searcher`), Search-R1 (`search_r1`), AutoRefine (`autorefine`) and
SimpleDeepSearcher (`simple_deep_searcher`, whose answer is `\\boxed{...}`). O2-Searcher (`o2_searcher`)
keeps a conversation instead of one growing text: plugins/reasoning_search/o2_searcher.py. Search-R1 as its own
scripts run it (`search_r1_own`): plugins/reasoning_search/search_r1_own.py.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from annotated_types import Ge

from ragbench.api import Context, Document, Example, OutputFormat, Prediction, RecordedExtras, System
from ragbench.api.engines import Response, SamplingArgs
from ragbench.api.flashrag import FlashRagTemplate, flashrag_reference, flashrag_sampling, flashrag_searching

from .prompts import (
    AUTOREFINE_USER,
    R1_SEARCHER_DOC,
    R1_SEARCHER_STOP,
    R1_SEARCHER_USER,
    SEARCH_R1_DOC,
    SEARCH_R1_STOP,
    SEARCH_R1_USER,
    SIMPLE_DEEP_SEARCHER_STOP,
    SIMPLE_DEEP_SEARCHER_USER,
)

NO_ANSWER = "No valid answer found"  # FlashRAG's pred when the rounds run out or a search tag holds no query
EXTRAS = "reasoning_search"
BOXED = ("\\boxed{", "}")


def extract_between(text: str, start: str, end: str) -> str | None:
    """The last text between `start` and `end`, stripped; None when there is none (FlashRAG's
    flashrag/utils/utils.py:180-185)."""
    found = re.findall(re.escape(start) + r"(.*?)" + re.escape(end), text, flags=re.DOTALL)
    return found[-1].strip() if found else None


@dataclass(frozen=True)
class SearchFormat:
    """What one reasoning-search model is prompted with and writes: its user prompt, its query tags, the tags
    and line format its passages come back in, its stop strings, and its answer tags (None: the answer is
    `\\boxed{...}` anywhere in an output)."""

    user_prompt: str
    query: tuple[str, str]
    documents: tuple[str, str]
    doc_line: str
    stop: tuple[str, ...]
    answer: tuple[str, str] | None = ("<answer>", "</answer>")

    def passages(self, docs: list[Document]) -> str:
        """The block appended after a search (`_retrieved_docs_to_string`)."""
        begin, end = self.documents
        return f"\n\n{begin}\n{flashrag_reference(docs, self.doc_line)}\n{end}\n\n"


@dataclass(frozen=True)
class Turn:
    """How one output ends the round: `answer` (pred is the answer), `search` (`queries`; `text` the first),
    `bad_query` (a search tag with no query: pred NO_ANSWER) or `unformatted` (neither: pred is the output,
    stripped)."""

    kind: str
    text: str
    queries: tuple[str, ...] = ()


def ended(
    example: Example, turn: Turn, raw_output: str, shown: list[Document], rounds: int, searches: int
) -> Prediction:
    """The prediction of a run that ended on `turn`, its extras those `statistics` and `format_adherence` read."""
    return Prediction(
        example_id=example.id,
        answer=turn.text,
        raw_output=raw_output,
        docs=shown,
        extras={EXTRAS: {"rounds": rounds, "searches": searches, "finish": turn.kind}},
    )


def read_output(output: str, fmt: SearchFormat) -> Turn:
    """FlashRAG's reading of one output (reasoning_pipeline.py:117-136, 239-254): an answer first, then a
    search the output ends with, else the output itself finishes the example."""
    if fmt.answer is None:
        if "\\boxed" in output:
            return Turn("answer", str(extract_between(output, *BOXED)))
    elif fmt.answer[1] in output and output.endswith((fmt.answer[1], "<|endoftext|>")):
        return Turn("answer", str(extract_between(output, *fmt.answer)))
    if fmt.query[0] in output and output.endswith(fmt.query[1]):
        query = extract_between(output, *fmt.query)
        return Turn("search", query, (query,)) if query is not None else Turn("bad_query", NO_ANSWER)
    return Turn("unformatted", output.strip())


R1_SEARCHER = SearchFormat(
    R1_SEARCHER_USER,
    ("<|begin_of_query|>", "<|end_of_query|>"),
    ("<|begin_of_documents|>", "<|end_of_documents|>"),
    R1_SEARCHER_DOC,
    R1_SEARCHER_STOP,
)
SEARCH_R1 = SearchFormat(
    SEARCH_R1_USER, ("<search>", "</search>"), ("<information>", "</information>"), SEARCH_R1_DOC, SEARCH_R1_STOP
)
AUTOREFINE = SearchFormat(
    AUTOREFINE_USER, ("<search>", "</search>"), ("<documents>", "</documents>"), SEARCH_R1_DOC, SEARCH_R1_STOP
)
SIMPLE_DEEP_SEARCHER = SearchFormat(
    SIMPLE_DEEP_SEARCHER_USER,
    ("<|begin_search_query|>", "<|end_search_query|>"),
    ("<|begin_search_result|>", "<|end_search_result|>"),
    R1_SEARCHER_DOC,
    SIMPLE_DEEP_SEARCHER_STOP,
    answer=None,
)


class ReasoningSearch(System):
    """R1-Searcher (Song et al., 2025) as FlashRAG runs it (`ReasoningPipeline`, examples/methods/run_exp.py:593-616).

    Each round the model continues the prompt plus everything it wrote so far (each output stripped, then the
    passages of its search) until a stop string; an output that ends a search tag is searched for, one that
    closes the answer tag ends the example with the text inside it, any other ends it with the output itself.
    A plain model gets one growing string; a chat model the user message and, after the first round, what it
    wrote as a final assistant message to continue (FlashRAG renders the chat template and appends the text).

    Options (defaults from FlashRAG):
      max_retrieval_num  rounds of generation (5, reasoning_pipeline.py:35; SimpleDeepSearcher 10, :156);
                         an example still going after them gets "No valid answer found"
      topk               passages per search (5: retrieval_topk of examples/methods/my_config.yaml)
      round_tokens       tokens per round (512: generation_params.max_tokens, run_exp.py:597; SimpleDeepSearcher
                         2048, :753); not `max_tokens`, which a task sets for a short answer (32)
    Sampling is FlashRAG's vLLM generator's: greedy, "<|eot_id|>" added to the stop strings, the stop string
    that fired kept at the end of the output, special tokens kept (skip_special_tokens False).
    """

    name = "r1_searcher"
    declares = flashrag_searching("max_retrieval_num")
    search_format: ClassVar[SearchFormat] = R1_SEARCHER
    default_rounds: ClassVar[int] = 5
    default_topk: ClassVar[int] = 5
    default_round_tokens: ClassVar[int] = 512

    def __init__(
        self,
        max_retrieval_num: Annotated[int, Ge(1)] | None = None,
        topk: Annotated[int, Ge(1)] | None = None,
        round_tokens: Annotated[int, Ge(1)] | None = None,
    ) -> None:
        self.max_retrieval_num = int(max_retrieval_num or self.default_rounds)
        self.topk = int(topk or self.default_topk)
        self.round_tokens = int(round_tokens or self.default_round_tokens)
        self.declares = dataclasses.replace(self.declares, recorded=self.recorded_run())

    def recorded_run(self) -> RecordedExtras:
        """What `ended` records of each example, which `statistics` and `format_adherence` read: an example follows
        the format when it ends with an answer in this method's answer format (`search_format`)."""
        fmt = self.search_format
        answer = "\\boxed{...}" if fmt.answer is None else "{} ... {}".format(*fmt.answer)
        return RecordedExtras(
            EXTRAS,
            means={"mean_rounds": "rounds", "mean_searches": "searches"},
            tallies={"finish": "finish"},
            output_format=OutputFormat(
                f"searches as {fmt.query[0]} ... {fmt.query[1]}, the answer as {answer}",
                lambda run: run["finish"] == "answer",
                f"use a model trained for {self.name}'s format, or give it more rounds (max_retrieval_num)",
            ),
        )

    def sampling(self) -> SamplingArgs:
        return flashrag_sampling(
            "vllm", max_tokens=self.round_tokens, stop=list(self.search_format.stop), skip_special_tokens=False
        )

    async def continue_text(self, ctx: Context, written: str, **fields: Any) -> Response:
        """One round: the user prompt (`fields` filled in) and everything appended after it so far, which a chat
        model gets as an assistant message to continue (the template rendered and the text appended)."""
        prompt = FlashRagTemplate(system="", user=self.search_format.user_prompt).render(
            ctx.llm.chat_model, previous_gen=written, **fields
        )
        if isinstance(prompt, list):
            return await ctx.llm.chat(prompt, step="reason", **self.sampling())
        return await ctx.llm.generate(prompt, step="reason", **self.sampling())

    async def run(self, example: Example, ctx: Context) -> Prediction:
        fmt = self.search_format
        written, searches = "", 0
        shown: list[Document] = []
        for round_no in range(self.max_retrieval_num):
            with ctx.group(f"iteration {round_no + 1}"):
                response = await self.continue_text(
                    ctx, written, question=example.question, MAX_SEARCH_LIMIT=self.max_retrieval_num
                )
                output = response.text
                written += output.strip()
                turn = read_output(output, fmt)
                ctx.record_step("read output", inputs={"output": output}, outputs={turn.kind: turn.text})
                if turn.kind != "search":
                    break
                docs = await ctx.required_retriever().search(turn.text, self.topk)
                searches += 1
                shown.extend(docs)
                written += fmt.passages(docs)
        else:
            turn = Turn("rounds_out", NO_ANSWER)
        return ended(example, turn, written, shown, round_no + 1, searches)


class SearchR1(ReasoningSearch):
    """Search-R1 (Jin et al., 2025) as FlashRAG runs it (`SearchR1Pipeline`, run_exp.py:619-641): searches in
    <search> ... </search>, passages in <information> as "Doc i(Title: t) text" lines, the answer in
    <answer> ... </answer>. Options as `r1_searcher`'s."""

    name = "search_r1"
    search_format = SEARCH_R1


class AutoRefine(ReasoningSearch):
    """AutoRefine (Shi et al., 2025) as FlashRAG runs it (`AutoRefinePipeline`, run_exp.py:643-665): Search-R1's
    tags and passage lines with its own prompt, passages in <documents> ... </documents>. Options as
    `r1_searcher`'s."""

    name = "autorefine"
    search_format = AUTOREFINE


class SimpleDeepSearcher(ReasoningSearch):
    """SimpleDeepSearcher (Sun et al., 2025) as FlashRAG runs it (`SimpleDeepSearcherPipeline`, run_exp.py:749-771):
    searches in <|begin_search_query|> ... <|end_search_query|>, passages in <|begin_search_result|> as
    "(i)Title: t Text: x" lines, the answer the first `}`-closed text after the last "\\boxed{" of an output
    that holds "\\boxed". Defaults: 10 rounds (max_retrieval_num, reasoning_pipeline.py:156), round_tokens 2048
    (run_exp.py:753). FlashRAG cuts a prompt of 20,480 tokens or more and a passage block of 3,000 or more to
    their first and last halves (`truncate_prompt`); here nothing is cut: an over-long prompt is the engine's
    to refuse (counted as an error of that example)."""

    name = "simple_deep_searcher"
    search_format = SIMPLE_DEEP_SEARCHER
    default_rounds = 10
    default_round_tokens = 2048
