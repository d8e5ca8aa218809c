"""lucene_bm25's build hot path against the analyzer it stands for: a chunk's postings counted through the token
cache (`TermNumbers`: each distinct token analysed once) and numpy equal each text's `analyze` terms counted one by
one, on random text of any content (stop words, possessives, case, punctuation, non-ASCII, astral characters); the
ASCII tokens' `re` pattern matches what the Unicode pattern (Lucene's rules) matches on ASCII text, and a text whose
other characters all have ASCII stand-ins is cut as the scanner cuts it (each such character in every context of
its neighbours' classes, and random text), and so is an ASCII text split where nothing joins its runs of letters
and digits; a docs store's ids read with orjson equal its passages' ids as `get` reads them, lone surrogates
included, and its lines written without json's encoder are json's; a JSONL corpus read through orjson gives the
passages and bad rows `located_lines` gives, on lines of any content (integers beyond 64 bits, NaN, lone
surrogates, bytes that are not UTF-8, a BOM, white space)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragbench._retrieval.corpus.readers import corpus_rows, jsonl_passage
from ragbench._retrieval.index.docstore import DocStore, DocStoreWriter, passage_line_bytes
from ragbench._retrieval.lucene.analyzer import analyze
from ragbench._retrieval.lucene.postings import END, analysed_postings, token_stream
from ragbench._retrieval.lucene.tokenizer import (
    ASCII_TOKEN,
    ascii_stand_ins,
    scanned_tokens,
    standard_tokens,
    token_regex,
    unchecked_tokens,
)
from ragbench._storage.jsonl import dumps, located_lines
from ragbench.api import Document

WORDS = ["The", "the", "fox's", "FOX", "foxes", "running", "runs", "İstanbul", "ΣΟΦΟΣ", "U.S.A", "1,000", "_x_",
         "a", "and", "Don't", "naïve", "\u4e2d\u6587", "\U0001f600", "\u0e01\u0e31", "x" * 300]  # fmt: skip
TEXT = st.lists(st.one_of(st.sampled_from(WORDS), st.text(min_size=1, max_size=12)), max_size=30).flatmap(
    lambda words: st.lists(st.sampled_from(" \t\n.,;:'\"()-"), min_size=len(words), max_size=len(words)).map(
        lambda gaps: "".join(word + gap for word, gap in zip(words, gaps))
    )
)


def counted_one_by_one(texts: list[str]) -> tuple[set[tuple[int, str, int]], list[int], list[str]]:
    """The build's postings as they were made: a Counter of each text's terms, terms numbered at first sight."""
    counts = [Counter(analyze(text)) for text in texts]
    first_sight = list(dict.fromkeys(term for count in counts for term in count))
    postings = {(doc, term, n) for doc, count in enumerate(counts) for term, n in count.items()}
    return postings, [sum(count.values()) for count in counts], first_sight


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, max_size=8))
@example(["__ a_ _ b .__. _1,2_ x:_", "_"])  # runs of "_" alone: no token
def test_postings_equal_each_text_analysed(texts: list[str]) -> None:
    docs, terms, freqs, lengths, words = analysed_postings(texts)
    postings, expected_lengths, first_sight = counted_one_by_one(texts)
    assert sorted(words) == sorted(first_sight) and len(set(words)) == len(words)  # a long word's text's terms last
    assert lengths.tolist() == expected_lengths
    found = list(zip(docs.tolist(), [words[t] for t in terms.tolist()], freqs.tolist()))
    assert set(found) == postings and len(found) == len(postings)
    assert found == sorted(found, key=lambda posting: (words.index(posting[1]), posting[0]))  # by term, passage


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from("aZ09_:.',; -\"\t"), max_size=40))
def test_the_ascii_pattern_matches_what_lucenes_rules_match(text: str) -> None:
    assert ASCII_TOKEN.findall(text) == [found[0] for found in token_regex().finditer(text)]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(st.sampled_from("aZ09_:.',; -\"\t\x01é"), max_size=30), max_size=6))
def test_a_chunk_cut_in_one_string_gets_each_texts_tokens(texts: list[str]) -> None:
    order, stream = token_stream(texts)
    tokens = [token for token in stream if token.strip("_")]  # runs of "_" alone number as no term
    each: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        if token == END:
            each, current = [*each, current], []
        else:
            current.append(token)
    assert sorted(order) == list(range(len(texts))) and not current
    assert each == [list(unchecked_tokens(texts[number])) for number in order]


CONTEXTS = [
    "{c}",
    "a{c}b",
    "1{c}2",
    "_{c}_",
    "x{c}{c}y",
    "{c}a{c}",
    "a.{c}",
    "{c}'s",
    "3,{c}",
    "{c}\u0301a",
    "\u05d0{c}",
]


def test_each_character_with_a_stand_in_is_cut_as_the_scanner_cuts_it() -> None:
    differ = [
        (chr(point), context)
        for point in ascii_stand_ins()
        for context in CONTEXTS
        if list(standard_tokens(text := context.format(c=chr(point)))) != list(scanned_tokens(text))
    ]
    assert not differ


STAND_IN_CHARS = sorted(map(chr, ascii_stand_ins()))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(STAND_IN_CHARS), st.sampled_from("aZ09_:.',; -\"\t"), st.characters(codec="utf-8")),
        max_size=60,
    ).map("".join)
)
def test_a_text_of_stand_in_characters_is_cut_as_the_scanner_cuts_it(text: str) -> None:
    assert list(standard_tokens(text)) == list(scanned_tokens(text))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.characters(codec=None), min_size=1, max_size=8), min_size=1, max_size=6))
def test_docstore_ids_read_as_get_reads_them(ids: list[str]) -> None:
    with TemporaryDirectory() as tmp:
        writer = DocStoreWriter(Path(tmp))
        for doc_id in ids:
            writer.add(Document(id=doc_id, title="t\ud800", text=doc_id))
        writer.close()
        store = DocStore(Path(tmp))
        try:
            assert store.ids() == [store.get(i).id for i in range(len(ids))] == ids
        finally:
            store.close()


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("aZ09_:.',; -\"\t\n()") | st.characters(codec="ascii"), max_size=60))
def test_an_ascii_text_split_is_cut_as_the_scanner_cuts_it(text: str) -> None:
    assert list(standard_tokens(text)) == list(scanned_tokens(text))


def store_line(doc: Document) -> bytes:
    """A docs store's line as `DocStoreWriter` wrote it with json's encoder: its object by `dumps`."""
    record = {"id": doc.id, "title": doc.title, "text": doc.text} | ({"url": doc.url} if doc.url else {})
    return dumps(record | ({"metadata": doc.metadata} if doc.metadata else {})).encode("utf-8") + b"\n"


ANY_TEXT = st.text(
    st.characters(exclude_categories=()) | st.sampled_from('\ud800\udfff\u2028é"\\\x00\x7f'), max_size=20
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(ANY_TEXT, st.none()), ANY_TEXT, ANY_TEXT, st.sampled_from([None, "", "http://x"]), st.booleans())
def test_a_docs_store_line_is_what_jsons_encoder_writes(doc_id, title, text, url, metadata) -> None:
    doc = Document(id=doc_id, title=title, text=text, url=url, metadata={"k": [1.5, None]} if metadata else {})
    assert passage_line_bytes(doc) == store_line(doc)


JSON_VALUE = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers() | st.integers(2**63 - 2, 2**64 + 1).map(lambda big: big * (-1) ** big),  # orjson's bounds
        st.floats(),
        ANY_TEXT,
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "title"]), inner, max_size=2),
    max_leaves=6,
)
FIELDS = st.sampled_from(["id", "_id", "docid", "contents", "text", "title", "url", "segment", "metadata"])
RECORD_LINE = st.tuples(st.dictionaries(FIELDS, JSON_VALUE | st.text(max_size=8), max_size=5), st.booleans()).map(
    lambda made: json.dumps(made[0], ensure_ascii=made[1]).encode("utf-8", "surrogatepass")
)
LINE = st.one_of(
    RECORD_LINE,
    RECORD_LINE.map(lambda line: b"\xef\xbb\xbf" + line),  # a BOM
    st.binary(max_size=12),
    st.sampled_from([b"", b"  \t", b"[1]", b"null", b'{"id": "x", "contents": NaN}', b'{"id": 1e400, "text": "t"}']),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(LINE, st.sampled_from([b"\n", b"\r\n"])), max_size=8), st.booleans())
def test_a_jsonl_corpus_read_through_orjson_is_read_as_located_lines_reads_it(lines, last_newline) -> None:
    data = b"".join(line + end for line, end in lines)
    if lines and not last_newline:
        data = data[: -len(lines[-1][1])]
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        path.write_bytes(data)
        with open(path, "rb") as handle:
            expected = [(located.start, jsonl_passage(located, path)) for located in located_lines(handle, str(path))]
        found = list(corpus_rows(path))
    assert [(start, repr(item)) for start, item in found] == [(start, repr(item)) for start, item in expected]
