"""A line nested 100,000 deep in a file a metric reads (TREC support labels, DeepResearch Bench FACT's pages) is
refused in one line naming the file and line, as every JSON reader refuses one (ragbench.api.data.parse_json): never
a RecursionError taken for a bug of the plugin."""

from __future__ import annotations

import pytest

from ragbench.api import ConfigError
from ragbench.metrics.drb_fact.pages import read_pages
from ragbench.metrics.trec_support.agreement import read_labels

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_labels_line_nested_too_deeply_is_one_line_naming_it(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"narrative_id": "1", "statement": "s", "citation_id": "c", "label": ' + DEEP + "}\n")
    with pytest.raises(ConfigError) as caught:
        read_labels(labels)
    assert f"{labels}:1: not a judged pair" in str(caught.value) and "nested too deeply" in str(caught.value)


def test_a_pages_line_nested_too_deeply_is_one_line_naming_it(tmp_path):
    pages = tmp_path / "pages.jsonl"
    pages.write_text('{"url": "https://a.example", "content": "c"}\n{"url": ' + DEEP + "}\n")
    with pytest.raises(ConfigError) as caught:
        read_pages(pages)
    assert str(caught.value).startswith(f"metric drb_fact: {pages}:2 is not a page")
