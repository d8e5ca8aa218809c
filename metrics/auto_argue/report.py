"""A report as `auto_argue` judges it: its sentences (Punkt's), each with the documents it cites ("[n]" markers,
removed from its text), cut at the request's length limit in characters as Auto-ARGUE's users describe the
package's truncation (the tracks' 2,000-character limit, the report cut at a sentence): the sentences kept are the
longest run from the start whose texts, joined by a space, fit the limit; the sentence that crosses it and all
after are left out (how the package counts the joins and the crossing sentence could not be read: ragbench's
choice)."""

from __future__ import annotations

from typing import NamedTuple

from ragbench.api.text import cited_numbers, remove_citations, sent_tokenize


class ArgueSentence(NamedTuple):
    text: str  # without its citation markers, whitespace collapsed
    cited: tuple[int, ...]  # the "[n]" numbers it cites, each once, in order


def report_sentences(answer: str, limit: object) -> tuple[list[ArgueSentence], bool]:
    """The sentences judged of `answer` and whether the limit cut any (`limit`: characters; not an int: none)."""
    found = [
        ArgueSentence(" ".join(remove_citations(text).split()), tuple(dict.fromkeys(cited_numbers(text))))
        for text in sent_tokenize(answer)
        if text.strip()
    ]
    if not isinstance(limit, int) or isinstance(limit, bool):
        return found, False
    length = -1  # no space before the first sentence
    for kept, sentence in enumerate(found):
        length += len(sentence.text) + 1
        if length > limit:
            return found[:kept], True
    return found, False
