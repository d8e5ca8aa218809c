"""A support judge's reply read into its label. The released script keeps the judge's whole text
(`support_output`) and reads no label; the label is what the prompt asks for: the text under the
<support>...</support> tag, one of "Full Support", "Partial Support", "No Support". ragbench reads the last such
tag after the reasoning (after the last "</think>", where the reply has one), case and surrounding space ignored,
and weighs it as Thakur et al. (arXiv 2504.15205) weigh support: full 1.0, partial 0.5, none 0.0. A reply with no
such tag is unparsed: counted, and weighed as no support (it shows the judge found none it could name)."""

from __future__ import annotations

import re

WEIGHTS = {"full support": 1.0, "partial support": 0.5, "no support": 0.0}
TAG = re.compile(r"<support>(.*?)</support>", re.IGNORECASE | re.DOTALL)


def label(reply: str) -> str | None:
    """The label: "full support", "partial support" or "no support"; None where the reply names none of them."""
    answered = reply.rsplit("</think>", 1)[-1]
    found = [" ".join(text.split()).lower().strip(" \"'.") for text in TAG.findall(answered)]
    return next((text for text in reversed(found) if text in WEIGHTS), None)
