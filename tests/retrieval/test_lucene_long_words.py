"""lucene_bm25's tokenizer on long words: the tokens of the former search (the whole rest of the text searched again
after each 255-unit cut, quadratic in a word's length) for words of any content, Lucene's word rule as its grammar
is written, work in proportion to a word's length (counted, not timed), and a 1 MB base64 blob in a passage at
`ragbench index build` and a 1,000,000-character query word end to end."""

from __future__ import annotations

import base64
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_jsonl
from ragbench._retrieval.lucene import tokenizer as lucene_tokenizer
from ragbench._retrieval.lucene.analyzer import analyze
from ragbench._retrieval.lucene.retriever import LuceneBM25Retriever
from ragbench._retrieval.lucene.tokenizer import (
    ASCII_TOKEN,
    MAX_TOKEN_UNITS,
    lucene_classes,
    scanned_tokens,
    standard_tokens,
    token_regex,
    utf16_units,
    window_end,
)
from support.helpers import cli_here

regex = pytest.importorskip("regex")


def searched_to_the_end(text: str) -> list[str]:
    """The tokenizer as it was: each search given the whole rest of the text."""
    if text.isascii():
        pattern, classes = ASCII_TOKEN, text
    else:
        pattern, classes = token_regex(), text.translate(lucene_classes())
    tokens, position = [], 0
    while (found := pattern.search(classes, position)) is not None:
        start, end = found.span()
        if utf16_units(text[start:end]) > MAX_TOKEN_UNITS:
            cut = pattern.match(classes, start, window_end(text, start))
            if cut is None:
                position = start + 1
                continue
            end = cut.end()
        tokens.append(text[start:end])
        position = end
    return tokens


BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
PIECES = [
    *BASE64[::7],
    *"+/=-_.,:'\" ",
    "é",
    "\u05d0",  # Hebrew letter
    "\u30a2",  # katakana
    "\u4e2d",  # Han
    "\u0e01\u0e31",  # Thai letter and mark
    "\U00010400",  # Deseret letter (astral: 2 UTF-16 units)
    "\U0001d7ce",  # mathematical digit (astral)
    "\U0001f600",  # emoji
    "\u200d",  # ZWJ
    "\u0301",  # combining mark
    "\u00ad",  # soft hyphen (Format)
    "#\u20e3",  # keycap
    "\U0001f1e6",  # regional indicator
]
# words of many hundreds of characters: a few pieces, each repeated
LONG_TEXT = st.lists(
    st.tuples(st.one_of(st.sampled_from(PIECES), st.characters(codec="utf-8")), st.integers(1, 400)),
    min_size=1,
    max_size=6,
).map(lambda runs: "".join(piece * times for piece, times in runs))


@settings(max_examples=120, deadline=None)
@given(LONG_TEXT)
def test_long_words_of_any_content_get_the_tokens_of_the_whole_text_search(text):
    assert list(standard_tokens(text)) == searched_to_the_end(text)


@settings(max_examples=60, deadline=None)
@given(st.text(BASE64 + "+/=-_", min_size=300, max_size=1500))
def test_base64_blobs_get_the_tokens_of_the_whole_text_search(blob):
    assert list(standard_tokens(blob)) == searched_to_the_end(blob)
    assert list(standard_tokens(blob + "é")) == searched_to_the_end(blob + "é")  # the Unicode pattern too


ASCII_PIECES = ["a", "Z", "7", "_", ":", ".", "'", ",", ";", " ", "\n", "-", "(", "$"]
# ASCII texts of words short and long (a run of one piece up to past the 255-unit buffer), as most passages are
ASCII_TEXT = st.lists(
    st.one_of(
        st.text(st.sampled_from(ASCII_PIECES), max_size=12),
        st.tuples(st.sampled_from(ASCII_PIECES), st.integers(200, 300)).map(lambda run: run[0] * run[1]),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(ASCII_TEXT)
def test_an_ascii_text_cut_in_one_search_gets_the_scanners_tokens(text):
    """`standard_tokens`' fast path (one findall over an ASCII text whose matches fit the buffer) against the
    scanner, which the tests above hold to the whole-text search for any content."""
    assert list(standard_tokens(text)) == list(scanned_tokens(text))


# Lucene's word rule as its grammar writes it (StandardTokenizerImpl.jflex), over one character of each class:
# a letter, a Hebrew letter, a number, a katakana, extend_num_let, mid letter, mid number and letter, mid number,
# single and double quote, and a combining mark (it clings to the character before)
CLASSES = {"a": "a", "h": "\u05d0", "n": "1", "k": "\u30a2", "e": "_", "l": ":", "b": ".", "m": ",", "q": "'"}
CLASSES["d"] = '"'


@cache
def lucenes_word_rule():
    def one(names: str) -> str:
        return "(?:[" + "".join(CLASSES[name] for name in names) + "]\u0301*)"

    letter, hebrew, number, katakana, extend_num_let = one("ah"), one("h"), one("n"), one("k"), one("e")
    mid_letter, mid_number = one("lbq"), one("mbq")
    core = (
        f"(?:{katakana}(?:{extend_num_let}*{katakana})*"
        f"|(?:{hebrew}(?:{one('q')}|{one('d')}{hebrew})"
        f"|{number}(?:(?:{extend_num_let}*|{mid_number}){number})*"
        f"|{letter}(?:(?:{extend_num_let}*|{mid_letter}){letter})*)+)"
    )
    return regex.compile(
        f"{extend_num_let}*{core}(?:{extend_num_let}+{core})*{extend_num_let}*", regex.V1 | regex.POSIX
    )


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from([*CLASSES.values(), "\u0301", " "]), max_size=12))
def test_the_word_rule_matches_what_lucenes_grammar_matches(text):
    found = token_regex().match(text)
    expected = lucenes_word_rule().match(text)
    assert (found and found.end()) == (expected and expected.end())


class Counted:
    """A compiled pattern that counts the characters its searches and matches are given (from `pos` to `endpos`)."""

    def __init__(self, pattern, stops_at_first: bool) -> None:
        self.pattern, self.stops_at_first, self.given = pattern, stops_at_first, 0

    def search(self, string, pos=0, endpos=None):
        end = len(string) if endpos is None else endpos
        found = self.pattern.search(string, pos, end)
        self.given += (found.start() + 1 if self.stops_at_first and found else end) - pos
        return found

    def findall(self, string):
        self.given += len(string)
        return self.pattern.findall(string)

    def finditer(self, string):
        self.given += len(string)
        return self.pattern.finditer(string)

    def match(self, string, pos=0, endpos=None):
        end = len(string) if endpos is None else endpos
        self.given += end - pos
        return self.pattern.match(string, pos, end)


def characters_given(monkeypatch, text: str) -> int:
    """How many characters the tokenizer's patterns are given to tokenize `text` (each counted as often as given)."""
    patterns = []
    for name, stops_at_first in (("ASCII_TOKEN", False), ("ASCII_STARTER", True)):
        patterns.append(Counted(getattr(lucene_tokenizer, name, None), stops_at_first))
        monkeypatch.setattr(lucene_tokenizer, name, patterns[-1], raising=False)
    for name, stops_at_first in (("token_regex", False), ("starter_regex", True)):
        compiled = getattr(lucene_tokenizer, name, lambda: None)()
        patterns.append(Counted(compiled, stops_at_first))
        monkeypatch.setattr(lucene_tokenizer, name, lambda counted=patterns[-1]: counted, raising=False)
    list(standard_tokens(text))
    monkeypatch.undo()
    return sum(pattern.given for pattern in patterns)


@pytest.mark.parametrize("piece", ["a", "Zm9v", "é", "\U00010400", "_" * 300 + "x", "\u200d" * 254 + "a", "1.5"])
def test_the_work_of_tokenizing_a_word_grows_as_its_length(monkeypatch, piece):
    word = piece * (8000 // len(piece))
    once, twice = characters_given(monkeypatch, word), characters_given(monkeypatch, word * 2)
    assert once <= 8 * len(word)  # each character given to a pattern a few times
    assert twice <= 2.1 * once


def test_a_word_of_a_million_characters_is_cut_every_255():
    tokens = list(standard_tokens("a" * 1_000_000))
    assert len(tokens) == 1_000_000 // 255 + 1 and set(tokens[:-1]) == {"a" * 255}
    assert set(standard_tokens("é" * 1_000_000)) == {"é" * 255, "é" * (1_000_000 % 255)}


def test_a_megabyte_base64_blob_is_indexed_and_a_million_character_query_word_finds_it(tmp_path):
    blob = base64.b64encode(bytes(range(48, 58)) * 75_000).decode()  # 1,000,000 characters, one word ("MDEy...")
    assert len(blob) == 1_000_000 and blob.isalnum()
    corpus = write_jsonl(
        tmp_path / "corpus.jsonl",
        [{"id": "blob", "text": f"An attachment: {blob} (end)."}, {"id": "fox", "text": "The quick brown fox."}],
    )
    out = tmp_path / "idx"
    args = ["index", "build", "--corpus", str(corpus), "--retriever", "lucene_bm25", "--out", str(out)]
    result = cli_here(*args, "--no-progress")
    assert result.returncode == 0, result.stderr
    retriever = LuceneBM25Retriever(str(out))
    assert [[hit.id for hit in hits] for hits in retriever.search([blob, "fox"], 5)] == [["blob"], ["fox"]]
    assert len(analyze(blob)) == 1_000_000 // 255 + 1
    retriever.close()
