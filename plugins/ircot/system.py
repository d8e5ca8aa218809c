"""IRCoT (Trivedi et al., ACL 2023) as FlashRAG runs it (`IRCOTPipeline`, flashrag/pipeline/active_pipeline.py:925-1042,
commit 1ee5249; `ircot` in examples/methods/run_exp.py:440-458).

Per example: search the question; then up to `max_iter` rounds of one thought each. The prompt is the worked
example, the passages gathered so far (the first search's in rank order) and "Question: ...\\nThought:" followed directly by the thoughts so far
joined by " " (:974-979); the thought is generated with stop strings "." and "\\n" (:986; FlashRAG's vLLM
generator keeps the one that fired). A thought holding "So the answer is:" ends the loop; otherwise it is the
next search's query (:1007-1011, also after the last round), and the passages found are merged into the
example's pool by id, keeping each one's best score, ordered by score ASCENDING (:1027: the best passage comes
last, next to the question). The prediction is the text after the first "So the answer is:" of the joined
thoughts, stripped (`ircot_pred_parse`), else the joined thoughts; `raw_output` keeps the joined thoughts.

`ircot_fixed` orders the pool best first (descending), as IRCoT's paper and FlashRAG's other pipelines
show passages. A retriever that gives no scores (the examples' provided passages) keeps them in the order
first found. The prompt is one string for a chat model too (FlashRAG's `enable_chat=False`, :933-946).
FlashRAG advances all examples in lock-step; here the scheduler batches the calls of all examples.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from annotated_types import Ge

from ragbench.api import Context, Document, Example, OutputFormat, Prediction, RecordedExtras, System
from ragbench.api.flashrag import flashrag_generate, flashrag_searching

from .prompts import FINAL_ANSWER, TEMPLATE

THOUGHT_STOP = [".", "\n"]


class Ircot(System):
    """Options (--system-arg), FlashRAG's defaults:
    max_iter     thoughts at most (run_exp.py:456, 5; the pipeline's own default is 2)
    topk         passages per search (my_config.yaml `retrieval_topk`, 5)
    max_tokens   per thought (my_config.yaml `generation_params.max_tokens`, 32; greedy)
    flashrag_generator  the FlashRAG generator whose output handling is copied, whatever the engine: vllm
                 (my_config.yaml: the stop string that ended a thought stays in it) | hf (cut and stripped)
    ascending    order of the passage pool by score: true (FlashRAG, :1027) | false (`ircot_fixed`)
    """

    name = "ircot"
    declares = flashrag_searching(
        "max_iter",
        recorded=RecordedExtras(
            "ircot",
            means={"mean_thoughts": "thoughts", "mean_passages": "passages"},
            output_format=OutputFormat(
                f'a thought starting "{FINAL_ANSWER}" within max_iter thoughts',
                "answered",
                "raise max_iter, or use a model that follows the worked example",
            ),
        ),
    )
    ascending = True

    def __init__(
        self,
        max_iter: Annotated[int, Ge(1)] = 5,
        topk: Annotated[int, Ge(1)] = 5,
        max_tokens: Annotated[int, Ge(1)] = 32,
        flashrag_generator: Literal["vllm", "hf"] = "vllm",
        ascending: bool | None = None,
    ) -> None:
        self.max_iter, self.topk, self.max_tokens, self.flashrag_generator = (
            int(max_iter),
            int(topk),
            int(max_tokens),
            flashrag_generator,
        )
        if ascending is not None:
            self.ascending = bool(ascending)

    async def run(self, example: Example, ctx: Context) -> Prediction:
        question = example.question
        thoughts: list[str] = []
        with ctx.group("retrieval"):
            docs = await ctx.required_retriever().search(question, self.topk)  # in rank order until the first merge
        pool = self.merge({}, docs)
        for round_index in range(self.max_iter):
            with ctx.group(f"iteration {round_index + 1}"):
                prompt = TEMPLATE.render(ctx.llm.chat_model, docs, previous_gen=" ".join(thoughts), question=question)
                response = await flashrag_generate(
                    ctx.llm,
                    prompt,
                    self.flashrag_generator,
                    step="thought",
                    max_tokens=self.max_tokens,
                    stop=THOUGHT_STOP,
                )
                thought = response.text.strip() if self.flashrag_generator == "hf" else response.text
                thoughts.append(thought)
                final = FINAL_ANSWER in thought
                ctx.record_step("next", outputs={"final": final, "query": None if final else thought})
                if final:
                    break
                pool = self.merge(pool, await ctx.required_retriever().search(thought, self.topk))
                docs = self.ordered(pool)
        raw = " ".join(thoughts)
        answer = raw.split(FINAL_ANSWER)[1].strip() if FINAL_ANSWER in raw else raw
        return Prediction(
            example.id,
            answer=answer,
            raw_output=raw,
            docs=docs,
            extras={"ircot": {"thoughts": len(thoughts), "answered": FINAL_ANSWER in raw, "passages": len(pool)}},
        )

    @staticmethod
    def merge(pool: dict[Any, Document], found: list[Document]) -> dict[Any, Document]:
        """The pool with `found` added by id, each passage with its best score so far (insertion order kept:
        it breaks ties in the sort)."""
        merged = dict(pool)
        for doc in found:
            key = doc.id if doc.id is not None else (doc.title, doc.text)
            kept = merged.get(key)
            if kept is None or (doc.score or 0.0) > (kept.score or 0.0):
                merged[key] = doc if kept is None else Document(**{**vars(kept), "score": doc.score})
        return merged

    def ordered(self, pool: dict[Any, Document]) -> list[Document]:
        return sorted(pool.values(), key=lambda doc: doc.score or 0.0, reverse=not self.ascending)


class IrcotFixed(Ircot):
    """IRCoT with the passage pool best first (FlashRAG sorts it ascending, active_pipeline.py:1027)."""

    name = "ircot_fixed"
    ascending = False
