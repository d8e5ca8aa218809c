"""MultiHop-RAG's corpus (dataset/corpus.json: one JSON list of news articles `{"title", "author", "source",
"published_at", "category", "url", "body"}`) as the chunks its retrieval experiments search
(simple_retrieval.py): util.py's JSONReader makes each article a document of its body with the metadata
title, published_at and source, and llama-index's SentenceSplitter (chunking.py; 256 tokens, overlap 200)
cuts each body with that metadata text (`title: ...\\npublished_at: ...\\nsource: ...`) taken off the budget.

Each chunk is written as a JSONL line for `ragbench index build --corpus`: `{"id": "<n>#<k>", "title",
"url", "text", "metadata": {"published_at", "source", "author", "category"}}` (n the article's position in
the file from 0, k the chunk's within the article from 0), so a shown chunk keeps what the task's prompt
and retrieval metric render (metrics.retrieved_text).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import JsonObject, decoded, given_bytes, parse_json, replacing

from ..shared.corpus_files import corpus_out, corpus_source, write_line
from .chunking import CHUNK_OVERLAP, CHUNK_SIZE, SentenceSplitter

REQUIRED = ("title", "published_at", "source", "body")  # what JSONReader reads (a KeyError upstream)
OPTIONAL = ("url", "author", "category")
SPLIT_METADATA = ("title", "published_at", "source")  # JSONReader's metadata, in its order


def metadata_text(article: Mapping[str, object]) -> str:
    """llama-index's `get_metadata_str()` of a JSONReader document: one `key: value` line each."""
    return "\n".join(f"{key}: {article[key]}" for key in SPLIT_METADATA)


@dataclass
class MultihopCorpusStats:
    articles: int = 0
    chunks: int = 0
    errors: list[RecordError] = field(default_factory=list)


def read_articles(path: Path) -> Iterator[tuple[int, dict[str, Any] | RecordError]]:
    """(position, article) of each record of corpus.json; a record that is not an article (not an object, a
    required field missing or not a string) is a RecordError naming the file, the record and the field."""
    where, expected = f"--corpus {path}", "MultiHop-RAG's dataset/corpus.json"
    raw = given_bytes(path, expected, where)
    text = decoded(raw.removeprefix(codecs.BOM_UTF8), where, f"pass {expected}")  # a byte order mark is no JSON
    try:
        records = parse_json(text)
    except ValueError as exc:  # not JSON, or nested deeper than the parser follows
        raise ConfigError(f"{where}: not a JSON document ({exc}); pass {expected}") from None
    if not isinstance(records, list):
        raise ConfigError(f"--corpus {path}: expected a JSON list of articles, got {type(records).__name__}")
    for n, record in enumerate(records):
        if not isinstance(record, dict):
            yield n, RecordError(str(path), n, f"expected an article object, got {type(record).__name__}", at=f"[{n}]")
            continue
        bad = next((key for key in REQUIRED if not isinstance(record.get(key), str)), None)
        if bad is not None:
            problem = (
                "missing field" if record.get(bad) is None else f"expected a string, got {type(record[bad]).__name__}"
            )
            yield n, RecordError(str(path), n, problem, bad, at=f"[{n}]")
            continue
        yield n, record


def article_chunks(n: int, article: dict[str, Any], splitter: SentenceSplitter) -> Iterator[JsonObject]:
    metadata: JsonObject = {
        key: article[key] for key in ("published_at", "source", "author", "category") if key in article
    }
    for k, text in enumerate(splitter.split(article["body"], metadata_text(article))):
        yield {
            "id": f"{n}#{k}",
            "title": article["title"],
            "url": article.get("url"),
            "text": text,
            "metadata": metadata,
        }


def build_corpus(
    source: str | Path,
    out: str | Path,
    chunk_size: int = CHUNK_SIZE,
    overlap: int = CHUNK_OVERLAP,
    overwrite: bool = False,
) -> MultihopCorpusStats:
    """Write `out` (JSONL chunks for `ragbench index build --corpus`) from corpus.json `source`; `out`
    appears only once complete (a failure, a full disk, leaves no part of it)."""
    source = corpus_source(source, "--corpus", "MultiHop-RAG's dataset/corpus.json")
    out = corpus_out(out, overwrite)
    splitter = SentenceSplitter(chunk_size, overlap)
    stats = MultihopCorpusStats()
    with replacing(out) as handle:
        for n, article in read_articles(source):
            if isinstance(article, RecordError):
                stats.errors.append(article)
                continue
            try:
                chunks = list(article_chunks(n, article, splitter))
            except ConfigError as exc:  # its metadata (a title of hundreds of words) leaves no room: this article only
                stats.errors.append(RecordError(str(source), n, f"{exc}; raise --chunk-size", "title", at=f"[{n}]"))
                continue
            stats.articles += 1
            for chunk in chunks:
                write_line(handle, chunk)
                stats.chunks += 1
    return stats
