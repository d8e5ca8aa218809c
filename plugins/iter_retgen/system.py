"""Iter-RetGen (Shao et al., EMNLP Findings 2023) as FlashRAG runs it (`IterativePipeline`,
flashrag/pipeline/active_pipeline.py:13-57, commit 1ee5249; `iterretgen` in examples/methods/run_exp.py:412-437).

Per example, `iter_num` rounds of retrieval-augmented generation: round 0 searches the question, every later
round `f"{question} {previous generation}"` (the raw generation, newlines included, :34); each round answers
with FlashRAG's base prompt over that round's top `topk` passages (documents in the system message for a chat
model). The prediction is the last round's generation, unprocessed (FlashRAG's `pred`). FlashRAG advances
all examples in lock-step (one batch search and one generate per round); here each example runs on its own
and the scheduler batches the calls of all examples, whatever round each is in.
"""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Ge

from ragbench.api import Context, Document, Example, Prediction, System
from ragbench.api.flashrag import FLASHRAG_RAG_TEMPLATE, flashrag_generate, flashrag_searching


class IterRetGen(System):
    """Options (--system-arg), FlashRAG's defaults:
    iter_num     rounds (run_exp.py:422, 3)
    topk         passages per search (my_config.yaml `retrieval_topk`, 5)
    max_tokens   per generation (my_config.yaml `generation_params.max_tokens`, 32; greedy)
    flashrag_generator  the FlashRAG generator whose output handling is copied, whatever the engine: vllm
                 (my_config.yaml; "<|eot_id|>" joins the stop list) | hf (the output stripped)
    """

    name = "iter_retgen"
    declares = flashrag_searching("iter_num")

    def __init__(
        self,
        iter_num: Annotated[int, Ge(1)] = 3,
        topk: Annotated[int, Ge(1)] = 5,
        max_tokens: Annotated[int, Ge(1)] = 32,
        flashrag_generator: Literal["vllm", "hf"] = "vllm",
    ) -> None:
        self.iter_num, self.topk, self.max_tokens, self.flashrag_generator = (
            int(iter_num),
            int(topk),
            int(max_tokens),
            flashrag_generator,
        )

    async def run(self, example: Example, ctx: Context) -> Prediction:
        question, generation = example.question, ""
        docs: list[Document] = []
        for round_index in range(self.iter_num):
            with ctx.group(f"iteration {round_index + 1}"):
                query = question if round_index == 0 else f"{question} {generation}"
                docs = await ctx.required_retriever().search(query, self.topk)
                prompt = FLASHRAG_RAG_TEMPLATE.render(ctx.llm.chat_model, docs, question=question)
                response = await flashrag_generate(ctx.llm, prompt, self.flashrag_generator, max_tokens=self.max_tokens)
                generation = response.text.strip() if self.flashrag_generator == "hf" else response.text
        return Prediction(example.id, answer=generation, docs=docs)
