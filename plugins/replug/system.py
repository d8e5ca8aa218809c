"""REPLUG (Shi et al., NAACL 2024) as FlashRAG's `REPLUGPipeline` runs it (flashrag/pipeline/branching_pipeline.py:
12-61 and replug_utils.py:204-222, commit 1ee5249; examples/methods/run_exp.py:276-293):

    docs = retrieve(question, topk)
    prompts = FlashRAG's default template, one per passage, its reference "Document(Title: t): text"
    weights = the passages' retrieval scores / their sum
    answer = greedy decoding where each step's logits are sum_i weights_i * logits_i over the prompts (one
             `generate_ensemble` call: the engine decodes the k prompts as one), stripped as FlashRAG's HF
             generator strips it

It needs every prompt's next-token logits at every step: the `hf` engine gives them (`Engine.decodes_ensembles`);
vllm, openai and the test engines cannot, and the run is refused before it starts.

Departures: scores that do not sum to a positive number (a retriever without scores, dense scores around 0)
give equal weights (FlashRAG divides by their sum: infinities). FlashRAG truncates prompts of >= 2048 tokens.
"""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Ge

from ragbench.api import ConfigError, Context, Document, Example, Prediction, RecordedExtras, System, Task
from ragbench.api.engines import EngineNeeds
from ragbench.api.flashrag import FLASHRAG_RAG_TEMPLATE, flashrag_retrieving, title_and_text

REFERENCE = "Document(Title: {title}): {text}"  # REPLUGPipeline.format_reference


def passage_weights(docs: list[Document]) -> list[float]:
    """The passages' scores normalised to sum 1 (REPLUGLogitsProcessor); equal weights when they cannot be."""
    scores = [doc.score for doc in docs if doc.score is not None]
    total = sum(scores) if len(scores) == len(docs) else 0.0
    if total <= 0:
        return [1.0 / len(docs)] * len(docs)
    return [s / total for s in scores]


class Replug(System):
    """REPLUG as FlashRAG runs it. Options (--system-arg):

    topk        passages, one prompt each (5: my_config.yaml retrieval_topk)
    max_tokens  the answer's budget (32: my_config.yaml generation_params.max_tokens, FlashRAG's HF generator's
                max_new_tokens)

    Greedy decoding, no stop strings; the answer is the decoded text stripped (FlashRAG's HF generator).
    """

    name = "replug"
    declares = flashrag_retrieving(recorded=RecordedExtras("replug", means={"mean_passages": "passages"}))

    def __init__(self, topk: Annotated[int, Ge(1)] = 5, max_tokens: Annotated[int, Ge(1)] = 32) -> None:
        self.topk, self.max_tokens = int(topk), int(max_tokens)

    def engine_needs(self, task: Task) -> EngineNeeds | None:
        return EngineNeeds(system=f"replug on {task.name}", ensembles=True)

    def check_model(self, engine: Any) -> None:
        if not engine.decodes_ensembles:
            raise ConfigError(
                f"replug decodes every passage's prompt at once, mixing their next-token logits, which "
                f"the {engine.kind} engine cannot give; run the model with --model hf:MODEL"
            )

    def prompts(self, docs: list[Document], question: str, chat_model: bool) -> list[Any]:
        """One prompt (or chat messages) per passage: FlashRAG's default template over that passage alone."""
        out = []
        for doc in docs:
            title, text = title_and_text(doc)
            out.append(
                FLASHRAG_RAG_TEMPLATE.render(
                    chat_model, reference=REFERENCE.format(title=title, text=text), question=question
                )
            )
        return out

    async def run(self, example: Example, ctx: Context) -> Prediction:
        docs = await ctx.required_retriever().search(example.question, self.topk)
        if not docs:
            raise ValueError(f"replug: the retriever returned no passage for {example.id!r}")
        weights = passage_weights(docs)
        ctx.record_step(
            "weights", inputs={"scores": [doc.score for doc in docs]}, outputs={"weights": weights}, docs=docs
        )
        response = await ctx.llm.generate_ensemble(
            self.prompts(docs, example.question, ctx.llm.chat_model),
            weights,
            step="replug",
            max_tokens=self.max_tokens,
            temperature=0.0,
        )
        return Prediction(
            example_id=example.id,
            answer=response.text.strip(),
            raw_output=response.text,
            docs=docs,
            extras={"replug": {"passages": len(docs)}},
        )
