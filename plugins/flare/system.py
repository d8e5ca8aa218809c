"""FLARE (Jiang et al., EMNLP 2023; the direct variant, FLARE-direct) as FlashRAG runs it (`FLAREPipeline`,
flashrag/pipeline/active_pipeline.py:691-803, commit 1ee5249; `flare` in examples/methods/run_exp.py:393-408).

Per example, rounds until `max_iter_num` rounds or `max_generation_length` tokens (it does not stop at an answer):
look ahead - generate up to `look_ahead_steps` tokens with FlashRAG's base prompt, no documents, what was kept
so far appended (`previous_gen`), stopping at any of FlashRAG's single-character stop strings; the first
sentence of the stripped output (`re.split(r"(?<=[^A-Z].[.?]) +", ...)[0]`) is judged by its tokens'
probabilities: when one is <= `threshold`, the sentence's tokens with probability > `threshold` form the query
(so words can be glued: "Apollo1 landed on the Moon on July0,9"), the top `topk` passages of that search go
into the prompt, and the sentence is generated again; an empty query counts as confident. The round's sentence
is appended to the kept text with no separator; the round counts the judged sentence's tokens. The
prediction is the kept text, unprocessed (FlashRAG's `pred`); `docs` the last search's passages.

What FLARE needs of the engine: the log-probability of every generated token (`logprobs`): hf, vllm and openai
(chat and completions: `logprobs`/`top_logprobs`) give them; an engine that does not fails the example.
FlashRAG counts a sentence's tokens and decodes the query with the model's tokenizer (`tokenizer.encode` of
the sentence, `tokenizer.decode` of the confident ids, their probabilities taken position by position from
the look-ahead): `tokenizer` names it; by default the run's model's own when it is on disk, otherwise
(an API model, a test engine) the engine's tokens are used: those that cover the sentence, the query the
concatenation of the confident ones.

Departures: FlashRAG runs FLARE only with its HF generator (its vLLM path crashes with return_scores,
generator.py:269-285); here any engine that gives log-probs serves, with the HF generator's stop handling (the
output cut before the stop string and stripped). For a chat model FlashRAG appends the kept text to the
rendered chat template, which a chat request cannot express: it is sent as a final assistant message.
FlashRAG runs FLARE one example at a time; here the scheduler batches the calls of all examples.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, TypedDict

from annotated_types import Ge, Gt, Le

from ragbench.api import ConfigError, Context, Document, Example, Prediction, RecordedExtras, System
from ragbench.api.engines import Engine, Response, local_tokenizer
from ragbench.api.flashrag import FLASHRAG_RAG_TEMPLATE, flashrag_generate, flashrag_searching

from .prompts import SENTENCE_END, STOP


class FlareRound(TypedDict):
    """One round of an example (the prediction's extras["flare"]["rounds"]): whether it searched, and the tokens it
    judged."""

    searched: bool
    tokens: int


class Flare(System):
    """Options (--system-arg), FlashRAG's defaults (FLAREPipeline.__init__, active_pipeline.py:692-700):
    threshold               a token with probability <= threshold makes the sentence uncertain (0.2)
    look_ahead_steps        tokens per look-ahead (64)
    max_generation_length   tokens judged, summed over rounds, before the loop ends (256)
    max_iter_num            rounds at most (5)
    topk                    passages per search (my_config.yaml `retrieval_topk`, 5)
    tokenizer               a tokenizer on disk (a folder, a hub name in the local cache, "embedded") that
                            counts a sentence's tokens and decodes the query as FlashRAG does; default the
                            run's model's when on disk, else the engine's own tokens
    """

    name = "flare"
    declares = flashrag_searching(
        "max_iter_num",
        recorded=RecordedExtras(
            "flare",
            means={
                "mean_rounds": lambda run: len(run["rounds"]),
                "mean_searches": lambda run: sum(x["searched"] for x in run["rounds"]),
            },
        ),
    )

    def __init__(
        self,
        threshold: Annotated[float, Gt(0), Le(1)] = 0.2,
        look_ahead_steps: Annotated[int, Ge(1)] = 64,
        max_generation_length: Annotated[int, Ge(1)] = 256,
        max_iter_num: Annotated[int, Ge(1)] = 5,
        topk: Annotated[int, Ge(1)] = 5,
        tokenizer: str | None = None,
    ) -> None:
        self.threshold, self.look_ahead_steps = float(threshold), int(look_ahead_steps)
        self.max_generation_length, self.max_iter_num, self.topk = (
            int(max_generation_length),
            int(max_iter_num),
            int(topk),
        )
        self.tokenizer = tokenizer
        self._tokenizer: Any = None

    def check_model(self, engine: Engine) -> None:
        self._tokenizer = local_tokenizer(self.tokenizer or engine.model)
        if self._tokenizer is None and self.tokenizer is not None:
            raise ConfigError(
                f"system flare: tokenizer {self.tokenizer!r} cannot be loaded from local files; name a "
                "tokenizer folder (or a model in the local Hugging Face cache), or leave tokenizer unset "
                "to use the engine's tokens"
            )

    async def run(self, example: Example, ctx: Context) -> Prediction:
        question, kept, judged = example.question, "", 0
        docs: list[Document] = []
        rounds: list[FlareRound] = []
        while judged < self.max_generation_length and len(rounds) < self.max_iter_num:
            with ctx.group(f"iteration {len(rounds) + 1}"):
                prompt = FLASHRAG_RAG_TEMPLATE.render(ctx.llm.chat_model, [], previous_gen=kept, question=question)
                sentence, tokens, probabilities = self.first_sentence(await self.look_ahead(ctx, prompt, "look_ahead"))
                query = self.query(tokens, probabilities)
                ctx.record_step(
                    "judge",
                    outputs={
                        "sentence": sentence,
                        "confident": query is None,
                        "query": query,
                        "lowest_probability": min(probabilities, default=None),
                        "probabilities": probabilities,  # of the sentence's tokens, what the judgement read
                    },
                )
                if query is not None:
                    docs = await ctx.required_retriever().search(query, self.topk)
                    prompt = FLASHRAG_RAG_TEMPLATE.render(
                        ctx.llm.chat_model, docs, previous_gen=kept, question=question
                    )
                    sentence = self.first_sentence(await self.look_ahead(ctx, prompt, "generate"))[0]
                kept += sentence
                ctx.record_step("keep", outputs={"sentence": sentence, "kept": kept})
                judged += len(probabilities)
                rounds.append({"searched": query is not None, "tokens": len(probabilities)})
        return Prediction(example.id, answer=kept, docs=docs, extras={"flare": {"rounds": rounds}})

    async def look_ahead(self, ctx: Context, prompt: str | list[dict[str, str]], step: str) -> Response:
        response = await flashrag_generate(
            ctx.llm, prompt, "hf", step=step, max_tokens=self.look_ahead_steps, stop=STOP, logprobs=1
        )
        if response.logprobs is None:
            raise ValueError(
                "the engine gave no token log-probabilities: FLARE needs an engine that gives them (hf, vllm, openai)"
            )
        return response

    def first_sentence(self, response: Response) -> tuple[str, list[Any], list[float]]:
        """The output's first sentence, its tokens and their probabilities, taken position by position from the
        start of the generation (get_next_sentence, :717-732)."""
        sentence = SENTENCE_END.split(response.text.strip())[0]
        tokens = self.sentence_tokens(sentence, response)
        probabilities = [math.exp(token.logprob) for token in response.logprobs or []]
        return sentence, tokens, probabilities[: len(tokens)]

    def sentence_tokens(self, sentence: str, response: Response) -> list[Any]:
        """The sentence's token ids (the tokenizer's), or the engine's tokens that cover it."""
        if self._tokenizer is not None:
            ids: list[Any] = self._tokenizer.encode(sentence, add_special_tokens=False)
            return ids
        covered, tokens = "", []
        for token in response.logprobs or []:
            if len(covered.lstrip()) >= len(sentence):
                break
            covered += token.token
            tokens.append(token.token)
        return tokens

    def query(self, tokens: list[Any], probabilities: list[float]) -> str | None:
        """None when every token is confident; else the confident tokens decoded (judge_sent_confidence,
        :734-749), None too when that is empty."""
        if all(p > self.threshold for p in probabilities):
            return None
        confident = [token for token, p in zip(tokens, probabilities) if p > self.threshold]
        text = self._tokenizer.decode(confident) if self._tokenizer is not None else "".join(confident)
        return text or None
