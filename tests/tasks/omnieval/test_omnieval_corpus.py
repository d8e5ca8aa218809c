"""OmniEval's corpus from its raw document folder (corpus_builder/build_corpus.py without llama-index).
Lengths are counted one token per character (`count=len`) so the expected chunks follow from the
splitter's rules by hand (see test_retrieval_chunking.py); the reader rules (Title, file_path,
json_dataset, empty documents, the 基金 drop, skipped files, chunks-first order) are upstream's
as read in build_corpus.py and llama-index 0.11's SimpleDirectoryReader."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragbench.api import ConfigError
from ragbench.api.text import TokenSplitter
from ragbench.tasks.omnieval.corpus import build_corpus, read_folder


def make_folder(root):
    (root / "银行").mkdir(parents=True)
    (root / "投资" / "基金").mkdir(parents=True)
    (root / "json_dataset").mkdir()
    (root / "银行" / "存款.规则.txt").write_text("定期 存款 利率 " * 3, encoding="utf-8")  # 27 characters
    (root / "银行" / "short.txt").write_text("活期存款", encoding="utf-8")
    (root / "银行" / "empty.txt").write_text("", encoding="utf-8")
    lines = [{"text": "短文"}, {"text": ""}, {"text": "a" * 70}]
    (root / "投资" / "基金" / "fund.v1.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8"
    )
    (root / "json_dataset" / "qa.jsonl").write_text(
        json.dumps({"q": "问", "a": "答"}, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (root / "银行" / "bad.jsonl").write_text('{"text": "ok"}\n\n{"text": "lost"}\n', encoding="utf-8")
    (root / "银行" / "report.pdf").write_bytes(b"%PDF-1.4")


def test_reader_follows_simple_directory_reader_and_the_jsonl_reader(tmp_path):
    make_folder(tmp_path / "docs")
    items = list(read_folder(tmp_path / "docs", path_as="corpus/raw"))
    errors = [str(e) for e in items if isinstance(e, Exception)]
    docs = {d.id: d for d in items if not isinstance(d, Exception)}
    # a blank line makes upstream's json.loads fail, and SimpleDirectoryReader skips the whole file
    assert any("bad.jsonl:2" in e and "file skipped" in e for e in errors)
    assert any("report.pdf" in e and "not converted" in e for e in errors) and len(errors) == 2
    assert set(docs) == {
        "json_dataset/qa.jsonl:1",
        "投资/基金/fund.v1.jsonl:1",
        "投资/基金/fund.v1.jsonl:3",
        "银行/short.txt",
        "银行/存款.规则.txt",
    }  # empty text dropped (empty.txt, line 2)
    assert docs["json_dataset/qa.jsonl:1"].text == '{"q": "问", "a": "答"}'  # the line dumped
    assert docs["投资/基金/fund.v1.jsonl:1"].title == "fund.v1"  # before ".jsonl"
    assert docs["银行/存款.规则.txt"].title == "存款"  # before the first dot
    assert docs["银行/存款.规则.txt"].metadata["file_path"] == "corpus/raw/银行/存款.规则.txt"


def test_build_drops_long_fund_jsonl_lines_and_keeps_documents_up_to_size_whole(tmp_path):
    make_folder(tmp_path / "docs")
    out = tmp_path / "corpus.jsonl"
    stats = build_corpus(tmp_path / "docs", out, TokenSplitter(60, 0, count=len))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # fund.v1.jsonl line 3 (70 characters > 60, path with ".jsonl" and "基金") is dropped, not split
    assert (stats.documents, stats.whole, stats.split, stats.dropped, len(stats.errors)) == (5, 4, 0, 1, 2)
    assert [r["id"] for r in rows] == [
        "json_dataset/qa.jsonl:1",
        "投资/基金/fund.v1.jsonl:1",
        "银行/short.txt",
        "银行/存款.规则.txt",
    ]
    assert rows[3] == {"id": "银行/存款.规则.txt", "title": "存款", "contents": "定期 存款 利率 " * 3}
    with pytest.raises(ConfigError, match="exists"):
        build_corpus(tmp_path / "docs", out, TokenSplitter(60, 0, count=len))


def test_long_documents_are_chunked_with_the_file_path_in_the_budget_and_come_first(tmp_path):
    """z.txt has 44 characters > SIZE 40. Its metadata "file_path=>d/z.txt::Title=>z" has 28, so the
    budget is 40 - (28 + 2) = 10: "aaaa" + " bbbb" (9) | " cccc" + " dddd" | ... | " iiii"."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "b.txt").write_text("tiny", encoding="utf-8")
    (root / "z.txt").write_text("aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii", encoding="utf-8")
    out = tmp_path / "corpus.jsonl"
    stats = build_corpus(root, out, TokenSplitter(40, 0, count=len), path_as="d")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["contents"]) for r in rows] == [
        ("z.txt#0", "aaaa bbbb"),
        ("z.txt#1", "cccc dddd"),
        ("z.txt#2", "eeee ffff"),
        ("z.txt#3", "gggg hhhh"),
        ("z.txt#4", "iiii"),
        ("b.txt", "tiny"),
    ]
    assert (stats.split, stats.chunks, stats.whole) == (1, 5, 1) and {r["title"] for r in rows[:5]} == {"z"}
    # without --path-as the path as given counts: a longer tmp path leaves no room in 40
    with pytest.raises(ConfigError, match="no room"):
        build_corpus(root, tmp_path / "other.jsonl", TokenSplitter(40, 0, count=len))
    assert not (tmp_path / "other.jsonl").exists() and not list(tmp_path.glob(".other.jsonl.*"))


def test_the_corpus_is_written_under_a_name_of_its_own_never_a_users_file_or_through_a_link(tmp_path):
    make_folder(tmp_path / "docs")
    mine = tmp_path / "corpus.jsonl.partial"  # the name an earlier version wrote to, then removed
    mine.write_text("the user's", encoding="utf-8")
    target = tmp_path / "mine.jsonl"
    target.write_text("the user's too", encoding="utf-8")
    out = tmp_path / "corpus.jsonl"
    out.symlink_to(target)
    build_corpus(tmp_path / "docs", out, TokenSplitter(60, 0, count=len), overwrite=True)
    assert mine.read_text(encoding="utf-8") == "the user's" and target.read_text(encoding="utf-8") == "the user's too"
    assert not out.is_symlink() and len(out.read_text(encoding="utf-8").splitlines()) == 4


def test_cli_reports_skipped_files(tmp_path):
    from ragbench.api.text import tiktoken_encoding
    from ragbench.testing import cli

    try:
        tiktoken_encoding("cl100k_base")
    except ConfigError:
        pytest.skip("tiktoken cl100k_base not available")
    make_folder(tmp_path / "docs")
    out = tmp_path / "corpus.jsonl"
    result = CliRunner().invoke(cli, ["index", "omnieval-corpus", "--docs", str(tmp_path / "docs"), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "5 documents: 5 whole, 0 split into 0 chunks, 0 dropped" in result.output
    assert "report.pdf" in result.output and "2 file(s) skipped" in result.output
    assert len(out.read_text(encoding="utf-8").splitlines()) == 5
