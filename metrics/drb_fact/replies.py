"""FACT's judge replies read as DeepResearch Bench's scripts read them (214741e): the extracted citations
(utils/extract.py), the de-duplicated statements (utils/deduplicate.py) and the verdicts (utils/validate.py), each
with its quirks; None where the script's reading fails (or where it would stop with a traceback: the metric counts
it instead). `dedup_asked_again` and `verdicts_asked_again` say where the script's reading raises inside its loop
of tries, so that it asks the same request again."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")
FENCES = ("```json", "```")
ESCAPES = (("\\>", ">"), ("\\<", "<"), ("\\+", "+"), ("\\~", "~"))  # clean_escape's repairs, in its order


@dataclass(frozen=True)
class Cited:
    fact: str
    url: str


def unfenced(reply: str) -> str:
    for fence in FENCES:
        reply = reply.replace(fence, "")
    return reply


def remove_urls(text: str) -> str:
    """A markdown link's url left out, its [title] kept (extract.py's remove_urls, applied to each fact)."""
    return LINK.sub(r"[\1]", text)


def strip_text_fragments(article: str) -> str:
    """A markdown link's `#:~:text=` fragment cut off (extract.py's clean_urls, which the script applies to the
    reports of a raw_data file whose path holds "openai": its deep research adds page snippets to its links)."""

    def cut(match: re.Match[str]) -> str:
        url = match.group(2)
        at = url.find("#:~:text=")
        return f"[{match.group(1)}]({url[:at] if at != -1 else url})"

    return LINK.sub(cut, article)


def _parsed(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def extracted(reply: str) -> list[Cited] | None:
    """The report's (fact, url) pairs in the reply's order, each fact without its links' urls; [] where the
    reply holds no citation (an empty list, object or string: the script leaves such a report out of its
    statistics); None where the script's reading fails (an empty reply, no JSON, or items that are not objects
    with a string `fact`), and where an item has no string `url` (the script then stops in its next step)."""
    if reply == "":
        return None
    ok, found = _parsed(_escaped(unfenced(reply)))
    if not ok or isinstance(found, (int, float)) or found is None:
        return None
    if not found:
        return []
    if not isinstance(found, list):
        return None
    cited = []
    for item in found:
        if not isinstance(item, dict) or not isinstance(item.get("fact"), str) or not isinstance(item.get("url"), str):
            return None
        cited.append(Cited(remove_urls(item["fact"]), item["url"]))
    return cited


def _escaped(text: str) -> str:
    for escaped, plain in ESCAPES:
        text = text.replace(escaped, plain)
    return text


def dedup_asked_again(reply: str) -> bool:
    """Whether deduplicate.py asks again: its try holds only `json.loads` of the unfenced reply."""
    return not _parsed(unfenced(reply))[0]


def kept_statements(reply: str, statements: list[str]) -> list[str] | None:
    """The statements the de-duplication keeps: `statements[i - 1]` for each index the reply lists; all of them
    where the script keeps all (an empty list, an index 0, more indices than statements); None where the reply
    is no list of indices into them (the script keeps all after its retries, or stops on an index it cannot use;
    the metric keeps all and counts it)."""
    ok, found = _parsed(unfenced(reply))
    if not ok or not isinstance(found, list) or not all(isinstance(i, int) for i in found):
        return None
    if not found or 0 in found or len(found) > len(statements):
        return list(statements)
    if not all(-len(statements) < i <= len(statements) for i in found):
        return None
    return [statements[i - 1] for i in found]


def _verdict_items(found: Any, statements: int) -> bool:
    """What validate.py's try accepts: a list, each item an object whose `idx` takes `-= 1` (a number), one per
    statement."""
    return (
        isinstance(found, list)
        and len(found) == statements
        and all(isinstance(item, dict) and isinstance(item.get("idx"), (int, float)) for item in found)
    )


def verdicts_asked_again(reply: str, statements: int) -> bool:
    """Whether validate.py asks again: its try raises (no JSON, or not `_verdict_items`)."""
    ok, found = _parsed(unfenced(reply))
    return not ok or not _verdict_items(found, statements)


def verdicts(reply: str, statements: int) -> list[str] | None:
    """Each verdict's `result` as the reply gives them; None where validate.py's reading fails (no JSON list of
    objects with a numeric `idx`, or not one per statement: the script asks again, then records a validation error
    and its statistics pass the page over) or an item has no `result` (its statistics stop there)."""
    ok, found = _parsed(unfenced(reply))
    if not ok or not _verdict_items(found, statements) or not all("result" in item for item in found):
        return None
    return [item["result"] for item in found]
