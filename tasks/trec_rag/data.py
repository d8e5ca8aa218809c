"""TREC RAG's topics and qrels as released.

- RAG 2024 topics: TSV, one `topic_id<TAB>query` per line (trec_rag_2024_queries.tsv, Anserini's
  topics.rag24.test.txt), read as ragnarok's rag24_validation.load_topics reads them (`line.strip().split("\\t")`).
- RAG 2025 topics: JSONL, one `{"id", "narrative"}` per line (trec_rag_2025_queries.jsonl as released; the track
  guidelines' example names the text `"title"`, also read).
- Qrels: trec_eval's `topic_id iteration docid relevance` per line, white-space separated, graded (UMBRELA's and
  NIST's 0-3). A line trec_eval could not read, a grade outside a C int's range (which pytrec_eval would read
  wrong: `relevance`), or a judgment given twice, is refused in one line naming where.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import decoded, given_lines, parse_json
from ragbench.api.retrieval import relevance as read_grade

TOPIC_TEXT = ("narrative", "title", "query")  # a JSONL topic's text: the first of these it has


def read_topics(path: Path) -> tuple[dict[str, str], list[RecordError]]:
    """topic id -> its text, in file order, and the lines that are no topic. A topic given again with the same
    text is read once (the question asked either way); with other text it is a ConfigError naming both lines:
    ragnarok's and pyserini's readers would keep the later text without a word."""
    topics: dict[str, str] = {}
    lines: dict[str, int] = {}
    bad: list[RecordError] = []
    for number, line in text_lines(path, "TREC RAG's topics (TSV or JSONL)"):
        item = jsonl_topic(line) if line.lstrip().startswith("{") else tsv_topic(line)
        if isinstance(item, str):
            bad.append(RecordError(str(path), number, item))
        elif item[0] in topics and topics[item[0]] != item[1]:
            raise ConfigError(
                f"{path}:{number}: topic {item[0]} again, with other text than on line {lines[item[0]]}: "
                "keep one line per topic"
            )
        else:
            topics.setdefault(item[0], item[1])
            lines.setdefault(item[0], number)
    return topics, bad


def text_lines(path: Path, expected: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every non-blank line; a file that is not UTF-8 is a ConfigError naming the line."""
    for number, raw in given_lines(path, expected):
        yield number, decoded(raw, str(path), expected, number)


def tsv_topic(line: str) -> tuple[str, str] | str:
    """(id, query) of a TSV line, or what is wrong with it."""
    fields = line.strip().split("\t")
    if len(fields) != 2 or not fields[0] or not fields[1].strip():
        return f"expected topic_id<TAB>query, got {len(fields)} tab-separated field(s)"
    return fields[0], fields[1]


def jsonl_topic(line: str) -> tuple[str, str] | str:
    """(id, text) of a JSONL line, or what is wrong with it."""
    try:
        record = parse_json(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON at column {exc.colno}: {exc.msg}"
    except ValueError as exc:  # nested too deeply (parse_json)
        return f"not readable JSON: {exc}"
    if (
        not isinstance(record, dict)
        or isinstance(record.get("id"), bool)
        or not isinstance(record.get("id"), (str, int))
    ):
        return 'expected {"id", "narrative"} with a string or whole-number id'
    text = next((record[key] for key in TOPIC_TEXT if isinstance(record.get(key), str) and record[key].strip()), None)
    if text is None:
        return f"topic {record['id']!r} has no text (expected one of {', '.join(TOPIC_TEXT)})"
    return str(record["id"]), text


def read_qrels(path: Path) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """topic id -> {docid: grade} in file order, and the line of each topic's first judgment."""
    qrels: dict[str, dict[str, int]] = {}
    lines: dict[str, int] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, line in text_lines(path, "qrels (topic_id iteration docid relevance)"):
        fields = line.split()
        if len(fields) != 4:
            raise ConfigError(
                f"{path}:{number}: expected 4 fields (topic_id iteration docid relevance), got {len(fields)}"
            )
        topic, _, docid, grade = fields
        try:
            relevance = read_grade(grade)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: {exc}") from None
        if (topic, docid) in seen:
            raise ConfigError(
                f"{path}:{number}: topic {topic} judges {docid} again (first on line {seen[topic, docid]}); "
                "keep one judgment per segment"
            )
        seen[topic, docid] = number
        lines.setdefault(topic, number)
        qrels.setdefault(topic, {})[docid] = relevance
    return qrels, lines
