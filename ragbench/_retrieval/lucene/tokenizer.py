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
match; the token types do not change the terms, so they are not kept. Its character classes are `regex`'s Unicode
properties corrected to the tables Lucene's grammar was generated from (Unicode 9.0, emoji 11.0) by
`lucene_unicode9`: the characters added since, which Lucene skips, the pictographs `regex` lacks, and the few
characters whose property changed. ASCII text takes a plain `re` pattern of the same rules, and so does a text
whose other characters all have an ASCII stand-in of their class (`ascii_stand_ins`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from ..._errors import ConfigError
from .unicode9 import (
    FORMAT,
    MID_NUMERIC,
    OTHER_RANGES,
    PICTOGRAPHIC,
    PICTOGRAPHIC_RANGES,
    SOUTH_EAST_ASIAN,
)

MAX_TOKEN_UNITS = 255  # StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH, in UTF-16 code units (Java chars)
SEARCH_SPAN = 2 * MAX_TOKEN_UNITS  # characters the pattern is given at once (`standard_tokens`)


# Stand-ins of Lucene's class for the characters `lucene_unicode9` lists: each is replaced by one that `regex` puts
# in that class before matching (the tokens are cut from the text as given)
OTHER_CHAR = "\x00"  # WB=Other, in no rule
FORMAT_CHAR = "\u00ad"  # SOFT HYPHEN: WB=Format
MID_NUMERIC_CHAR = ","  # WB=MidNum
SOUTH_EAST_ASIAN_CHAR = "\u0e01"  # THAI CHARACTER KO KAI: Line_Break=Complex_Context
PICTOGRAPHIC_CHAR = "\U0001f600"  # GRINNING FACE: Extended_Pictographic, Emoji (no modifier, no modifier base)


@cache
def lucene_classes() -> dict[int, str]:
    """A `str.translate` table giving each character that Lucene's tables class otherwise than `regex` a stand-in
    of Lucene's class."""
    table = {
        point: stand_in
        for ranges, stand_in in (
            (OTHER_RANGES, OTHER_CHAR),
            (PICTOGRAPHIC_RANGES, PICTOGRAPHIC_CHAR),
        )
        for first, last in ranges
        for point in range(max(first, 0x80), last + 1)  # ASCII classes agree; "#" and "*" begin keycaps
    }
    for points, stand_in in (
        (FORMAT, FORMAT_CHAR),
        (MID_NUMERIC, MID_NUMERIC_CHAR),
        (SOUTH_EAST_ASIAN, SOUTH_EAST_ASIAN_CHAR),
        (PICTOGRAPHIC, PICTOGRAPHIC_CHAR),
    ):
        table.update(dict.fromkeys(points, stand_in))
    return table


def token_pattern() -> str:
    """Lucene's token rules over `regex`'s Unicode properties."""

    # WB4: Format, Extend and ZWJ attach to what precedes (the emoji skin-tone modifiers too, in Lucene's tables)
    extend = r"[\p{WB=Format}\p{WB=Extend}\p{WB=ZWJ}]"
    ext = extend + "*"
    ext_sans_presentation = f"[{extend}--[\\uFE0E\\uFE0F]]*"

    def extended(chars: str, tail: str = ext) -> str:
        """A character of class `chars` with the Format/Extend/ZWJ characters that cling to it."""
        return f"(?:{chars}{tail})"

    ahletter = extended(r"[\p{WB=ALetter}\p{WB=Hebrew_Letter}]")
    hebrew = extended(r"[\p{WB=Hebrew_Letter}]")
    numeric = extended(r"[\p{WB=Numeric}[\p{Block=Halfwidth_And_Fullwidth_Forms}&&\p{Nd}]]")
    katakana = extended(r"[\p{WB=Katakana}]")
    mid_letter = extended(r"[\p{WB=MidLetter}\p{WB=MidNumLet}\p{WB=Single_Quote}]")
    mid_numeric = extended(r"[\p{WB=MidNum}\p{WB=MidNumLet}\p{WB=Single_Quote}]")
    extend_num_let = extended(r"[\p{WB=ExtendNumLet}]")
    single_quote = extended(r"[\p{WB=Single_Quote}]")
    double_quote = extended(r"[\p{WB=Double_Quote}]")
    regional = extended(r"[\p{WB=Regional_Indicator}]")

    # Emoji (TR#51 emoji_sequence as Lucene's grammar writes it)
    zwj = r"\p{WB=ZWJ}"
    rkam = r"\p{WB=Regional_Indicator}0-9#*\u00A9\u00AE\u2122\u3030\u303D\p{Emoji_Modifier}"
    emoji_char = extended(f"[\\p{{Extended_Pictographic}}[\\p{{Emoji}}--[{rkam}]]]", ext_sans_presentation)
    modifier_base = extended(r"\p{Emoji_Modifier_Base}", ext_sans_presentation)
    modifier = extended(r"\p{Emoji_Modifier}", ext_sans_presentation)
    element = (
        f"(?:{zwj}*{emoji_char}\\uFE0F?|(?:{zwj}*{modifier_base})?{modifier})"  # character, presentation, modifier
    )
    emoji = (
        f"{element}(?:(?:{zwj}{element})*|[\\U000E0020-\\U000E007E]+\\U000E007F)"
        f"|[0-9#*]{ext_sans_presentation}\\uFE0F?\\u20E3{ext_sans_presentation}"  # keycap
        f"|{regional}{regional}"  # flag
    )

    # Lucene's word rule, `extend_num_let* core (extend_num_let+ core)* extend_num_let*` with
    #   core = katakana (extend_num_let* katakana)*
    #        | (hebrew (single_quote | double_quote hebrew) | numeric ((extend_num_let* | mid_numeric) numeric)*
    #           | ahletter ((extend_num_let* | mid_letter) ahletter)*)+
    # (its number, Hangul and Katakana rules match only what this matches too: they set the token type), written so
    # that a string matches it in one way only: leftmost-longest matching tries every way, and the ways of that form
    # grow with the cube of a word's length. A run of extend_num_let may join any two cores, so it parts groups that
    # hold none: a katakana run, or a run of atoms (a letter, a Hebrew letter or a number with the mid letters or
    # numbers that join it to the next; a quote after a Hebrew letter not so joined is its own and ends the atom).
    letter = extended(r"[\p{WB=ALetter}]")
    mid_letter_not_quote = extended(r"[\p{WB=MidLetter}\p{WB=MidNumLet}]")
    atom = (
        f"{letter}(?:{mid_letter}{ahletter})*"
        f"|{hebrew}(?:{mid_letter_not_quote}{ahletter}(?:{mid_letter}{ahletter})*|{single_quote}|{double_quote}{hebrew})?"
        f"|{numeric}(?:{mid_numeric}{numeric})*"
    )
    group = f"{katakana}+|(?:{atom})+"
    word = f"{extend_num_let}*(?:{group})(?:{extend_num_let}+(?:{group}))*{extend_num_let}*"
    south_east_asian = extended(r"[\p{Line_Break=Complex_Context}]") + "+"
    one_per_character = extended(r"[\p{Script=Han}\p{Script=Hiragana}]")
    return "|".join(f"(?:{rule})" for rule in (emoji, word, south_east_asian, one_per_character))


# The same rules on ASCII text, where only the word rule can match (letters, digits, "_" joining anything, ":" "." "'"
# between letters, "," ";" "." "'" between digits): Python's own `re`, several times faster. Written as runs of
# letters, digits and "_" (one repeat of a character class each, where `re` is fastest) joined by the middle
# characters: a quarter less time than a repeat of one character at a time, the same matches (the two forms were
# compared on every string of up to 7 characters of "a0_:.',; -\"B9", tests/retrieval/test_lucene_postings.py holds it to the
# Unicode pattern on random ASCII text).
ASCII_TOKEN = re.compile(
    r"_*[A-Za-z0-9][A-Za-z0-9_]*(?:(?:(?<=[A-Za-z])[:.'](?=[A-Za-z])|(?<=[0-9])[,;.'](?=[0-9]))[A-Za-z0-9_]+)*"
)


# What may join runs of ASCII letters and digits into one token in `ASCII_TOKEN`: "_", ":" "." "'" between letters,
# "," ";" "." "'" between digits (a character class first: `re` then scans for it without trying a match at every
# character). A text with none of them has for tokens its runs of letters and digits.
JOINER = re.compile(r"[_:.',;](?:(?<=_)|(?<=[A-Za-z][:.'])(?=[A-Za-z])|(?<=[0-9][,;.'])(?=[0-9]))")
ASCII_SEPARATORS = {point: " " for point in range(0x80) if not chr(point).isalnum()}  # to a space: split there


# A character every token holds (the ones it may begin with before it are extend_num_let and ZWJ), or another
# that is not white space: none of the buffers that end before the next one holds a token
ASCII_STARTER = re.compile(r"[A-Za-z0-9]")
STARTER = r"[^\p{WB=ExtendNumLet}\p{WB=ZWJ}\s]"


@cache
def starter_regex() -> Any:
    """`STARTER`, compiled (`token_regex` checks first that the regex package is there)."""
    token_regex()
    import regex

    return regex.compile(STARTER, regex.V1)


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
    return regex.compile(token_pattern(), regex.V1 | regex.POSIX)


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


def standard_tokens(text: str) -> list[str]:
    """The terms Lucene's StandardTokenizer cuts `text` into, in order (unchanged case): `unchecked_tokens` where
    none is longer than the scanner's buffer, else the scanner's."""
    tokens = unchecked_tokens(text)
    if max(map(len, tokens), default=0) <= MAX_TOKEN_UNITS:
        return tokens
    return list(scanned_tokens(text))


def unchecked_tokens(text: str) -> list[str]:
    """`standard_tokens` where no token of this list is longer than MAX_TOKEN_UNITS (the caller checks: a build
    checks each distinct token once, `postings.TermNumbers`).

    An ASCII text is cut by one search of the whole text (`ascii_tokens`: a split where nothing joins runs of
    letters and digits): where no match is longer than the buffer, the buffer and the spans of `scanned_tokens`
    change nothing, and the whole text's search gives the scanner's tokens (tests/retrieval/test_lucene_long_words.py).
    It is the build's hot path: several times fewer CPU seconds a passage than scanning. So is a text whose other
    characters all have an ASCII stand-in of their class (`ascii_stand_ins`: accented and other-script letters,
    curly apostrophes, dashes, quotes...): cut where the ASCII text of its stand-ins is (a passage with one curly
    apostrophe was scanned at over 10x the time); its characters are all in the Basic Multilingual Plane, one
    UTF-16 unit each. Any other text is scanned."""
    if text.isascii():
        return ascii_tokens(text, text, ASCII_SEPARATORS)
    if (classes := text.translate(ascii_stand_ins())).isascii():  # every other character has an ASCII stand-in
        return ascii_tokens(classes, text, stand_in_separators())
    return list(scanned_tokens(text))


def ascii_tokens(classes: str, text: str, separators: dict[int, str]) -> list[str]:
    """The ASCII pattern's matches in `classes` (an ASCII text, or the ASCII stand-ins of `text`'s characters), cut
    from `text`. Where nothing in `classes` joins two runs of letters and digits (`JOINER`), the matches are those
    runs: `text` split where `separators` (a `str.translate` table) puts a space, over twice as fast as the
    pattern's search (the pattern tries to match at every character); else the pattern is searched."""
    if JOINER.search(classes) is None:
        return text.translate(separators).split()
    if classes is text:
        found: list[str] = ASCII_TOKEN.findall(text)
        return found
    return [text[start:end] for start, end in map(re.Match.span, ASCII_TOKEN.finditer(classes))]


# ALetter, MidNumLet, MidLetter, MidNum, ExtendNumLet, and none of the pattern's classes (no digit: ASCII digits are
# named by the pattern's keycap and emoji rules, which a digit of another script would not be)
STAND_INS = "a.:,_ "
STAND_IN_RANGE = range(0x80, 0x3000)  # Latin, Greek, Cyrillic, ..., general punctuation, symbols (BMP: 1 unit each)
PATTERN_LITERALS = "\ufe0e\ufe0f\u20e3\u00a9\u00ae\u2122\u3030\u303d"  # the non-ASCII ones `token_pattern` names


@cache
def ascii_stand_ins() -> dict[int, str]:
    """A `str.translate` table giving each character of `STAND_IN_RANGE` that the token pattern cannot tell from one
    of `STAND_INS` (in every Unicode property the pattern names, as `lucene_classes` corrects them; named by none
    of its literals) that ASCII character: a text of such characters is cut where the ASCII text of their stand-ins
    is, which the ASCII pattern cuts as the pattern does (tests/retrieval/test_lucene_postings.py holds it to the scanner)."""
    import regex

    names = sorted(set(re.findall(r"\\p\{([^}]+)\}", token_pattern())))
    lucenes = lucene_classes()  # what the scanner puts in place of a character before matching
    candidates = "".join(chr(point) for point in STAND_IN_RANGE if chr(point) not in PATTERN_LITERALS)
    classed = "".join(lucenes.get(ord(char), char) for char in candidates)
    members = [set(regex.findall(rf"\p{{{name}}}", classed + STAND_INS, regex.V1)) for name in names]

    def signature(char: str) -> tuple[bool, ...]:
        return tuple(char in member for member in members)

    stand_in = {signature(char): char for char in STAND_INS}
    return {
        ord(char): stand_in[key]
        for char, as_classed in zip(candidates, classed)
        if as_classed not in PATTERN_LITERALS and (key := signature(as_classed)) in stand_in
    }


@cache
def stand_in_separators() -> dict[int, str]:
    """`ASCII_SEPARATORS` and each character whose stand-in (`ascii_stand_ins`) is not a letter, to a space: the
    table that splits a text of stand-ins where its ASCII text of stand-ins splits (no character whose stand-in is a
    letter is white space to `str.split`: tests/retrieval/test_lucene_postings.py)."""
    return ASCII_SEPARATORS | {point: " " for point, stand_in in ascii_stand_ins().items() if not stand_in.isalnum()}


def scanned_tokens(text: str) -> Iterator[str]:
    """`standard_tokens` by Lucene's scanner, for a text of any content.

    At each position the scanner takes the longest match that fits in its buffer (`window_end`), else skips a
    character. Here the pattern is only ever given `SEARCH_SPAN` characters, so that a word of any length costs time
    in proportion to its length (searching the whole rest of a long word again after each 255-unit cut was
    quadratic): a match found to start within a span's first `SEARCH_SPAN - MAX_TOKEN_UNITS` characters has its
    whole buffer inside the span, and where none starts there, no buffer there holds one. A buffer holds a token
    only if it reaches a `STARTER`, so the search begins no further than a buffer before the next one.
    """
    if text.isascii():
        pattern, starter, classes = ASCII_TOKEN, ASCII_STARTER, text
    else:
        pattern, starter, classes = token_regex(), starter_regex(), text.translate(lucene_classes())
    position, length = 0, len(text)
    while (next_starter := starter.search(classes, position)) is not None:
        position = max(position, next_starter.start() - MAX_TOKEN_UNITS + 1)
        limit = min(length, position + SEARCH_SPAN)
        found = pattern.search(classes, position, limit)
        if found is None or (limit < length and found.start() > limit - MAX_TOKEN_UNITS):
            if limit == length:
                return
            position = limit - MAX_TOKEN_UNITS + 1  # the first position whose buffer may reach past the span
            continue
        start, end = found.span()
        if end - start > MAX_TOKEN_UNITS // 2 and utf16_units(text[start:end]) > MAX_TOKEN_UNITS:
            cut = pattern.match(classes, start, window_end(text, start))
            if cut is None:  # no token fits in the buffer from here: the scanner skips a character
                position = start + 1
                continue
            end = cut.end()
        yield text[start:end]
        position = end
