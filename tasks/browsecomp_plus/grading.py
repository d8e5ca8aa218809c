"""How scripts_evaluation/evaluate_run.py (texttron/BrowseComp-Plus) grades a run: its grader prompt
(grader_template.txt, GRADER_TEMPLATE as the script has it), its reading of the judge's reply
(`parse_judge_response`: bold layouts first, then plain; a confidence over 100 read as 100; no
"correct: yes|no" is a parse error) and hendrycks' `calib_err` (outlier-exposure utils/calibration_tools.py)
in bins of 100, as the script calls it.

`calib_err` keeps hendrycks' quirks, since the leaderboard's numbers carry them: the last bin (which takes
the remainder) is never added, so fewer than 200 confidences give 0, and the script reports 0 under 100.
Unlike the script (numpy's unstable argsort over files in directory order), ties in confidence keep the
examples' order, so the value does not depend on the file system.
tests/tasks/browsecomp_plus/test_browsecomp_plus_grading.py pins all of it to the script's own output.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

GRADER_TEMPLATE = (Path(__file__).parent / "grader_template.txt").read_text(encoding="utf-8").strip()
CALIBRATION_BIN = 100  # calculate_calibration_error's beta

_FLAGS = re.IGNORECASE | re.DOTALL
_ANSWER = tuple(
    re.compile(p + r"\s*(.*?)(?=\n|$)", _FLAGS)
    for p in (r"\*\*extracted_final_answer:\*\*", r"\*\*extracted_final_answer\*\*:", r"extracted_final_answer:")
)
_ENDS = r"(?=\n\*\*correct:\*\*|\n\*\*correct\*\*:|\ncorrect:|$)"
_REASONING = (
    re.compile(r"\*\*reasoning:\*\*\s*(.*?)" + _ENDS, _FLAGS),
    re.compile(r"\*\*reasoning\*\*:\s*(.*?)" + _ENDS, _FLAGS),
    re.compile(r"reasoning:\s*(.*?)(?=\ncorrect:|$)", _FLAGS),
)
_CORRECT = tuple(
    re.compile(p + r"\s*(yes|no)", re.IGNORECASE) for p in (r"\*\*correct:\*\*", r"\*\*correct\*\*:", r"correct:")
)
_CONFIDENCE = tuple(
    re.compile(p + r"\s*(\d+(?:\.\d+)?)\s*%?", re.IGNORECASE)
    for p in (r"\*\*confidence:\*\*", r"\*\*confidence\*\*:", r"confidence:")
)


@dataclass(frozen=True)
class Judgement:
    """One reply read as parse_judge_response reads it; `parse_error` where it holds no yes/no verdict."""

    extracted_final_answer: str | None
    reasoning: str | None
    correct: bool | None
    confidence: float | None

    @property
    def parse_error(self) -> bool:
        return self.correct is None


def grader_prompt(question: str, response: str, correct_answer: str) -> str:
    """create_judge_prompt: the one user message the judge is sent."""
    return GRADER_TEMPLATE.format(question=question, response=response, correct_answer=correct_answer)


def _first(patterns: tuple[re.Pattern[str], ...], text: str) -> re.Match[str] | None:
    return next((match for pattern in patterns if (match := pattern.search(text))), None)


def parse_judgement(reply: str) -> Judgement:
    """parse_judge_response over the judge's text (an empty reply is a parse error)."""
    if not reply:
        return Judgement(None, None, None, None)
    answer, reasoning = _first(_ANSWER, reply), _first(_REASONING, reply)
    correct, confidence = _first(_CORRECT, reply), _first(_CONFIDENCE, reply)
    return Judgement(
        answer.group(1).strip() if answer else None,
        reasoning.group(1).strip() if reasoning else None,
        correct.group(1).lower() == "yes" if correct else None,
        min(float(confidence.group(1)), 100.0) if confidence else None,
    )


def calibration_error(confidences: list[float], correct: list[bool], beta: int = CALIBRATION_BIN) -> float:
    """calculate_calibration_error (in percent) as the script reports it: 0 under `beta` confidences, else
    hendrycks' RMS calib_err over bins of `beta` sorted by confidence (its last bin left out)."""
    if len(confidences) != len(correct):
        raise ValueError("one correctness per confidence")
    if len(confidences) < beta:
        return 0.0
    order = sorted(range(len(confidences)), key=lambda i: confidences[i])  # stable: ties keep example order
    conf = [confidences[i] / 100.0 for i in order]
    right = [float(correct[i]) for i in order]
    total = len(conf)
    squared = 0.0
    for start in range(0, beta * (total // beta - 1), beta):  # every bin but the last
        bin_conf, bin_right = conf[start : start + beta], right[start : start + beta]
        squared += len(bin_conf) / total * (sum(bin_conf) / len(bin_conf) - sum(bin_right) / len(bin_right)) ** 2
    return math.sqrt(squared) * 100
