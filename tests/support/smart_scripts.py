"""Scripted models for the smart system's tests: each answers as a SMART-format model would at the
end of the prompt it is given (written for ragbench)."""

from __future__ import annotations


def _text(request) -> str:
    return request.prompt if request.prompt is not None else request.messages[-1][1]


def trajectory(request) -> str:
    """A SMART-format model: two intents, passage 1 relevant and passage 2 not, an answer citing [1]
    (and an out-of-range [9]); the end tokens are generated and cut by the stop strings."""
    prompt = _text(request)
    if prompt.endswith("<|Reconstructor|>:\n"):
        return "Search(first intent; second intent)</eor> never seen"
    if prompt.endswith(("<|Locator|>:\n", "<|Locator|>\n")):
        return (
            "[Relevant]: [1] Title one\n A located fact.\n[Irrelevant]: [2] Lacking Supporting Facts</eol> never seen"
        )
    if prompt.endswith("<|Generator|>:\n"):
        return "True\n[Cite]: [1] [9]</eog> never seen"
    raise AssertionError(f"unexpected prompt end: {prompt[-60:]!r}")


def nothing_relevant(request) -> str:
    prompt = _text(request)
    if prompt.endswith("<|Locator|>:\n"):
        return "[Irrelevant]: [1] Lacking Supporting Facts\n[Irrelevant]: [2] Lacking Supporting Facts</eol>"
    return trajectory(request)


def untrained(request) -> str:
    """A model never trained on SMART's format: code where the Reconstructor's Search(...) belongs."""
    if _text(request).endswith("<|Reconstructor|>:\n"):
        return "```\ndef capitalOfFrance():"
    return trajectory(request)


def prompted(request) -> str:
    """An instruct model under the prompted mode's prompts."""
    prompt = _text(request)
    if prompt.endswith("Search Intent:"):
        return "Search Intent: lemon water diabetes; diabetes cure\nExplanation: not parsed"
    if prompt.endswith("Rating:"):
        if "Type 2 diabetes is a long-term" in prompt.rsplit("###", 1)[-1]:
            return (
                " [Relevant]\n\nExtracted span: No single food or drink has been shown to reverse the condition.\n\n###"
            )
        return " [Irrelevant]\n\nExtracted span: None."
    return "false"
