"""FreshEval (freshllms/freshqa fresheval_relaxed.ipynb, fresheval_strict.ipynb): a few-shot LLM judge that
credits a response or not, under the relaxed or the strict rules.

The judge is asked as the notebooks' `call_fresheval` asks it: the mode's instructions, its 15
demonstrations and the question, its non-empty answers joined by " | " and the response, in one user
message after a system message and a made-up exchange that give the judge the current date (temperature
0, 256 tokens). The current date is a metric option, by default the date of the FreshQA version the task
ships (the notebooks take the day they run). The verdict is read as `extract_ratings` reads it: the last
word of a line holding "evaluation: " ("correct" or "incorrect"; any other word makes the reply invalid),
else "Thus, the response is (not) credited." anywhere in it. The notebooks ask again until a reply is
valid; here a reply that is not is scored None for that judge and counted (`fresheval_unparsed`). A call
that fails fails the metric on that example (counted with the run's failures).
tests/tasks/freshqa/test_freshqa_fresheval.py pins the prompt and the reading to the notebooks' own code."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Score
from ragbench.api.data import JsonObject

PROMPTS = Path(__file__).parent / "prompts"
VERSION_DATE = "November 24, 2025"  # the FreshQA version freshqa.yaml downloads (FreshQA_v112425)
UNPARSED = "fresheval_unparsed"


def extract_rating(reply: str) -> bool | None:
    """The notebooks' `extract_ratings`: True (credited), False, or None where the reply is invalid."""
    evaluation = None
    for line in reply.split("\n"):
        if "evaluation: " in line:
            evaluation = line.split(" ")[-1]
            if evaluation not in ("correct", "incorrect"):
                return None
    if evaluation is not None:
        return evaluation == "correct"
    if "Thus, the response is credited." in reply:
        return True
    if "Thus, the response is not credited." in reply:
        return False
    return None


class FreshEvalPrompt:
    """One mode's instructions and demonstrations (prompts/fresheval_MODE.json, the notebook's text), and
    the judge's messages for one response."""

    def __init__(self, mode: str, current_date: str) -> None:
        spec = json.loads((PROMPTS / f"fresheval_{mode}.json").read_text(encoding="utf-8"))
        self.current_date = current_date
        dated = [
            {**demo, "response": demo["response"].replace(spec["placeholder"], current_date)}
            for demo in spec["demonstrations"]
        ]
        demos = "".join(
            self.block(d["question"], d["correct_answers"], d["response"])
            + f"{d['comment']}\nevaluation: {d['evaluation']}"
            for d in dated
        )
        self.head: str = spec["prefix"] + "\n\n\n" + demos.strip()

    @staticmethod
    def block(question: str, answers: list[str], response: str) -> str:
        """A question as the notebook's templates lay it out, up to its comment."""
        return f"\n\n\nquestion: {question}\ncorrect answer(s): {' | '.join(answers)}\nresponse: {response}\ncomment: "

    def text(self, question: str, answers: list[str], response: str) -> str:
        return self.head + self.block(question, answers, response)

    def messages(self, question: str, answers: list[str], response: str) -> list[dict[str, str]]:
        """`call_llm_api`'s chat: the system message and the exchange that tell the date, then the prompt."""
        date = self.current_date
        return [
            {
                "role": "system",
                "content": f"You are a helpful assistant. Respond as concisely as possible. Knowledge cutoff: {date}.",
            },
            {"role": "user", "content": "What's today's date?"},
            {"role": "assistant", "content": f"Today is {date} in Pacific Standard Time."},
            {"role": "user", "content": self.text(question, answers, response)},
        ]


class FreshEval(Metric):
    name = "fresheval"
    declares = MetricDeclaration(
        value_range=(0, 1),
        gold_needs=("answers",),
        needs=("judge",),
        counters={
            UNPARSED: "judge replies FreshEval's extract_ratings finds invalid (the notebooks ask again), "
            "scored None for that judge"
        },
    )
    # call_fresheval's
    judge_sampling: ClassVar[Mapping[str, Any]] = MappingProxyType({"temperature": 0.0, "max_tokens": 256})

    def __init__(self, mode: Literal["relaxed", "strict"] = "relaxed", current_date: str = VERSION_DATE) -> None:
        try:
            datetime.datetime.strptime(current_date, "%B %d, %Y")
        except ValueError:
            raise ConfigError(
                f"metric fresheval: current_date {current_date!r} is not a date as the notebooks "
                f"write it (e.g. {VERSION_DATE!r})"
            ) from None
        self.mode, self.current_date = mode, current_date
        self.prompt = FreshEvalPrompt(mode, current_date)

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Score:
        answers = [answer for answer in example.gold["answers"] if answer]
        messages = self.prompt.messages(example.question, answers, prediction.answer)
        replies = await ctx.ask_judges(self, messages, **self.judge_sampling)
        verdicts = [extract_rating(reply.text) for reply in replies]
        count = getattr(ctx, "count", lambda name: None)
        for _ in range(verdicts.count(None)):
            count(UNPARSED)
        credited = [float(verdict) for verdict in verdicts if verdict is not None]
        return sum(credited) / len(credited) if credited else None

    def config(self) -> JsonObject:
        return {
            "name": self.name,
            "mode": self.mode,
            "current_date": self.current_date,
            "judge_sampling": dict(self.judge_sampling),
        }
