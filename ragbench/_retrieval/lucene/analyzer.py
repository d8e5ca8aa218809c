"""Anserini's default English analyzer (`DefaultEnglishAnalyzer.newDefaultInstance()`, what pyserini indexes and
queries with): Lucene's StandardTokenizer, EnglishPossessiveFilter, LowerCaseFilter, StopFilter with Lucene's
English stop words, PorterStemFilter."""

from __future__ import annotations

from functools import lru_cache

from .porter_stemmer import porter_stem
from .tokenizer import standard_tokens

# EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)
APOSTROPHES = ("'", "\u2019", "\uff07")  # what EnglishPossessiveFilter takes for one before a final s
ANALYZER_VERSION = "anserini-default-english/lucene-9.9"  # what an index records: its terms are this analyzer's
# The tokens whose terms are kept (the most recent): a build analyses each distinct token of a chunk once
# (`postings.TermNumbers`), so this keeps the frequent ones from chunk to chunk. 2^18 of them (and as many stems)
# held ~80 MB in every build task and kept them while its Ray worker lived, and saved under a tenth of the analysis
TERMS_CACHED = 1 << 14


def lower_case(token: str) -> str:
    """Java's Character.toLowerCase on each character (LowerCaseFilter): the one-character mapping, so "İ" becomes
    "i" and a final "Σ" "σ", where str.lower() gives "i̇" and "ς"."""
    if token.isascii():
        return token.lower()
    return "".join("i" if char == "\u0130" else char.lower() for char in token)


def strip_possessive(token: str) -> str:
    if len(token) >= 2 and token[-1] in "sS" and token[-2] in APOSTROPHES:
        return token[:-2]
    return token


@lru_cache(maxsize=TERMS_CACHED)
def term(token: str) -> str | None:
    """The indexed term of one StandardTokenizer token, or None for a stop word."""
    word = lower_case(strip_possessive(token))
    return None if word in ENGLISH_STOP_WORDS else porter_stem(word)


def analyze(text: str) -> list[str]:
    """The terms of `text`, in order, as pyserini's Lucene index holds them (and as its searches look them up)."""
    return [word for token in standard_tokens(text) if (word := term(token)) is not None]
