"""Lucene's StandardTokenizer (Lucene 9.9, the one pyserini 1.x's Anserini jar carries), without Java.

Lucene's tokenizer is a JFlex scanner over UAX#29 word-break rules with Lucene's tailoring. At each position it
takes the longest match of any of its token rules (and skips one character where none matches):

- emoji sequences (TR#51 emoji, presentation, modifier, keycap, flag, tag and ZWJ sequences);
- numbers: Numeric characters joined by MidNum/MidNumLet/Single_Quote ("3.14", "1,000"), ExtendNumLet ("_");
- words: ALetter/Hebrew_Letter/Numeric/Katakana runs joined by MidLetter/MidNumLet/Single_Quote ("example.com",
  "fox's") and ExtendNumLet, with UAX#29's Hebrew quote rules;
- runs of Hangul, of Katakana, and of South East Asian scripts (Line_Break=Complex_Context: Thai, Lao, Khmer,
  Myanmar), each one token;
- one token per Han ideograph and per Hiragana character.

Format, Extend and ZWJ characters cling to the character before them (WB4). A token is at most 255 UTF-16 code
units: a longer one is cut there (the scanner's buffer) and the rest scanned anew.

Here the same rules are one `regex` pattern matched leftmost-longest (its POSIX flag), which is JFlex's longest
match; the token types do not change the terms, so they are not kept. The character classes are `regex`'s, from
its Unicode version, where Lucene's grammar was generated from Unicode 9.0 (emoji data 11.0): characters
assigned after 9.0 (Lucene skips them as unassigned) and the few whose word-break property changed since (the
emoji skin-tone modifiers, Extend since Unicode 11, are kept out of Extend here as in 9.0) are where this
tokenizer and Lucene's can differ.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from .._errors import ConfigError

MAX_TOKEN_UNITS = 255  # StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH, in UTF-16 code units (Java chars)

# WB4: Format, Extend and ZWJ attach to what precedes (the emoji skin-tone modifiers too, in Lucene's tables)
_EXTEND = r"[\p{WB=Format}\p{WB=Extend}\p{WB=ZWJ}]"
_EXT = _EXTEND + "*"
_EXT_SANS_PRESENTATION = r"[" + _EXTEND + r"--[\uFE0E\uFE0F]]*"


def extended(chars: str, tail: str = _EXT) -> str:
    """A character of class `chars` with the Format/Extend/ZWJ characters that cling to it."""
    return f"(?:{chars}{tail})"


_AHLETTER = extended(r"[\p{WB=ALetter}\p{WB=Hebrew_Letter}]")
_HEBREW = extended(r"\p{WB=Hebrew_Letter}")
_NUMERIC = extended(r"[\p{WB=Numeric}[\p{Block=Halfwidth_And_Fullwidth_Forms}&&\p{Nd}]]")
_KATAKANA = extended(r"\p{WB=Katakana}")
_MID_LETTER = extended(r"[\p{WB=MidLetter}\p{WB=MidNumLet}\p{WB=Single_Quote}]")
_MID_NUMERIC = extended(r"[\p{WB=MidNum}\p{WB=MidNumLet}\p{WB=Single_Quote}]")
_EXTEND_NUM_LET = extended(r"\p{WB=ExtendNumLet}")
_SINGLE_QUOTE = extended(r"\p{WB=Single_Quote}")
_DOUBLE_QUOTE = extended(r"\p{WB=Double_Quote}")
_REGIONAL = extended(r"\p{WB=Regional_Indicator}")

# Emoji (TR#51 emoji_sequence as Lucene's grammar writes it)
_ZWJ = r"\p{WB=ZWJ}"
_EMOJI_RKAM = r"[\p{WB=Regional_Indicator}0-9#*\u00A9\u00AE\u2122\u3030\u303D\p{Emoji_Modifier}]"
_EMOJI_CHAR = extended(r"[\p{Extended_Pictographic}[\p{Emoji}--" + _EMOJI_RKAM + r"]]", _EXT_SANS_PRESENTATION)
_MODIFIER_BASE = extended(r"\p{Emoji_Modifier_Base}", _EXT_SANS_PRESENTATION)
_MODIFIER = extended(r"\p{Emoji_Modifier}", _EXT_SANS_PRESENTATION)
_EMOJI_ELEMENT = (
    f"(?:{_ZWJ}*{_EMOJI_CHAR}\\uFE0F?|(?:{_ZWJ}*{_MODIFIER_BASE})?{_MODIFIER})"  # character, presentation, modifier
)
_EMOJI = (
    f"{_EMOJI_ELEMENT}(?:(?:{_ZWJ}{_EMOJI_ELEMENT})*|[\\U000E0020-\\U000E007E]+\\U000E007F)"
    f"|[0-9#*]{_EXT_SANS_PRESENTATION}\\uFE0F?\\u20E3{_EXT_SANS_PRESENTATION}"  # keycap
    f"|{_REGIONAL}{_REGIONAL}"  # flag
)

# Lucene's number, Hangul and Katakana rules match only what its word rule matches too (they set the token type)
_NUMBER_RUN = f"{_NUMERIC}(?:(?:{_EXTEND_NUM_LET}*|{_MID_NUMERIC}){_NUMERIC})*"
_WORD_CORE = (
    f"(?:{_KATAKANA}(?:{_EXTEND_NUM_LET}*{_KATAKANA})*"
    f"|(?:{_HEBREW}(?:{_SINGLE_QUOTE}|{_DOUBLE_QUOTE}{_HEBREW})"
    f"|{_NUMBER_RUN}"
    f"|{_AHLETTER}(?:(?:{_EXTEND_NUM_LET}*|{_MID_LETTER}){_AHLETTER})*)+)"
)
_WORD = f"{_EXTEND_NUM_LET}*{_WORD_CORE}(?:{_EXTEND_NUM_LET}+{_WORD_CORE})*{_EXTEND_NUM_LET}*"
_SOUTH_EAST_ASIAN = extended(r"\p{Line_Break=Complex_Context}") + "+"
_ONE_PER_CHARACTER = extended(r"[\p{Script=Han}\p{Script=Hiragana}]")

TOKEN_PATTERN = "|".join(f"(?:{rule})" for rule in (_EMOJI, _WORD, _SOUTH_EAST_ASIAN, _ONE_PER_CHARACTER))


# The same rules on ASCII text, where only the word rule can match (letters, digits, "_" joining anything, ":" "." "'"
# between letters, "," ";" "." "'" between digits): Python's own `re`, several times faster.
ASCII_TOKEN = re.compile(r"_*[A-Za-z0-9](?:_*[A-Za-z0-9]|(?<=[A-Za-z])[:.'](?=[A-Za-z])|(?<=[0-9])[,;.'](?=[0-9]))*_*")


@cache
def token_regex() -> Any:
    """The compiled token pattern, leftmost-longest (POSIX) as JFlex matches."""
    try:
        import regex
    except ImportError as exc:
        raise ConfigError(
            "the lucene_bm25 retriever needs the regex package (Unicode word-break properties): "
            "pip install 'ragbench[retrieval]'"
        ) from exc
    return regex.compile(TOKEN_PATTERN, regex.V1 | regex.POSIX)


def utf16_units(text: str) -> int:
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def window_end(text: str, start: int) -> int:
    """The end of the longest run from `start` that fits in the scanner's buffer of 255 UTF-16 code units."""
    units, end = 0, start
    while end < len(text):
        units += 2 if ord(text[end]) > 0xFFFF else 1
        if units > MAX_TOKEN_UNITS:
            break
        end += 1
    return end


def standard_tokens(text: str) -> Iterator[str]:
    """The terms Lucene's StandardTokenizer cuts `text` into, in order (unchanged case)."""
    pattern = ASCII_TOKEN if text.isascii() else token_regex()
    position = 0
    while (found := pattern.search(text, position)) is not None:
        start, end = found.span()
        if end - start > MAX_TOKEN_UNITS // 2 and utf16_units(text[start:end]) > MAX_TOKEN_UNITS:
            cut = pattern.match(text, start, window_end(text, start))
            if cut is None:  # no token fits in the buffer from here: the scanner skips a character
                position = start + 1
                continue
            end = cut.end()
        yield text[start:end]
        position = end
