"""RefChecker's claim extraction and joint checking as RAGChecker runs them: the prompts it renders and how
it reads the replies (refchecker/extractor/extractor_base.py `parse_claims` with the triplet format,
refchecker/checker/llm_checker.py `_check` with `is_joint=True`)."""

from __future__ import annotations

import ast
import re
from typing import Any

from .prompts import EXTRACTION_PROMPT, JOINT_CHECKING_PROMPT

Triplet = tuple[str, str, str]

ENTAILMENT, NEUTRAL, CONTRADICTION = "Entailment", "Neutral", "Contradiction"
CLAIMS_START = "###"  # LLMExtractor.extract_claim_triplets: parse_claims(reply, '###')
# _parse_claim_triplets: every mix of double- and single-quoted parts, in upstream's order
_TRIPLET_PATTERNS = [
    re.compile(r"\(" + r", ".join(q + ".*" + q for q in quotes) + r"\)")
    for quotes in (
        ('"', '"', '"'),
        ('"', '"', "'"),
        ('"', "'", '"'),
        ("'", '"', '"'),
        ('"', "'", "'"),
        ("'", '"', "'"),
        ("'", "'", '"'),
        ("'", "'", "'"),
    )
]
_PLACEHOLDER = ("subject", "predicate", "object")
_LABEL = re.compile(r"\b(Entailment|Neutral|Contradiction)\b", re.IGNORECASE)


def extraction_prompt(question: str, text: str) -> str:
    """LLM_TRIPLET_EXTRACTION_PROMPT_Q over the question and the text (a response or a gold answer)."""
    return EXTRACTION_PROMPT.format(q=question, a=text)


def _evaluated(node: ast.AST) -> Any:
    """What upstream's `eval` gives for a match of literals, joined by `and`/`or` or `+` (as in `("a", "b", "c")
    and ("d", "e", "f")`); any other expression raises ValueError, as ast.literal_eval does."""
    if isinstance(node, ast.Expression):
        return _evaluated(node.body)
    if isinstance(node, ast.BoolOp):  # Python's and/or: the first falsy (and) or truthy (or) operand, else the last
        for operand in node.values:
            value = _evaluated(operand)
            if bool(value) is isinstance(node.op, ast.Or):
                return value
        return value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _evaluated(node.left) + _evaluated(node.right)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_evaluated(element) for element in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    return ast.literal_eval(node)


def _literal_parts(match: str) -> list[Any] | None:
    """The match evaluated as upstream's `eval` evaluates it, else split at ", " with the outer parentheses
    dropped. ragbench never runs a reply as code: literals and the `and`, `or` and `+` between them are
    evaluated (_evaluated), any other expression (a call, a name) takes the split, where upstream runs it."""
    try:
        value = _evaluated(ast.parse(match, mode="eval"))
    except Exception:  # upstream's bare except: any failure takes the split
        parts = match.split(", ")
        if parts[0].startswith("("):
            parts[0] = parts[0][1:]
        if parts[-1].endswith(")"):
            parts[-1] = parts[-1][:-1]
        return parts
    return list(value) if isinstance(value, (tuple, list)) else None


def parse_triplets(reply: str) -> list[Triplet]:
    """The claims of an extraction reply: the text after the first "###", every match of each pattern in
    turn that holds three non-empty strings, first occurrence kept, ("subject", "predicate", "object")
    dropped. A reply without one has no claims (upstream then scores the example's metrics 0)."""
    text = reply.strip()
    if CLAIMS_START in text:
        text = text[text.index(CLAIMS_START) + len(CLAIMS_START) :]
    found: list[Triplet] = []
    for pattern in _TRIPLET_PATTERNS:
        for match in pattern.findall(text):
            parts = _literal_parts(match)
            if parts is None or len(parts) != 3 or not all(isinstance(p, str) and p for p in parts):
                continue
            triplet = (parts[0], parts[1], parts[2])
            if triplet not in found and triplet != _PLACEHOLDER:
                found.append(triplet)
    return found


def checking_prompts(question: str, reference: str, claims: list[Triplet], per_prompt: int) -> list[tuple[str, int]]:
    """JOINT_CHECKING_PROMPT_Q for one reference: the claims `per_prompt` at a time, one `("s", "p", "o")`
    line each, the placeholders replaced in upstream's order; with the number of claims each prompt holds."""
    prompts = []
    for start in range(0, len(claims), per_prompt):
        chunk = claims[start : start + per_prompt]
        claims_text = "".join(f'("{s}", "{p}", "{o}")\n' for s, p, o in chunk).strip()
        prompt = (
            JOINT_CHECKING_PROMPT.replace("[QUESTION]", question)
            .replace("[REFERENCE]", reference)
            .replace("[CLAIMS]", claims_text)
        )
        prompts.append((prompt, len(chunk)))
    return prompts


def parse_labels(reply: str, claims: int) -> tuple[list[str], bool]:
    """The labels of a joint-checking reply, one per claim in order: every whole word Entailment, Neutral
    or Contradiction (any case, title-cased), cut to `claims` or padded with Neutral as upstream does;
    and whether it was padded."""
    labels = [label.title() for label in _LABEL.findall(reply)][:claims]
    padded = len(labels) < claims
    return labels + [NEUTRAL] * (claims - len(labels)), padded
