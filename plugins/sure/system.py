"""SuRe (Kim et al., ICLR 2024): answer candidates, a summary of the passages supporting each, then the
candidate whose summary is validated and ranked best, as FlashRAG's `SuRePipeline` runs it
(flashrag/pipeline/branching_pipeline.py:64-255, commit 1ee5249; `run_exp.py:257-273`).

Per example:

    docs = retrieve(question, topk)
    candidates = parse("(a) x, (b) y" of one call over the passages); none => answer ""
    summaries  = one call per candidate (concurrent)
    validation = one call per (candidate, summary): 1 if "true" in the lower-cased reply (concurrent)
    ranking    = one call per ordered pair of summaries: 1 if "passage 1", 0 if "passage 2", else 0.5
    answer     = the candidate with the highest validation + ranking row sum (the first on ties)

Departures: none in the calls; FlashRAG truncates a prompt of >= 2048 tokens (its generator_max_input_len),
which ragbench leaves to the engine's context limit.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from statistics import mean
from typing import Annotated, Any, TypedDict

from annotated_types import Ge

from ragbench.api import (
    Context,
    Document,
    Example,
    OutputFormat,
    Prediction,
    RecordedExtras,
    System,
)
from ragbench.api.data import JsonObject
from ragbench.api.flashrag import FlashRagTemplate, flashrag_generate, flashrag_reference, flashrag_retrieving

from .prompts import FIXED, PROMPTS, REFERENCE

CANDIDATE = re.compile(r"\((\w+)\)\s*([^()]+)")


class _SureTrace(TypedDict):
    candidates: list[str]


class SureTrace(_SureTrace, total=False):
    """What an example records (the prediction's extras["sure"]): the candidate answers and, where there were any,
    each one's validation (0 or 1), its ranking score and the index of the one chosen."""

    validation: list[int]
    ranking: list[float]
    chosen: int


def parse_candidates(output: str) -> list[str]:
    """`SuRePipeline.parse_candidates`: every "(x) answer" up to the next parenthesis, its first line,
    commas removed."""
    found = CANDIDATE.findall(output.strip("\n").strip())
    return [text.split("\n")[0].strip().replace(",", "").strip() for _, text in found]


def candidate_figures(runs: list[Any]) -> JsonObject:
    """Beyond the examples and their mean candidates: those with none, and the share of candidates validated
    (None where no example validated any)."""
    validated = [v for r in runs for v in r.get("validation", [])]
    return {
        "no_candidates": sum(1 for r in runs if not r["candidates"]),
        "validated_rate": round(mean(validated), 4) if validated else None,
    }


def parse_validation(output: str) -> int:
    return 1 if "true" in output.strip().lower() else 0


def parse_ranking(output: str) -> float:
    reply = output.strip().lower()
    return 1 if "passage 1" in reply else 0 if "passage 2" in reply else 0.5


def ranking_rows(count: int, pair_scores: dict[tuple[int, int], float]) -> list[float]:
    """Each summary's ranking score: the sum of its row of the pair-score matrix."""
    return [sum(score for (row, _), score in pair_scores.items() if row == i) for i in range(count)]


def best_candidate(validation: list[int], ranking: list[float]) -> int:
    """The index with the highest validation + ranking score, the first on ties (numpy's argmax)."""
    totals = [valid + rank for valid, rank in zip(validation, ranking)]
    return totals.index(max(totals))


class SuRe(System):
    """SuRe as FlashRAG runs it. Options (--system-arg):

    topk        passages retrieved for the question (5: `retrieval_topk` of FlashRAG's
                examples/methods/my_config.yaml, which run_exp.py:257-273 uses)
    max_tokens  the budget of every call (32: my_config.yaml `generation_params.max_tokens`)

    Greedy decoding with FlashRAG's vLLM stop list ("<|eot_id|>", flashrag/generator/generator.py:214-247).
    With a chat model each prompt is one user message (FlashRAG's user-only `PromptTemplate`s).
    `sure_fixed` is the same with the spaces FlashRAG's prompt literals lack put back.
    """

    name = "sure"
    declares = flashrag_retrieving(
        recorded=RecordedExtras(
            "sure",
            means={"mean_candidates": lambda run: len(run["candidates"])},
            figures=candidate_figures,
            output_format=OutputFormat(
                "answer candidates as (a) xx, (b) yy",
                lambda run: bool(run["candidates"]),
                'use an instruction-following model; an example without candidates answers "" as FlashRAG\'s SuRe does',
            ),
        )
    )
    prompts = PROMPTS

    def __init__(self, topk: Annotated[int, Ge(1)] = 5, max_tokens: Annotated[int, Ge(1)] = 32) -> None:
        self.topk = int(topk)
        self.max_tokens = int(max_tokens)

    def _render(self, ctx: Context, prompt: str, **fields: Any) -> str | list[dict[str, str]]:
        return FlashRagTemplate(system="", user=self.prompts[prompt]).render(ctx.llm.chat_model, **fields)

    async def _ask(self, ctx: Context, step: str, inputs: list[str | list[dict[str, str]]]) -> list[str]:
        """The calls of one stage, sent together (the scheduler batches them)."""
        calls = [flashrag_generate(ctx.llm, i, step=step, max_tokens=self.max_tokens) for i in inputs]
        return [response.text for response in await asyncio.gather(*calls)]

    async def run(self, example: Example, ctx: Context) -> Prediction:
        question = example.question
        with ctx.group("retrieval"):  # the viewer's timeline: stage by stage
            docs: list[Document] = await ctx.required_retriever().search(question, self.topk)
        reference = flashrag_reference(docs, REFERENCE)
        with ctx.group("candidates"):
            [output] = await self._ask(
                ctx,
                "candidates",
                [self._render(ctx, "candidates", N=len(docs), reference=reference, question=question)],
            )
            candidates = parse_candidates(output)
            ctx.record_step("candidates", inputs={"output": output}, outputs={"candidates": candidates})
        extras: SureTrace = {"candidates": candidates}
        if not candidates:
            return Prediction(example_id=example.id, answer="", raw_output=output, docs=docs, extras={"sure": extras})
        with ctx.group("summaries"):
            summaries = await self._ask(
                ctx,
                "summary",
                [self._render(ctx, "summary", question=question, pred=c, reference=reference) for c in candidates],
            )
        with ctx.group("validation"):
            replies = await self._ask(
                ctx,
                "validation",
                [
                    self._render(ctx, "validation", question=question, pred=c, summary=s)
                    for c, s in zip(candidates, summaries)
                ],
            )
            validation = [parse_validation(reply) for reply in replies]
        pairs = list(itertools.permutations(range(len(summaries)), 2))
        with ctx.group("ranking"):
            replies = await self._ask(
                ctx,
                "ranking",
                [
                    self._render(ctx, "ranking", question=question, summary1=summaries[a], summary2=summaries[b])
                    for a, b in pairs
                ],
            )
            ranking = ranking_rows(len(candidates), {pair: parse_ranking(r) for pair, r in zip(pairs, replies)})
            best = best_candidate(validation, ranking)
            ctx.record_step(
                "choice",
                inputs={"validation": validation, "ranking": ranking},
                outputs={"answer": candidates[best], "index": best},
            )
        extras["validation"], extras["ranking"], extras["chosen"] = validation, ranking, best
        return Prediction(
            example_id=example.id, answer=candidates[best], raw_output=output, docs=docs, extras={"sure": extras}
        )


class SuReFixed(SuRe):
    """SuRe with the spaces FlashRAG's prompt literals lack ("After readingthe passages", "write agood-quality
    passage", "youare done", ...) put back; otherwise `sure`."""

    name = "sure_fixed"
    prompts = FIXED
