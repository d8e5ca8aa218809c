"""A judge's reply read into UMBRELA's relevance grade as umbrela 0.0.7 reads it (`parse_fewshot_response` of
its common_utils): the reply lowercased and stripped, then the patterns below tried in order; the first one found
anywhere decides, with the grade of its LAST occurrence. The last pattern is any digit 0-3, so a reply holding one
always parses; a reply without any reads as grade 0 with `valid` False (umbrela's `result_status` 0)."""

from __future__ import annotations

import re

# umbrela's patterns in umbrela's order, its one repeated pattern once (`[:-=]` is the range ':' to '=', as there).
_PATTERNS = (
    r'"o"\s*[:-=]?\s*(0|1|2|3)',
    r"\'o\'\s*[:-=]?\s*(0|1|2|3)",
    r"o\s*[:-=]?\s*(0|1|2|3)",
    r'"overall_score"\s*[:-=]?\s*(0|1|2|3)',
    r'"overall"\s*[:-=]?\s*(0|1|2|3)',
    r'"overall score"\s*[:-=]?\s*(0|1|2|3)',
    r'"final score"\s*[:-=]?\s*(0|1|2|3)',
    r"final score\s*[:-=]?\s*(0|1|2|3)",
    r"final score is (0|1|2|3)",
    r'"final_score"\s*[:-=]?\s*(0|1|2|3)',
    r'"score"\s*[:-=]?\s*(0|1|2|3)',
    r'"o_score"\s*[:-=]?\s*(0|1|2|3)',
    r"output score is (0|1|2|3)",
    r"score is (0|1|2|3)",
    r"score of\s+(0|1|2|3)",
    r"assign(?:ing)?\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"conclude(?:s|d)?\s+with\s+(?:a\s+)?score of\s+(0|1|2|3)",
    r"give(?:n)?\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"i (?:would )?(?:give|assign)\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"score:\s*(0|1|2|3)",
    r"[a-zA-Z]+\s+is\s+(0|1|2|3)\s",
    r"relevance category\s*[:-=]?\s*(0|1|2|3)",
    r"relevance category is (0|1|2|3)",
    r"it falls into the category (0|1|2|3)",
    r"category\s*(0|1|2|3)",
    r"relevance category (0|1|2|3)",
    r"relevance category for this passage would be (0|1|2|3)",
    r"the relevance category would be (0|1|2|3)",
    r"\n*(0|1|2|3)",
)
PATTERNS = tuple(re.compile(pattern, re.IGNORECASE | re.MULTILINE | re.DOTALL) for pattern in _PATTERNS)


def grade(reply: str) -> tuple[int, bool]:
    """The grade 0-3 umbrela reads in `reply` (as the judge sent it: umbrela lowercases it as it arrives and again
    here, which changes nothing), and whether a pattern was found (False: no digit 0-3, graded 0)."""
    text = reply.lower().strip().lower()
    for pattern in PATTERNS:
        found = pattern.findall(text)
        if found:
            return int(found[-1]), True
    return 0, False
