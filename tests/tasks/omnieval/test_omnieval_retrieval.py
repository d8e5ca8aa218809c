"""BM25 over a Chinese corpus with `tokenizer=jieba` (OmniEval's knowledge corpus form {id, title, contents})."""

from __future__ import annotations

import json

import pytest

from conftest import needs
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry, load_retriever

pytestmark = needs("bm25s", "jieba")  # not imported while the tests are collected

ROWS = [
    {"id": "n1", "title": "存款", "contents": "定期存款\n定期存款的最长期限为五年，利率高于活期存款。"},
    {"id": "n2", "title": "基金", "contents": "货币基金\n货币基金风险低，流动性好，收益稳定。"},
    {"id": "n3", "title": "反洗钱", "contents": "大额交易\n金融机构应当报告大额交易和可疑交易。"},
    {"id": "n4", "title": "保险", "contents": "寿险\n人寿保险的犹豫期一般为十五天。"},
]


def build(tmp_path, **options):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    build_index(corpus, tmp_path / "index", "bm25", options, progress=False, registry=installed_registry())
    return load_retriever("bm25", {"index": str(tmp_path / "index")})


def test_jieba_tokenizer_finds_chinese_words(tmp_path):
    retriever = build(tmp_path, tokenizer="jieba")
    hits = retriever.search(["定期存款的期限是多久？", "哪种基金风险低", "可疑交易要报告吗"], k=2)
    assert [h[0].id for h in hits] == ["n1", "n2", "n3"]
    assert hits[0][0].score > hits[0][1].score
    assert retriever.manifest.options["tokenizer"] == "jieba"


def test_default_regex_tokenizer_sees_whole_chinese_clauses_as_one_token(tmp_path):
    # why tokenizer=jieba exists: the regex keeps "定期存款的期限是多久" as a single word, matching nothing: no passage
    assert build(tmp_path).search(["定期存款的期限是多久？"], k=1) == [[]]


def test_unknown_tokenizer_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="bm25 tokenizer 'spaces' is unknown"):
        build(tmp_path, tokenizer="spaces")
