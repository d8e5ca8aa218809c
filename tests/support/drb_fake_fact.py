"""The fake Gemini judge's replies to DeepResearch Bench's FACT prompts (utils/extract.py, deduplicate.py and
validate.py), from the prompt's text alone; drb_fake_gemini.reply hands them FACT's prompts.

- Extraction: every sentence of the report's body holding `[n]` markers gives one (fact, ref_idx, url) per
  marker, the url that of the reference list's line `[n] ... URL`; a sentence holding a markdown link
  `[title](url)` gives one with ref_idx "0" and the fact as written (the script strips the link's url). The list
  is sent in a ```json fence, every ">" written as "\\>" (an escape JSON refuses, which the script's clean_escape
  repairs). A report with markers but no reference list is answered in prose (no JSON); one without markers, [].
- De-duplication: the statements' indices, leaving out a statement whose words (lower case, letters and digits)
  are held in an earlier one's, as a bare list.
- Validation: each statement supported where three fifths of its words (CJK characters one by one, other words of
  four or more letters) are in the reference, else unsupported; all unknown where the reference is a failed scrape
  or says "page not found". A reference whose first line ends with "[draft]" is answered one item short (the
  script's length check fails).
"""

from __future__ import annotations

import json
import re

SENTENCE = re.compile(r"[^\n]+?(?:[。！？]|[.!?](?=\s|$)|$)", re.M)
MARKER = re.compile(r"\[(\d+)\]")
LINK = re.compile(r"\[[^\]]+\]\(([^)]+)\)")
REFERENCE = re.compile(r"^\[(\d+)\].*?(https?://\S+)\s*$")
WORD = re.compile(r"[\u4e00-\u9fff]|[a-z0-9]{4,}")
REPORT_HEADS = ("下面是研究报告的正文：\n", "Here is the main text of the research report:\n")
REPORT_TAILS = ("\n\n下面开始提取，直接输出json列表", "\n\nPlease begin the extraction now.")
DEDUP_HEADS = ("下面是你需要去重的statement列表\n", "Below is the list of statements you need to de-duplicate:\n")
DEDUP_TAILS = ("\n\n下面开始提取，直接输出整数列表", "\n\nPlease begin the extraction now.")


def _cut(text: str, heads: tuple[str, ...], tails: tuple[str, ...]) -> str:
    head = next(h for h in heads if h in text)
    start = text.index(head) + len(head)
    tail = next(t for t in tails if t in text[start:])
    return text[start : text.index(tail, start)]


def _numbered(block: str) -> list[str]:
    return [line.split(". ", 1)[1] for line in block.split("\n") if ". " in line]


def extracted(prompt: str) -> str:
    report = _cut(prompt, REPORT_HEADS, REPORT_TAILS)
    urls = {m.group(1): m.group(2) for line in report.split("\n") if (m := REFERENCE.match(line))}
    body = "\n".join(line for line in report.split("\n") if not REFERENCE.match(line) and not line.startswith("#"))
    triplets = []
    for sentence in (s.strip() for s in SENTENCE.findall(body)):
        for link in LINK.finditer(sentence):
            triplets.append({"fact": sentence, "ref_idx": "0", "url": link.group(1)})
        markers = MARKER.findall(LINK.sub("", sentence))
        if markers and not urls:
            return "The report cites sources but lists none, so no link can be given."
        fact = MARKER.sub("", sentence).strip()
        triplets += [{"fact": fact, "ref_idx": n, "url": urls[n]} for n in markers if n in urls]
    return "```json\n" + json.dumps(triplets, ensure_ascii=False, indent=2).replace(">", "\\>") + "\n```"


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def deduplicated(prompt: str) -> str:
    kept: list[int] = []
    statements = _numbered(_cut(prompt, DEDUP_HEADS, DEDUP_TAILS))
    for index, statement in enumerate(statements, start=1):
        words = " ".join(_words(statement))
        if not any(words in " ".join(_words(statements[k - 1])) for k in kept):
            kept.append(index)
    return json.dumps(kept)


def validated(prompt: str) -> str:
    reference = prompt.split("<reference>\n", 1)[1].split("\n</reference>", 1)[0]
    statements = _numbered(prompt.split("<statements>\n", 1)[1].split("\n</statements>", 1)[0])
    invalid = reference.startswith("scrape failed") or "page not found" in reference.lower()
    verdicts = []
    for index, statement in enumerate(statements, start=1):
        words = _words(statement)
        found = sum(word in reference.lower() for word in words)
        result = "unknown" if invalid else "supported" if found * 5 >= len(words) * 3 else "unsupported"
        verdicts.append({"idx": index, "result": result})
    if reference.split("\n", 1)[0].endswith("[draft]"):
        verdicts = verdicts[:-1]
    return "```json\n" + json.dumps(verdicts, indent=2) + "\n```"


def fact_reply(prompt: str) -> str | None:
    """The reply to a FACT prompt; None for any other prompt."""
    if "(fact, ref_idx, url)" in prompt:
        return extracted(prompt)
    if "<statements>" in prompt:
        return validated(prompt)
    if any(head in prompt for head in DEDUP_HEADS):
        return deduplicated(prompt)
    return None
