"""MIRAGE's accuracy (Teddy-XiongGZ/MIRAGE src/evaluate.py with src/utils.py `locate_answer`), per example,
reproduced exactly; tests/tasks/mirage/test_mirage_metrics.py pins it to values from running those files.

evaluate.py takes the text after the last `"answer_choice": "` of the output (all of it when there is
none), stripped, and `locate_answer` finds the option in it by the first of its patterns that matches:
a lone letter; a letter before " or", " and", "/" or ","; "option X"; ": X" anywhere; a letter before ".",
'"' or ":". Only A-D are found. When nothing matches, `locate_answer` answers "A": such outputs are scored
as the choice A, as upstream scores them, and counted (`mirage_no_option_found`) so that a reader sees how
many. The mean over a set is evaluate.py's "mean acc". `locate=pmc_llama` reads as evaluate.py does for
PMC-LLaMA (`locate_answer4pub_llama`: the text after the last "Answer:", then "option X", "OPTION X", a
letter before '"' or ":")."""

from __future__ import annotations

import re
from typing import Literal

from ragbench.api import Example, Metric, MetricDeclaration, Prediction, Score, ScoringContext
from ragbench.api.data import JsonObject

ANSWER_CHOICE = '"answer_choice": "'
PMC_LLAMA_ANSWER = "Answer:"
DEFAULT_CHOICE = "A"  # what both readers answer when no pattern matches


def _patterns(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern) for pattern in patterns)


# each reader's patterns in its order (each a re.findall whose first match is taken)
LOCATE_PATTERNS = {
    "standard": _patterns(
        r"^\s*(A|B|C|D)$",
        r"^\s*(A|B|C|D) or",
        r"^\s*(A|B|C|D) and",
        r"^\s*(A|B|C|D)/",
        r"^\s*(A|B|C|D),",
        r"[Oo]ption (A|B|C|D)",
        r":\s*(A|B|C|D)",
        r"^\s*(A|B|C|D)\.",
        r"^\s*(A|B|C|D)\"",
        r"^\s*(A|B|C|D):",
    ),
    "pmc_llama": _patterns(r"[Oo]ption (A|B|C|D)", r"OPTION (A|B|C|D)", r"^\s*(A|B|C|D)\"", r"^\s*(A|B|C|D):"),
}
NOT_FOUND = "mirage_no_option_found"


def located_choice(output: str, locate: str = "standard") -> str | None:
    """The option evaluate.py reads in a model's output with the reader `locate`, or None where it finds
    none (and answers "A")."""
    sentence = output.split(ANSWER_CHOICE)[-1].strip()
    if locate == "pmc_llama":
        sentence = sentence.split(PMC_LLAMA_ANSWER)[-1]
    for pattern in LOCATE_PATTERNS[locate]:
        found: list[str] = pattern.findall(sentence)
        if found:
            return found[0]
    return None


class MirageAccuracy(Metric):
    name = "mirage_accuracy"
    declares = MetricDeclaration(
        value_range=(0, 1),
        gold_needs=("choices",),
        counters={
            NOT_FOUND: "outputs in which evaluate.py's locate_answer finds no option A-D, scored as the "
            "choice A as upstream scores them"
        },
    )

    def __init__(self, locate: Literal["standard", "pmc_llama"] = "standard") -> None:
        self.locate = locate

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        choice = located_choice(prediction.answer, self.locate)
        if choice is None:
            getattr(ctx, "count", lambda name: None)(NOT_FOUND)
            choice = DEFAULT_CHOICE
        return float(choice == example.gold["answer_key"])

    def config(self) -> JsonObject:
        return {"name": self.name, "locate": self.locate}
