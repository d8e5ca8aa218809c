"""ReaRAG (Lee et al., 2025) as FlashRAG runs it (`ReaRAGPipeline`, flashrag/pipeline/reasoning_pipeline.py:
489-716 at commit 1ee5249, examples/methods/run_exp.py:693-716)."""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Ge

from ragbench.api import Context, Document, Example, OutputFormat, Prediction, RecordedExtras, System
from ragbench.api.flashrag import flashrag_sampling, flashrag_searching, title_and_text

from .actions import first_action, next_move
from .prompts import ACTION_STOP, LONG_ANSWER, SHORT_ANSWER, SHORT_ANSWER_STOP, SYSTEM

NO_ANSWER = "No valid answer found"
EXTRAS = "rearag"
VLLM_TEMPERATURE = 1.0  # vLLM's SamplingParams default, which FlashRAG's long-answer call leaves in place
FLASHRAG_SEED = 2024  # examples/methods/my_config.yaml `seed`, which FlashRAG's vLLM generator gives every call (:232)


def long_answer_prompt(docs: list[Document], query: str) -> str:
    """`template_doc_and_tempquery`: every passage's "title\\ntext", repeats kept (its check for repeats
    compares a passage with strings and never finds one), joined by blank lines."""
    return LONG_ANSWER.format("\n\n".join("\n".join(title_and_text(doc)) for doc in docs), query)


class ReaRag(System):
    """ReaRAG: each round the model writes "Thought N: ... Action N: ```{dict}```"; the first step's action is
    read (with `ast.literal_eval`, where FlashRAG runs `eval`). `search`: the query is searched (top `topk`),
    a separate call writes a long answer to it from the passages, and the conversation gains the model's
    output, that answer as an "observation" message and an empty assistant message. `finish`: a short-answer
    call over the action's answer gives the prediction. An output that cannot be read, or another function,
    restarts the conversation (the round still counts); after `max_iter_num` rounds the prediction is "No
    valid answer found".

    FlashRAG's run_exp sets `is_reasoning`, so every conversation goes through the chat template whatever the
    model: a chat model gets the messages ([system, user, empty assistant], ...), a plain model their
    non-empty texts joined by blank lines; the long-answer prompt is a plain string in both.

    Options (defaults from FlashRAG):
      max_iter_num          rounds (15, reasoning_pipeline.py:560)
      topk                  passages per search (5: retrieval_topk of examples/methods/my_config.yaml)
      round_tokens          tokens per call (1024: generation_params.max_tokens, run_exp.py:704); not
                            `max_tokens`, which a task sets for a short answer
      long_answer_temperature  the long-answer call's temperature: FlashRAG gives none (its config's
                            do_sample is dropped), so vLLM samples it at its default 1.0; 0 makes it greedy
      long_answer_seed      the sampled long answer's seed: FlashRAG's config seed, 2024, which its vLLM
                            generator sends with every call (generator.py:232), so every long answer of a run
                            samples from the same seed; null: ragbench's per-call seeds from the run's --seed
    The action and short-answer calls are greedy (temperature 0 with top_p 0.85 / 0.7, :564-573), their stop
    strings plus "<|eot_id|>" kept at the end of the output (FlashRAG's vLLM generator), so a short answer
    may end with one.
    """

    name = "rearag"
    declares = flashrag_searching(
        "max_iter_num",
        recorded=RecordedExtras(
            EXTRAS,
            means={f"mean_{key}": key for key in ("rounds", "searches", "restarts")},
            counts={"finished": "finished"},
            # every round's output should hold a readable Thought/Action step; a restart is one that did not
            output_format=OutputFormat(
                "Thought N: ... Action N: ```{'function': 'search'|'finish', 'parameters': {...}}```",
                lambda run: run["rounds"] - run["restarts"],
                "use a ReaRAG-trained model (THU-KEG/ReaRAG-9B)",
                of="rounds",
            ),
        ),
    )

    def __init__(
        self,
        max_iter_num: Annotated[int, Ge(1)] = 15,
        topk: Annotated[int, Ge(1)] = 5,
        round_tokens: Annotated[int, Ge(1)] = 1024,
        long_answer_temperature: Annotated[float, Ge(0)] = VLLM_TEMPERATURE,
        long_answer_seed: int | None = FLASHRAG_SEED,
    ) -> None:
        self.max_iter_num = int(max_iter_num)
        self.topk = int(topk)
        self.round_tokens = int(round_tokens)
        self.long_answer_temperature = float(long_answer_temperature)
        self.long_answer_seed = None if long_answer_seed is None else int(long_answer_seed)

    async def _converse(self, ctx: Context, messages: list[dict[str, str]], step: str, **sampling: Any) -> str:
        if ctx.llm.chat_model:
            response = await ctx.llm.chat(messages, step=step, **sampling)
        else:
            response = await ctx.llm.generate(
                "\n\n".join(m["content"] for m in messages if m["content"]), step=step, **sampling
            )
        return response.text

    async def run(self, example: Example, ctx: Context) -> Prediction:
        start = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": example.question},
            {"role": "assistant", "content": ""},
        ]
        act = flashrag_sampling("vllm", max_tokens=self.round_tokens, stop=list(ACTION_STOP), top_p=0.85)
        messages, searches, restarts = list(start), 0, 0
        shown: list[Document] = []
        answer, finished = NO_ANSWER, False
        for round_no in range(1, self.max_iter_num + 1):
            with ctx.group(f"iteration {round_no}"):
                output = await self._converse(ctx, messages, "action", **act)
                move, text = next_move(first_action(output))
                ctx.record_step("read action", inputs={"output": output}, outputs={move: text})
                if move == "finish":
                    answer = await self._short_answer(ctx, example.question, text)
                    finished = True
                    break
                if move == "restart":
                    messages, restarts = list(start), restarts + 1
                    continue
                query = text
                docs = await ctx.required_retriever().search(query, self.topk)
                searches += 1
                shown.extend(docs)
                observation = await ctx.llm.generate(
                    long_answer_prompt(docs, query),
                    step="long answer",
                    **flashrag_sampling(
                        "vllm",
                        max_tokens=self.round_tokens,
                        temperature=self.long_answer_temperature,
                        seed=self.long_answer_seed,
                    ),
                )
                messages[-1] = {"role": "assistant", "content": output}
                messages += [{"role": "observation", "content": observation.text}, {"role": "assistant", "content": ""}]
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=answer,
            docs=shown,
            extras={EXTRAS: {"rounds": round_no, "searches": searches, "restarts": restarts, "finished": finished}},
        )

    async def _short_answer(self, ctx: Context, question: str, reference: str) -> str:
        prompt = SHORT_ANSWER.format(question=question, reference_ans=reference)
        return await self._converse(
            ctx,
            [{"role": "user", "content": prompt}],
            "short answer",
            **flashrag_sampling("vllm", max_tokens=self.round_tokens, stop=list(SHORT_ANSWER_STOP), top_p=0.7),
        )
