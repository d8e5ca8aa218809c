"""The `beir` task: a BEIR dataset folder (GenericDataLoader's layout): queries.jsonl (`{"_id", "text",
"metadata"}`), qrels/<split>.tsv (a header, then `query-id<TAB>corpus-id<TAB>score`, graded) and the
corpus.jsonl a system searches through an index (`ragbench index build --corpus FOLDER/corpus.jsonl`).

As GenericDataLoader.load, the examples are the queries the split's qrels name, in the qrels' order (a query
without qrels is left out); every qrels row counts, score 0 included (a query whose rows are all 0 is scored,
0). Unlike it, a bad row or a qrels query missing from queries.jsonl is a counted bad record, not a crash:
one per query of the split, so a line of queries.jsonl that cannot be read is named by the query it fails.
A file whose first line is a judgment (no header: BEIR would drop it), whose stray quote runs a field
over later rows (their judgments lost), or with a row that is not UTF-8 or csv cannot read, is refused in one
line naming where.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Document, Example, Prompt, RecordError, Task, TaskPrompting, TaskScoring
from ragbench.api.data import decoded, given_handle, given_jsonl
from ragbench.api.retrieval import relevance

from ..shared.given_data import given_data
from .metrics import cutoffs

QUERIES = "queries.jsonl"
QRELS_FOLDER = "qrels"
PROMPT = "{docs}Question: {question}\nAnswer:"


QRELS_FILE = "a BEIR qrels file (qrels/SPLIT.tsv)"


def utf8_lines(handle: Iterable[bytes], path: Path) -> Iterator[str]:
    """The lines of a file opened in binary, decoded; a line that is not UTF-8 is a ConfigError naming it (a
    text-mode read names neither the file nor the line)."""
    for number, line in enumerate(handle, start=1):
        yield decoded(line, str(path), QRELS_FILE, first_line=number)


def qrels_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line, row) of each row after the header, as `_load_qrels` reads them (csv, tab-separated, quotes
    honoured). What would lose judgments unseen is a ConfigError naming where: a first line that is a
    judgment (no header), a stray quote running a field over later rows, a row csv cannot read."""
    with given_handle(path, QRELS_FILE) as handle:
        rows = csv.reader(utf8_lines(handle, path), delimiter="\t")
        end = 0
        try:
            header = next(rows, None)
            if header is not None and len(header) >= 3 and header[2].strip().lstrip("-").isdigit():
                raise ConfigError(
                    f"{path}: line 1 is a judgment ({header[0]}, {header[1]}, {header[2]}), not BEIR's "
                    "header; BEIR skips the first line of a qrels file: add the line "
                    "query-id<TAB>corpus-id<TAB>score"
                )
            end = rows.line_num
            for row in rows:
                line, end = end + 1, rows.line_num  # the row's first line, and its last
                if any("\n" in value or "\r" in value for value in row):
                    raise ConfigError(
                        f"{path}:{line}: a double quote opens a field that runs on to line {end} (qrels "
                        'are read as CSV, quotes included): remove the unmatched "'
                    )
                yield line, row
        except csv.Error as exc:  # a field over csv's limit: a runaway quote in a large file
            raise ConfigError(
                f"{path}:{end + 1}: cannot read the row ({exc}); a stray double quote? remove it"
            ) from None


def read_qrels(path: Path) -> tuple[dict[str, dict[str, int]], dict[str, int], dict[str, RecordError]]:
    """query id -> {corpus id: grade} in file order (header skipped, as `_load_qrels`), the line of each
    query's first row, and the first bad row of each query that has one (a query with a bad row is not
    scored: its gold would be partial)."""
    qrels: dict[str, dict[str, int]] = {}
    lines: dict[str, int] = {}
    bad: dict[str, RecordError] = {}
    for line, row in qrels_rows(path):
        if not row:
            continue
        if len(row) < 3:
            bad.setdefault(row[0], RecordError(str(path), line, f"expected query-id, corpus-id and score, got {row!r}"))
            continue
        query_id, corpus_id, grade = row[0], row[1], row[2]
        lines.setdefault(query_id, line)
        try:
            qrels.setdefault(query_id, {})[corpus_id] = relevance(grade)
        except ValueError as exc:
            bad.setdefault(query_id, RecordError(str(path), line, str(exc), "score"))
    return qrels, lines, bad


class BeirPrompting(TaskPrompting):
    """A reader's prompt over the retrieved documents, for systems that answer (beir_retrieval scores the documents)."""

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        shown = "".join(f"[{i}] {self.shown(doc)}\n\n" for i, doc in enumerate(docs or [], start=1))
        return PROMPT.format(docs=shown, question=options.get("question") or example.question)

    def shown(self, doc: Document) -> str:
        """What the prompt shows of a document."""
        return f"{doc.title}\n{doc.text}"


class BeirTask(Task):
    """A BEIR collection: each query of the split's qrels, its gold the graded relevant corpus ids."""

    name = "beir"
    prompting = BeirPrompting()
    scoring = TaskScoring(gold_fields=("qrels",), metrics=("beir_retrieval",))
    own_documents = False

    def __init__(self, data_path: str | Path | None = None, split: str = "test", k: str | int = "1,3,5,10") -> None:
        super().__init__(data_path, split=split, k=k)
        self.split = split
        self.cutoffs = cutoffs(k)
        self.scoring = replace(self.scoring, metric_options={"beir_retrieval": {"k": k}})

    def system_defaults(self) -> dict[str, object]:
        """A system shows as many documents as the deepest cut-off scores."""
        return {"top_n": max(self.cutoffs)}

    @property
    def folder(self) -> Path:
        """The BEIR dataset folder --data names."""
        return given_data(
            self, "a BEIR dataset folder", "FOLDER", f" (one holding {QUERIES} and {QRELS_FOLDER}/{self.split}.tsv)"
        )

    def prepare(self) -> None:
        for path in (self.folder / QUERIES, self.qrels_path):
            if not path.exists():  # what is there but no file is refused as its reader opens it (`given_handle`)
                raise ConfigError(
                    f"task beir: {path} not found; --data beir=FOLDER names a BEIR dataset folder "
                    f"(unzipped), and --task-arg beir.split=NAME one of its qrels/NAME.tsv"
                )

    @property
    def qrels_path(self) -> Path:
        return self.folder / QRELS_FOLDER / f"{self.split}.tsv"

    def examples(self) -> Iterator[Example | RecordError]:
        self.prepare()
        qrels, lines, bad = read_qrels(self.qrels_path)
        queries: dict[str, str] = {}
        unread: list[int] = []  # lines of queries.jsonl that are not a query: named where a qrels query is missing
        unreadable = ""  # why the first line that could not be read at all was not (not UTF-8, not JSON)
        for index, item in given_jsonl(self.folder / QUERIES, "BEIR's queries.jsonl"):
            if isinstance(item, RecordError) or "_id" not in item or not isinstance(item.get("text"), str):
                unread.append(index + 1)
                unreadable = unreadable or (f"; {item}" if isinstance(item, RecordError) else "")
            else:
                queries[str(item["_id"])] = item["text"]
        for index, query_id in enumerate(dict.fromkeys([*qrels, *bad])):
            if query_id in bad:
                yield bad[query_id]
            elif query_id not in queries:
                where = (
                    f' (its lines {", ".join(map(str, unread))} are not {{"_id", "text"}}{unreadable})'
                    if unread
                    else ""
                )
                yield RecordError(
                    str(self.qrels_path), lines[query_id], f"query {query_id!r} is not in {QUERIES}" + where, "query-id"
                )
            else:
                yield Example(id=query_id, question=queries[query_id], gold={"qrels": qrels[query_id]}, index=index)
