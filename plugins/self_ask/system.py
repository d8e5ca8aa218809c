"""Self-Ask with retrieval (Press et al., EMNLP Findings 2023) as FlashRAG runs it (`SelfAskPipeline`,
flashrag/pipeline/active_pipeline.py:806-922, commit 1ee5249), with the settings of `retrobust` in
examples/methods/run_exp.py:217-254 (Ret-Robust's pipeline without its LoRA: multi-hop exemplars, 100 tokens).

Per example: search the question; then up to `max_iter` calls, each over one string: the exemplars, "\\n",
the current passages as "Context{i}: text" lines, the question, "Are follow up questions needed here: Yes.\\n"
and what the model wrote so far (`res`). The calls alternate their stop string: "Intermediate answer:" (of
`res` only the text before it is kept: the model's own intermediate answer is dropped), then "Follow up:" (the
text up to and including the first "Follow up: ...\\n" line is kept, or the whole output with FlashRAG's kept
"Follow up:" at its end); a trailing newline of `res` is removed. An output with a "Follow up: " line (with
the space) searches that line's question; the passages found replace the current ones. An output with "So the
final answer is: " ends the loop. The prediction is the text after "So the final answer is: " on the first line
holding it, of the passages, question and `res` (`selfask_pred_parse`; `raw_output` keeps that text).

FlashRAG's follow-up detection reads one output only: a follow-up question generated right after a kept
"Follow up:" (its output starts with the question itself) is never searched for, and the model answers it from
the previous passages. `self_ask_fixed` reads the kept "Follow up:" with the output and searches it.
FlashRAG runs Self-Ask one example at a time; here the scheduler batches the calls of all examples.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from annotated_types import Ge

from ragbench.api import Context, Document, Example, OutputFormat, Prediction, RecordedExtras, System
from ragbench.api.flashrag import flashrag_generate, flashrag_searching

from .prompts import (
    FINAL_ANSWER,
    FOLLOW_UP,
    FOLLOW_UP_LINE,
    FOLLOW_UP_QUESTION,
    INTERMEDIATE_ANSWER,
    MULTI_HOP,
    SINGLE_HOP,
    STOP,
    context,
    question_block,
)


class SelfAsk(System):
    """Options (--system-arg), FlashRAG's defaults:
    max_iter      calls at most (run_exp.py:252, 5)
    single_hop    the single-hop exemplars and "Are follow up questions needed here: No." (run_exp.py:252, false)
    topk          passages per search (my_config.yaml `retrieval_topk`, 5)
    max_tokens    per call (run_exp.py:239 `generation_params.max_tokens`, 100; greedy)
    flashrag_generator  the FlashRAG generator whose output handling is copied, whatever the engine: vllm
                  (my_config.yaml: the stop string that fired stays in the output) | hf (cut and stripped)
    search_after_kept_follow_up   also search a follow-up question written after a kept "Follow up:"
                  (false: FlashRAG, active_pipeline.py:887-889; true: `self_ask_fixed`)
    """

    name = "self_ask"
    declares = flashrag_searching(
        "max_iter",
        calls_at_most="max_iter",  # one call a round; the search before them is no LLM call
        own_defaults=("max_tokens",),  # run_exp.py's 100 for this method, not a FlashRAG task's 32
        recorded=RecordedExtras(
            "self_ask",
            means={"mean_follow_up_searches": "searches"},
            output_format=OutputFormat(
                f'"{FINAL_ANSWER.strip()}" within max_iter calls',
                "answered",
                "raise max_iter, or use a model that follows Self-Ask's exemplars",
            ),
        ),
    )
    search_after_kept_follow_up = False

    def __init__(
        self,
        max_iter: Annotated[int, Ge(1)] = 5,
        single_hop: bool = False,
        topk: Annotated[int, Ge(1)] = 5,
        max_tokens: Annotated[int, Ge(1)] = 100,
        flashrag_generator: Literal["vllm", "hf"] = "vllm",
        search_after_kept_follow_up: bool | None = None,
    ) -> None:
        self.max_iter, self.single_hop, self.topk = int(max_iter), bool(single_hop), int(topk)
        self.max_tokens, self.flashrag_generator = int(max_tokens), flashrag_generator
        if search_after_kept_follow_up is not None:
            self.search_after_kept_follow_up = bool(search_after_kept_follow_up)

    async def run(self, example: Example, ctx: Context) -> Prediction:
        question = example.question
        exemplars, follow_ups = (SINGLE_HOP, "No.") if self.single_hop else (MULTI_HOP, "Yes.")
        with ctx.group("retrieval"):
            docs = await ctx.required_retriever().search(question, self.topk)
        res, stop, searches, answered = "", INTERMEDIATE_ANSWER, 0, False
        for round_index in range(self.max_iter):
            with ctx.group(f"iteration {round_index + 1}"):
                prompt = exemplars + "\n" + context(docs) + question_block(question, follow_ups) + res
                response = await flashrag_generate(
                    ctx.llm,
                    prompt,
                    self.flashrag_generator,
                    step=f"until {stop}",
                    max_tokens=self.max_tokens,
                    stop=[*STOP, stop],
                )
                output = response.text.strip() if self.flashrag_generator == "hf" else response.text
                kept_follow_up = res.endswith(FOLLOW_UP)
                res, stop = keep(res, output, stop)
                if not res:  # FlashRAG ends with an empty prediction (:881-883)
                    return self.prediction(example, "", docs, searches, answered=False)
                res = res[:-1] if res.endswith("\n") else res
                read = FOLLOW_UP + output if kept_follow_up and self.search_after_kept_follow_up else output
                query = follow_up_question(read)
                ctx.record_step("parse", outputs={"kept": res, "follow_up_question": query})
                if query is not None:
                    docs = await ctx.required_retriever().search(query, self.topk)
                    searches += 1
                if FINAL_ANSWER in output:
                    answered = True
                    break
        raw = context(docs) + question_block(question, follow_ups) + res
        return self.prediction(example, raw, docs, searches, answered)

    @staticmethod
    def prediction(example: Example, raw: str, docs: list[Document], searches: int, answered: bool) -> Prediction:
        answer = next((line.split(FINAL_ANSWER)[1].strip() for line in raw.split("\n") if FINAL_ANSWER in line), "")
        return Prediction(
            example.id,
            answer=answer,
            raw_output=raw,
            docs=docs,
            extras={"self_ask": {"searches": searches, "answered": answered}},
        )


def follow_up_question(text: str) -> str | None:
    """The question of the first "Follow up: " line of `text`, if any (:887-889)."""
    lines = [line for line in text.split("\n") if FOLLOW_UP_QUESTION in line]
    return lines[0].split(FOLLOW_UP_QUESTION)[-1] if lines else None


def keep(res: str, output: str, stop: str) -> tuple[str, str]:
    """`res` after one output, and the stop string of the next call (:862-873)."""
    if stop == INTERMEDIATE_ANSWER:
        return res + output.split(INTERMEDIATE_ANSWER)[0], FOLLOW_UP
    lines = re.findall(FOLLOW_UP_LINE, output)
    return res + re.split(FOLLOW_UP_LINE, output)[0] + (lines[0] if lines else ""), INTERMEDIATE_ANSWER


class SelfAskFixed(SelfAsk):
    """Self-Ask that also searches a follow-up question written right after a kept "Follow up:"."""

    name = "self_ask_fixed"
    search_after_kept_follow_up = True
