"""OmniEval's corpus chunking (llama-index TokenTextSplitter's algorithm, re-implemented). Expected
chunks were derived by hand from that algorithm with one token per character (`count=len`), so they
do not depend on a tokenizer file: split at " " (separator kept in front), else "\\n", else into
characters; merge until the next piece overflows; drop pieces from the front while the rest exceeds
the overlap or the next piece would still overflow."""
from __future__ import annotations

import json

import pytest

from ragbench.errors import ConfigError
from ragbench.retrieval.chunking import TokenSplitter, chunk_documents, parse_split
from ragbench.types import Document


def chars(size: int, overlap: int) -> TokenSplitter:
    return TokenSplitter(size, overlap, count=len)


def test_words_merge_up_to_the_budget():
    assert chars(10, 3).split("aaaa bbbb cccc dddd") == ["aaaa bbbb", "cccc dddd"]


def test_overlap_keeps_the_tail_of_the_previous_chunk():
    assert chars(10, 4).split("ab cd ef gh ij") == ["ab cd ef", "ef gh ij"]


def test_newline_is_the_backup_separator():
    assert chars(10, 0).split("abcdefgh\nijklmnop") == ["abcdefgh", "ijklmnop"]


def test_text_without_separators_is_cut_into_characters():
    assert chars(5, 2).split("一二三四五六七八九十甲乙") == ["一二三四五", "四五六七八", "七八九十甲", "十甲乙"]


def test_short_text_is_one_chunk_and_metadata_takes_its_tokens_plus_two():
    assert chars(10, 0).split("short") == ["short"]
    assert chars(15, 0).split("ab cd ef", metadata="Title: x") == ["ab cd", "ef"]  # budget 15 - (8 + 2) = 5
    # a piece over budget is cut again: " cd" (3 > 2) into " ", "c", "d"; chunks are stripped
    assert chars(12, 0).split("ab cd ef", metadata="Title: x") == ["ab", "c", "d", "ef"]
    with pytest.raises(ConfigError, match="no room"):
        chars(10, 0).split("text", metadata="Title: long")
    with pytest.raises(ConfigError, match="overlap"):
        chars(10, 11)


def test_documents_up_to_2048_characters_stay_whole():
    docs = [Document(id="d1", title="T", text="a" * 2048), Document(id="d2", title="T", text="a" * 2049)]
    out = list(chunk_documents(docs, TokenSplitter(2048, 256, count=len)))
    assert out[0] == docs[0]
    # d2: budget 2048 - (len("Title: T") + 2) = 2038 characters, then the last 256 + the 11 left
    assert [(d.id, len(d.text), d.metadata["chunk_of"]) for d in out[1:]] == [("d2#0", 2038, "d2"), ("d2#1", 267, "d2")]
    untitled = list(chunk_documents(docs[1:], TokenSplitter(2048, 256, count=len), metadata="none"))
    assert [len(d.text) for d in untitled] == [2048, 257]


def test_split_spec_and_index_build_record_it(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="tokens:SIZE:OVERLAP"):
        parse_split("words:10")
    from ragbench.retrieval import chunking, index

    monkeypatch.setattr(chunking, "tiktoken_counter", lambda name="cl100k_base": len)
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"id": "short", "title": "S", "contents": "tiny"},
            {"id": "long", "title": "L", "contents": " ".join(["word"] * 600)}]  # 2,999 characters
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    manifest = index.build_index(corpus, tmp_path / "idx", "bm25", split="tokens:1000:100", progress=False)
    assert manifest.corpus["split"] == "tokens:1000:100"
    stored = [json.loads(line) for line in (tmp_path / "idx" / "docs.jsonl").read_text().splitlines()]
    # budget 1000 - (len("Title: L") + 2) = 990 characters: 198 words a chunk (989 characters), the
    # next starting 20 words back (100 characters of overlap): words 1-198, 179-376, 357-554, 535-600
    assert [d["id"] for d in stored] == ["short", "long#0", "long#1", "long#2", "long#3"]
    assert [len(d["text"].split()) for d in stored[1:]] == [198, 198, 198, 66] and manifest.doc_count == 5


def test_cl100k_offline_and_not_cached_is_a_config_error(monkeypatch, tmp_path):
    from ragbench.retrieval.chunking import tiktoken_counter

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    tiktoken_counter.cache_clear()
    try:
        tiktoken_counter("cl100k_base")
    except ConfigError as exc:
        assert "TIKTOKEN_CACHE_DIR" in str(exc)
    else:
        pytest.skip("this machine can download tiktoken's cl100k_base")
    finally:
        tiktoken_counter.cache_clear()
