"""RQ-RAG (Chan et al., COLM 2024) as FlashRAG's `RQRAGPipeline` runs it (flashrag/pipeline/active_pipeline.py:
1045-1262, commit 1ee5249), with RQ-RAG's own model (e.g. zorowin123/rq_rag_llama2_7B, which has its special
tokens):

    paths = [the question in the model's chat format], depth 0
    breadth first, for each path:
        below max_depth, for each of [S_Rewritten_Query], [S_Decomposed_Query], [S_Disambiguated_Query]:
            the model writes a query after the token (greedy, up to "[EOS]"); it is searched (top `topk`) and
            the path continues, one deeper, with the query and "[R_Evidences]Title: t\\nText: x\\n...[/R_Evidences]"
        [A_Response]: the model writes an answer (SAMPLED: temperature 1, top_p 0.9, FlashRAG's
            other_generation_params), its confidence the mean probability of its tokens but the first and last
    answer = the answer of the most confident path (the first on ties)

Each depth's paths expand at once (their calls and searches batch with the other examples'); FlashRAG expands
one path per example at a time. With max_depth 3 that is 79 calls and 39 searches per question.

Departures: FlashRAG batches examples in a way that files a path's answer under the wrong example once some
examples have no paths left (it indexes its per-example lists by the position in the current batch) and checks
the depth of the batch's first path for all; here each example is its own tree (FlashRAG with batch_size 1).
vLLM's `spaces_between_special_tokens=False` is the engine's decoding; an output's "<s> " becomes "<s>" as
FlashRAG does. Not tested against FlashRAG (it reads vLLM's raw outputs, which its recording does not model):
tests/systems/rqrag/test_rqrag_tree.py tests the tree's prompts, expansion, searches and choice given scripted outputs.
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, cast

from annotated_types import Ge, Gt, Le

from ragbench.api import ConfigError, Context, Document, Example, OutputFormat, Prediction, RecordedExtras, System
from ragbench.api.engines import Response, SamplingArgs
from ragbench.api.flashrag import flashrag_searching, title_and_text

from .prompts import ANSWER_TOKEN, END, QUERY_TOKENS, STOP, evidences, first_prompt

LAST_BEFORE_END = re.compile(r"(.*?)\[EOS\]", re.DOTALL)


def before_end(output: str) -> str | None:
    """The text before the last "[EOS]" (after the one before it), stripped; None without one."""
    found = LAST_BEFORE_END.findall(output)
    return found[-1].strip() if found else None


def confidence(response: Response) -> float:
    """The mean probability of the answer's tokens, its first and last left out (FlashRAG: token_ids[1:-1])."""
    tokens = (response.logprobs or [])[1:-1]
    return sum(math.exp(t.logprob) for t in tokens) / len(tokens) if tokens else 0.0


@dataclass
class Path:
    prompt: str
    depth: int
    docs: list[Document] = field(default_factory=list)  # searched along the path, in order


@dataclass
class Answer:
    answer: str
    confidence: float
    output: str
    path: Path


class RqRag(System):
    """RQ-RAG as FlashRAG runs it. Options (--system-arg):

    max_depth    query expansions along a path (3: RQRAGPipeline's default, run_exp.py's rqrag)
    topk         passages per query (5: my_config.yaml retrieval_topk)
    call_max_tokens  the budget of every call (4096: response_generation_params / other_generation_params;
                 not the task's `max_tokens` default, which is an answer's)
    answer_temperature, top_p  the answer calls' sampling (1 and 0.9: other_generation_params; query calls are
                 greedy with top_p 0.9, response_generation_params)
    eos_token    the model tokenizer's eos token, which the first prompt holds ("</s>": Llama-2's, RQ-RAG's base)
    """

    name = "rqrag"
    declares = flashrag_searching(
        "max_depth",
        recorded=RecordedExtras(
            "rqrag",
            means={"mean_paths": "paths"},
            output_format=OutputFormat(
                f"answers ending with {END}",
                "parsed",
                "use RQ-RAG's model (zorowin123/rq_rag_llama2_7B); "
                "an answer without it is FlashRAG's 'Unable to detect valid answer'",
                of="paths",
            ),
        ),
    )

    def __init__(
        self,
        max_depth: Annotated[int, Ge(0)] = 3,
        topk: Annotated[int, Ge(1)] = 5,
        call_max_tokens: Annotated[int, Ge(1)] = 4096,
        answer_temperature: Annotated[float, Ge(0)] = 1.0,
        top_p: Annotated[float, Gt(0), Le(1)] = 0.9,
        eos_token: str = "</s>",
    ) -> None:
        self.max_depth, self.topk, self.call_max_tokens = int(max_depth), int(topk), int(call_max_tokens)
        self.answer_temperature, self.top_p, self.eos_token = float(answer_temperature), float(top_p), eos_token

    def check_model(self, engine: Any) -> None:
        missing = engine.missing_tokens([*QUERY_TOKENS, ANSWER_TOKEN])
        if missing:
            raise ConfigError(
                f"rqrag: model {engine.model} lacks RQ-RAG's special tokens {missing} (single "
                "vocabulary entries); use RQ-RAG's model, e.g. zorowin123/rq_rag_llama2_7B"
            )

    def _sampling(self, token: str) -> SamplingArgs:
        temperature = self.answer_temperature if token == ANSWER_TOKEN else 0.0
        return {
            "temperature": temperature,
            "top_p": self.top_p,
            "stop": list(STOP),
            "keep_stop": True,
            "skip_special_tokens": False,
            "logprobs": 1,
            "max_tokens": self.call_max_tokens,
        }

    async def _query(self, path: Path, token: str, ctx: Context) -> Path:
        """One query expansion: the model's query after `token`, searched; the path one deeper."""
        prompt = path.prompt + token
        output = (await ctx.llm.generate(prompt, step=token.strip("[]"), **self._sampling(token))).text
        output = output.replace("<s> ", "<s>")
        query = before_end(output)
        ctx.record_step(
            "query",
            inputs={"token": token, "depth": path.depth},
            outputs={"query": query if query is not None else "dummy", "parsed": query is not None},
        )
        docs = await ctx.required_retriever().search(query if query is not None else "dummy", self.topk)
        passages = [title_and_text(doc) for doc in docs]
        return Path(prompt + output + evidences(passages), path.depth + 1, [*path.docs, *docs])

    async def _answer(self, path: Path, ctx: Context) -> Answer:
        prompt = path.prompt + ANSWER_TOKEN
        response = await ctx.llm.generate(prompt, step="answer", **self._sampling(ANSWER_TOKEN))
        output = response.text.replace("<s> ", "<s>")
        answer = before_end(output)
        found = Answer(
            answer if answer is not None else "Unable to detect valid answer", confidence(response), output, path
        )
        ctx.record_step(
            "answer",
            inputs={"depth": path.depth},
            outputs={"answer": found.answer, "confidence": found.confidence, "parsed": answer is not None},
        )
        return found

    async def _expand(self, path: Path, ctx: Context) -> tuple[list[Path], Answer]:
        tokens = QUERY_TOKENS if path.depth < self.max_depth else ()
        *children, answer = await asyncio.gather(
            *(self._query(path, token, ctx) for token in tokens), self._answer(path, ctx)
        )
        return cast(list[Path], children), cast(Answer, answer)  # the queries' paths, then the answer

    async def run(self, example: Example, ctx: Context) -> Prediction:
        paths = [Path(first_prompt(example.question, self.eos_token), 0)]
        answers: list[Answer] = []
        while paths:
            with ctx.group(f"depth {paths[0].depth}"):
                expanded = await asyncio.gather(*(self._expand(path, ctx) for path in paths))
            paths = [child for children, _ in expanded for child in children]
            answers += [answer for _, answer in expanded]
        best = max(answers, key=lambda a: a.confidence)  # the first of equal confidences, as max() keeps it
        ctx.record_step(
            "choice",
            inputs={"confidences": [a.confidence for a in answers]},
            outputs={"answer": best.answer, "depth": best.path.depth},
        )
        return Prediction(
            example_id=example.id,
            answer=best.answer,
            raw_output=best.output,
            docs=best.path.docs,
            extras={
                "rqrag": {
                    "paths": len(answers),
                    "parsed": sum(a.answer != "Unable to detect valid answer" for a in answers),
                }
            },
        )
