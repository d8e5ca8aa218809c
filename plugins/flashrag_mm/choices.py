"""GAOKAO-MM's answer parsing (FlashRAG's `gaokaomm_pred_parse`, flashrag/utils/pred_parse.py): the choice letters
a model's output gives, as GAOKAO-MM's metric reads them."""

from __future__ import annotations

import re

LETTERS = re.compile("[A-D]")
MARK = "【答案】"


def gaokao_choices(output: str, question_type: str) -> str:
    """A single choice: the output's last letter A-D. Several: with the whitespace taken out, every letter A-D after
    the first 【答案】 (one at the very start is not looked for), else in the last 10 characters. "" where none."""
    if question_type == "single_choice":
        found = LETTERS.findall(output)
        return found[-1] if found else ""
    content = re.sub(r"\s+", "", output)
    mark = content.find(MARK)
    return "".join(LETTERS.findall(content[mark:] if mark > 0 else content[-10:]))
