"""`majority_vote`: several sampled answers, the most frequent one wins (self-consistency).

A multi-call system: the calls are awaited together with asyncio.gather, so ragbench's
scheduler batches them with the calls of every other example in flight.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter

from ragbench.api import Context, Example, Prediction, System


def vote_key(answer: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", answer.lower()).split())


class MajorityVote(System):
    name = "majority_vote"

    def __init__(
        self,
        votes: int = 3,
        max_tokens: int = 16,
        temperature: float = 0.7,
        top_p: float = 1.0,
        top_n: int = 0,
        chat: bool = False,
    ) -> None:
        if int(votes) < 1:
            raise ValueError("votes must be at least 1")
        self.votes = int(votes)
        self.sampling = {"max_tokens": int(max_tokens), "temperature": float(temperature), "top_p": float(top_p)}
        self.top_n = int(top_n)  # documents shown to the model (0: closed book)
        self.chat = bool(chat)

    async def ask(self, prompt, seed: int, ctx: Context):
        if isinstance(prompt, list) or self.chat:
            messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
            return await ctx.llm.chat(messages, step=f"vote_{seed}", seed=seed, **self.sampling)
        return await ctx.llm.generate(prompt, step=f"vote_{seed}", seed=seed, **self.sampling)

    async def run(self, example: Example, ctx: Context) -> Prediction:
        docs = example.docs[: self.top_n]
        prompt = ctx.task.prompting.build_prompt(example, docs)
        # One call per vote, seeds ctx.seed, ctx.seed + 1, ... (--seed shifts them all).
        responses = await asyncio.gather(*(self.ask(prompt, ctx.seed + i, ctx) for i in range(self.votes)))
        answers = [ctx.task.prompting.postprocess(r.text) for r in responses]
        # Vote on a key that ignores case, punctuation and spacing ("True." == "true");
        # ties go to the answer seen first.
        keys = [vote_key(a) for a in answers]
        winner = Counter(keys).most_common(1)[0][0]
        chosen = keys.index(winner)
        return Prediction(
            example_id=example.id,
            answer=answers[chosen],
            raw_output=responses[chosen].text,
            docs=docs,
            extras={"votes": answers},
        )
