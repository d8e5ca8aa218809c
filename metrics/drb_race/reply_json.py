"""The JSON of a RACE judge reply, found as DeepResearch Bench's utils/json_extractor.py finds it (214741e): the
whole reply; a ```json fence (by position, then by pattern); the first balanced {...}; the first "{" to the last
"}"; else, where the reply names comprehensiveness and both scores, the criteria and scores picked out of each
dimension's stretch of text. Each candidate must parse as JSON; None where none does."""

from __future__ import annotations

import json
import re

DIMENSIONS = ("comprehensiveness", "insight", "instruction_following", "readability")
FENCE = re.compile(r"```json\s*([\s\S]*?)\s*```")
CRITERION = re.compile(r'"criterion"\s*:\s*"([^"]+)"')
SCORES = {n: re.compile(rf'"article_{n}_score"\s*:\s*(\d+\.?\d*)') for n in (1, 2)}


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _balanced(text: str) -> str | None:
    """The text from the first "{" to the brace that closes it, where that parses."""
    start = text.find("{")
    if start == -1:
        return None
    level = 0
    for offset, char in enumerate(text[start:]):
        level += (char == "{") - (char == "}")
        if char == "}" and level == 0:
            candidate = text[start : start + offset + 1]
            return candidate if _parses(candidate) else None
    return None


def _dimension_start(text: str, dim: str, after: int) -> int:
    for form in (f'"{dim}"', f"'{dim}'"):
        found = text.find(form, after)
        if found != -1:
            return found
    return -1


def _picked_scores(text: str) -> str | None:
    """The last resort: each dimension's criteria and scores read by pattern from its stretch of the reply."""
    result: dict[str, list[dict[str, object]]] = {}
    for dim in (d for d in DIMENSIONS if d in text):
        result[dim] = []
        start = _dimension_start(text, dim, 0)
        if start == -1:
            start = text.find(dim)
        end = len(text)
        for other in (d for d in DIMENSIONS if d != dim):
            found = _dimension_start(text, other, start)
            if found == -1:
                found = text.find(other, start + len(dim))
            if found != -1 and found < end:
                end = found
        stretch = text[start:end]
        names = [m.group(1) for m in CRITERION.finditer(stretch)]
        first, second = ([float(m.group(1)) for m in SCORES[n].finditer(stretch)] for n in (1, 2))
        result[dim] = [
            {"criterion": name, "article_1_score": one, "article_2_score": two}
            for name, one, two in zip(names, first, second)
        ]
    return json.dumps(result) if any(result.values()) else None


def reply_json(text: str) -> str | None:
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}") and _parses(stripped):
        return stripped
    if "```json" in text and "```" in text[text.find("```json") + 7 :]:
        start = text.find("```json") + 7
        end = text.find("```", start)
        if end > start and _parses(text[start:end].strip()):
            return text[start:end].strip()
    fenced = FENCE.search(text)
    if fenced and _parses(fenced.group(1).strip()):
        return fenced.group(1).strip()
    if _parses(stripped):
        return stripped
    balanced = _balanced(text)
    if balanced is not None:
        return balanced
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end != -1 and end > start and _parses(text[start : end + 1]):
        return text[start : end + 1]
    if "comprehensiveness" in text and "article_1_score" in text and "article_2_score" in text:
        return _picked_scores(text)
    return None
