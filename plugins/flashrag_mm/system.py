"""FlashRAG's multimodal pipeline (`MMSequentialPipeline`, flashrag/pipeline/mm_pipeline.py, commit 1ee5249; run as
examples/run_mm/rum_mm_exp.py runs it), call for call.

`run`: per example, a search with the question's text (`perform_modality_dict["text"]`; FlashRAG's router sends a
text query to its text retriever, BM25, `bm25_num` hits) and one with the question's picture
(`perform_modality_dict["image"]`: its CLIP image index, `clip_num` hits), their hits concatenated in that order
(a document both find is shown twice, as FlashRAG's "concat" merge removes repeats within one search only); then
one generation over FlashRAG's multimodal prompt (prompts.py). `naive_run` is `searches=none`. The prediction is
the generation as FlashRAG's HF multimodal generator leaves it (greedy, `max_new_tokens`, not stripped).
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

from annotated_types import Ge

from ragbench.api import Context, Document, Example, Prediction, System, SystemDeclaration

from .choices import gaokao_choices
from .prompts import messages


class FlashRagMM(System):
    """Options (--system-arg), rum_mm_exp.py's defaults:
    searches     text+image (the pipeline's `run`) | text (`perform_modality_dict={'text': ['text']}`) |
                 image | none (`naive_run`: no retrieval)
    text_topk    hits of the search by the question's text (`--bm25_num`, 1)
    image_topk   hits of the search by the question's picture (`--clip_num`, 1); the retriever must search by
                 picture (`Retriever.image_queries`)
    template     mm (MMPromptTemplate: mmqa) | mathvista (MathVistaPromptTemplate, by the example's question_type) |
                 gaokao (GAOKAOMMPromptTemplate, by its question_type and subject; the answer is the choice letters
                 `gaokaomm_pred_parse` reads, the output its raw_output)
    max_tokens   per generation (`generation_params.max_new_tokens`: 128 for mmqa and gaokao_mm, 256 for mathvista)
    """

    name = "flashrag_mm"
    declares = SystemDeclaration(
        retrieves=True,
        searches_by_picture="--system-arg searches=text",
        budget_options={"passages": "text_topk"},
        prompt_style="flashrag",
    )

    def __init__(
        self,
        searches: Literal["text+image", "text", "image", "none"] = "text+image",
        text_topk: Annotated[int, Ge(1)] = 1,
        image_topk: Annotated[int, Ge(1)] = 1,
        template: Literal["mm", "mathvista", "gaokao"] = "mm",
        max_tokens: Annotated[int, Ge(1)] = 128,
    ) -> None:
        self.searches, self.template = searches, template
        self.text_topk, self.image_topk, self.max_tokens = int(text_topk), int(image_topk), int(max_tokens)
        if "image" not in searches:
            self.declares = dataclasses.replace(self.declares, retrieves=searches != "none", searches_by_picture=None)

    async def run(self, example: Example, ctx: Context) -> Prediction:
        docs: list[Document] = []
        if "text" in self.searches:
            docs += await ctx.required_retriever().search(example.question, self.text_topk)
        if "image" in self.searches and example.images:
            docs += await ctx.required_retriever().search_image(example.images[0], self.image_topk)
        turn = messages(self.template, example, docs, retrieved=self.searches != "none")
        response = await ctx.llm.chat(turn, step="generate", max_tokens=self.max_tokens, temperature=0.0)
        if self.template != "gaokao":
            return Prediction(example.id, answer=response.text, docs=docs)
        choices = gaokao_choices(response.text, example.meta["question_type"])
        return Prediction(example.id, answer=choices, raw_output=response.text, docs=docs)
