"""Self-RAG's reflection tokens, prompt strings and text clean-up, byte-exact.

Reproduces AkariAsai/self-rag retrieval_lm/utils.py (token lists, PROMPT_DICT["prompt_no_input"],
postprocess, fix_spacing), run_short_form.py (postprocess_answer_option_conditioned, the evidence
prompt) and run_long_form_static.py (the ASQA citation assembly in main()); MIT licence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragbench.api.text import TEMPLATES

RETRIEVAL_TOKENS = ("[No Retrieval]", "[Retrieval]", "[Continue to Use Evidence]")
RELEVANCE_TOKENS = ("[Irrelevant]", "[Relevant]")
GROUNDING_TOKENS = ("[Fully supported]", "[Partially supported]", "[No support / Contradictory]")
UTILITY_TOKENS = tuple(f"[Utility:{i}]" for i in range(1, 6))
UTILITY_WEIGHTS = (-1.0, -0.5, 0.0, 0.5, 1.0)
REFLECTION_TOKENS = RETRIEVAL_TOKENS + RELEVANCE_TOKENS + GROUNDING_TOKENS + UTILITY_TOKENS

# finetune.py's added special tokens, in its order (with a pad token: the 32,016-entry vocabulary)
ADDED_TOKENS = RETRIEVAL_TOKENS + RELEVANCE_TOKENS + ("<paragraph>", "</paragraph>") + UTILITY_TOKENS + GROUNDING_TOKENS

# utils.control_tokens: every reflection token except "[Continue to Use Evidence]", plus the paragraph tags
CONTROL_TOKENS = (
    GROUNDING_TOKENS
    + ("[No Retrieval]", "[Retrieval]")
    + RELEVANCE_TOKENS
    + ("<paragraph>", "</paragraph>")
    + UTILITY_TOKENS
)

PROMPT = TEMPLATES["alpaca"][0]  # PROMPT_DICT["prompt_no_input"]
NO_RETRIEVAL = "[No Retrieval]"


def evidence_prompt(prompt: str, title: str, text: str) -> str:
    """The prompt continued with one passage (both scripts build this same string)."""
    return prompt + "[Retrieval]<paragraph>" + title + "\n" + text + "</paragraph>"


def clean_short_answer(answer: str) -> str:
    """run_short_form.py postprocess_answer_option_conditioned: drop control tokens, "</s>", every
    newline (not replaced by a space) and "<|endoftext|>"."""
    for token in CONTROL_TOKENS:
        answer = answer.replace(token, "")
    return answer.replace("</s>", "").replace("\n", "").replace("<|endoftext|>", "")


def clean_segment(pred: str) -> str:
    """utils.postprocess: drop control tokens and "</s>" and one leading space; keeps
    "[Continue to Use Evidence]"."""
    for token in CONTROL_TOKENS:
        pred = pred.replace(token, "")
    pred = pred.replace("</s>", "")
    return pred[1:] if pred.startswith(" ") else pred


def fix_spacing(text: str) -> str:
    """utils.fix_spacing: a space after . ! ? glued to a following word character."""
    return re.sub(r"(?<=\w)([.!?])(?=\w)", r"\1 ", text)


def cite_segments(segments: Sequence[str], docs: Sequence[object], numbering: str = "path") -> tuple[str, list[Any]]:
    """run_long_form_static.py main() for ASQA: cleaned segments, each ending in " [i]. ", and the
    passages of the kept segments. numbering="path" (upstream) numbers a segment by its position
    on the path (0 = the empty root), so after a skipped empty or duplicate segment the numbers
    point past the kept passages; "kept" numbers the kept segments 1, 2, ... (a fix)."""
    output, kept_docs, seen = "", [], []
    for index, (segment, doc) in enumerate(zip(segments, docs)):
        if not segment:
            continue
        cleaned = clean_segment(segment)
        if cleaned in seen:
            continue
        seen.append(cleaned)
        kept_docs.append(doc)
        number = index if numbering == "path" else len(kept_docs)
        output += cleaned[:-1] + f" [{number}]. "
    if output.endswith(" "):
        output = output[:-1]
    output = fix_spacing(output)
    output = output.replace(".[Continue to Use Evidence]", " [1]. ").replace(". [1] ", " [1]. ")
    return output, kept_docs
