"""A fake BrowseComp-Plus judge that answers from the grader prompt's text alone, so evaluate_run.py (through a
stand-in `vllm` module in the scratch venv that recorded tests/data/browsecomp_plus/parity/) and ragbench's
`browsecomp_plus_judge` (as `scripted:support.browsecomp_plus_fake_judge:reply`) are told the same verdicts.

The verdict is "yes" where the [correct_answer] appears in the [response] (case folded); the confidence is the
response's "Confidence: N%" (none where the response has none). The reply's layout cycles through the ones
evaluate_run.py's parse_judge_response reads (plain, **key:**, **key**:), and a response holding "GARBLE" gets a
reply with no verdict at all (a parse error)."""

from __future__ import annotations

import re
from typing import Any

LAYOUTS = ("{key}: {value}", "**{key}:** {value}", "**{key}**: {value}")


def judge_text(prompt: str) -> str:
    """The judge's reply to one grader prompt (GRADER_TEMPLATE filled in)."""
    response = prompt.split("[response]: ", 1)[1].split("\n\n[correct_answer]: ", 1)[0]
    answer = prompt.split("\n\n[correct_answer]: ", 1)[1].split("\n\nYour judgement", 1)[0]
    if "GARBLE" in response:
        return "I cannot judge this one."
    layout = LAYOUTS[len(response) % len(LAYOUTS)]
    confidence = re.search(r"Confidence: (\d+(?:\.\d+)?)%", response)
    lines = [
        layout.format(key="extracted_final_answer", value=response.split("\n", 1)[0].strip()),
        "",
        layout.format(key="reasoning", value="compared with the correct answer"),
        "",
        layout.format(key="correct", value="yes" if answer.lower() in response.lower() else "no"),
    ]
    if confidence:
        lines += ["", layout.format(key="confidence", value=f"{confidence.group(1)}%")]
    return "\n".join(lines)


def reply(request: Any) -> str:
    """`scripted:support.browsecomp_plus_fake_judge:reply`: the reply to the request's last message."""
    return judge_text(request.messages[-1][1])


def down(request: Any) -> str:
    """A judge that fails on every call (a server gone for the whole run)."""
    raise ConnectionError("the judge's server is down")
