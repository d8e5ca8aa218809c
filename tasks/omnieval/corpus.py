"""OmniEval's knowledge corpus from its raw document folder, as corpus_builder/build_corpus.py
builds `<name>-2048-256_nodes/corpus.jsonl` (spec omnieval.md section 2.1), without llama-index:

- every file under the folder, at any depth (upstream's `flatten_folder`, hidden files included),
  read as llama-index 0.11's `SimpleDirectoryReader(input_files=...)` reads it: `.jsonl` through
  upstream's JsonlReader (one document per line, text = the line's "text", or the whole line
  dumped when the path contains "json_dataset"; Title = the file name before ".jsonl"; any bad
  line loses the whole file, as the reader's exception makes SimpleDirectoryReader skip it), any
  suffix without a llama-index reader as UTF-8 text, undecodable bytes ignored (Title = the file
  name before its first dot). Suffixes llama-index reads with its own readers (.pdf page by page,
  .md by header, .docx, .csv, ...) are not reproduced: those files are reported and left out;
- documents with empty text dropped;
- `check_short_doc`: at most SIZE characters (the split's chunk size, 2,048) kept whole; longer
  ones split (`chunking.TokenSplitter`, metadata string `file_path=>...::Title=>...`), except
  that a longer document from a path containing ".jsonl" and "基金" is dropped;
- written as upstream writes them: the chunks of all split documents first, then the whole ones,
  each `{"id", "title", "contents"}` (contents without the title).

Ids: upstream's are random UUID4s (llama-index's default id_func), so they differ on every build
and only upstream's released corpus matches its test sets' `relevant_node` labels. Here they are
deterministic: `<path relative to the folder>` for a text file, `<path>:<line>` for a JSONL line,
`#<n>` appended for the n-th chunk (from 0). Files are taken in sorted order (upstream: the
file system's `os.listdir` order).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

from ragbench.api import ConfigError, Document, RecordError
from ragbench.api.data import given_bytes, given_handle, parse_json, replacing
from ragbench.api.text import TokenSplitter

from ..shared.corpus_files import corpus_out, write_line


def upstream_metadata(title: str, file_path: str | None = None) -> str:
    """The metadata string llama-index takes off the chunk budget for an OmniEval document: the
    longer of its EMBED and LLM renderings, with build_corpus.py's template "{key}=>{value}" and
    separator "::". SimpleDirectoryReader's file name, type, size and dates are excluded from both,
    `file_path` only from the LLM one, so it is "file_path=><path>::Title=><title>" (Title is always
    set upstream: the file name's stem); without a known path, "Title=><title>" (which is what
    `ragbench index build --split-header 'Title=>{title}'` renders for a JSONL corpus)."""
    return "::".join([*([f"file_path=>{file_path}"] if file_path else []), f"Title=>{title}"])


# llama-index-core SimpleDirectoryReader's default readers (llama-index-readers-file): files it does
# not read as plain text. Their documents (pages, sections, rows) are not reproduced here.
LLAMA_READER_SUFFIXES = frozenset(
    {
        ".hwp",
        ".pdf",
        ".docx",
        ".pptx",
        ".ppt",
        ".pptm",
        ".gif",
        ".jpg",
        ".png",
        ".jpeg",
        ".webp",
        ".mp3",
        ".mp4",
        ".csv",
        ".epub",
        ".md",
        ".mbox",
        ".ipynb",
        ".xls",
        ".xlsx",
    }
)


def list_files(root: str) -> list[str]:
    """Every file under `root`, as `os.path.join(root, ...)` spells it (upstream's flatten_folder),
    in sorted order."""
    files: list[str] = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        files.extend(list_files(path) if os.path.isdir(path) else [path])
    return files


def jsonl_title(file_path: str) -> str:
    return file_path.split(".jsonl")[0].split("/")[-1]


def text_title(file_path: str) -> str:
    return file_path.split("/")[-1].split(".")[0]


CORPUS_FILE = "a document of OmniEval's corpus folder"


def read_file(path: str, file_path: str, doc_id: str) -> list[Document] | RecordError:
    """One file's documents (metadata["file_path"] set), or why the whole file is skipped."""
    suffix = Path(path).suffix.lower()
    if suffix in LLAMA_READER_SUFFIXES:
        return RecordError(
            path,
            0,
            f"not converted: llama-index reads {suffix} files with its own reader "
            "(pages, sections or rows), which is not reproduced here",
        )
    if suffix != ".jsonl":
        text = given_bytes(path, CORPUS_FILE).decode("utf-8", errors="ignore")
        return [Document(id=doc_id, title=text_title(file_path), text=text, metadata={"file_path": file_path})]
    title, dump = jsonl_title(file_path), "json_dataset" in file_path
    docs = []
    try:
        with io.TextIOWrapper(given_handle(path, CORPUS_FILE), encoding="utf8") as handle:
            lines = handle.readlines()
    except UnicodeDecodeError as exc:
        return RecordError(path, 0, f"file skipped, as upstream's reader fails on it: not UTF-8 ({exc.reason})")
    for number, line in enumerate(lines, 1):
        try:
            record = parse_json(line)
            text = json.dumps(record, ensure_ascii=False) if dump else record["text"]
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            return RecordError(path, number, f"file skipped, as upstream's reader fails on it ({type(exc).__name__})")
        if not isinstance(text, str):
            return RecordError(path, number, f'file skipped: "text" is a {type(text).__name__}, not a string', "text")
        docs.append(Document(id=f"{doc_id}:{number}", title=title, text=text, metadata={"file_path": file_path}))
    return docs


def read_folder(root: str | Path, path_as: str | None = None) -> Iterator[Document | RecordError]:
    """The non-empty documents of every file under `root`, a RecordError for each skipped file.
    `path_as`: the folder as upstream's command line named it (`file_path` is `str(Path(os.path.join(
    folder, relative path)))`, and its tokens count against the chunk budget); default `root`."""
    root = str(root)
    if not os.path.isdir(root):
        raise ConfigError(f"--docs {root}: not a folder")
    for path in list_files(root):
        relative = Path(os.path.relpath(path, root)).as_posix()
        file_path = str(Path(os.path.join(path_as, relative))) if path_as else str(Path(path))
        result = read_file(path, file_path, relative)
        if isinstance(result, RecordError):
            yield result
            continue
        yield from (doc for doc in result if doc.text != "")


def upstream_fate(doc: Document, whole_up_to: int) -> str:
    """build_corpus.py `check_short_doc`: "whole", "split" or "drop" (the 基金 rule)."""
    file_path = doc.metadata.get("file_path", "")
    if ".jsonl" in file_path and "基金" in file_path:
        return "drop" if len(doc.text) > whole_up_to else "whole"
    return "whole" if len(doc.text) <= whole_up_to else "split"


@dataclass
class OmniEvalCorpusStats:
    documents: int = 0
    whole: int = 0
    split: int = 0
    chunks: int = 0
    dropped: int = 0  # longer than the limit in a 基金 .jsonl file
    errors: list[RecordError] = field(default_factory=list)


def build_corpus(
    root: str | Path, out: str | Path, splitter: TokenSplitter, path_as: str | None = None, overwrite: bool = False
) -> OmniEvalCorpusStats:
    """Write `out` (corpus.jsonl) from the raw folder `root`; see the module docstring. Two passes
    over the folder, so no document list is held in memory: the chunks first, then the whole
    documents, as upstream orders them."""
    out = corpus_out(out, overwrite)
    stats = OmniEvalCorpusStats()
    with replacing(out) as handle:  # a temporary file of its own, renamed over `out` (a link there replaced)
        _write_corpus(root, handle, splitter, path_as, stats)
    return stats


def _write_corpus(
    root: str | Path, handle: IO[bytes], splitter: TokenSplitter, path_as: str | None, stats: OmniEvalCorpusStats
) -> None:
    limit = splitter.chunk_size

    def write(doc_id: str, title: str, text: str) -> None:
        write_line(handle, {"id": doc_id, "title": title, "contents": text})

    for doc in read_folder(root, path_as):
        if isinstance(doc, RecordError):
            stats.errors.append(doc)
            continue
        stats.documents += 1
        fate = upstream_fate(doc, limit)
        if fate == "drop":
            stats.dropped += 1
        elif fate == "split":
            stats.split += 1
            for n, text in enumerate(splitter.split(doc.text, upstream_metadata(doc.title, doc.metadata["file_path"]))):
                write(f"{doc.id}#{n}", doc.title, text)
                stats.chunks += 1
    for doc in read_folder(root, path_as):
        if not isinstance(doc, RecordError) and upstream_fate(doc, limit) == "whole":
            write(cast(str, doc.id), doc.title, doc.text)  # read_file names every document it reads
            stats.whole += 1
