"""`ragbench index build`'s build of one index folder from a corpus (`build_index`): the passages streamed in chunks
of `chunk_size` to the docs store and the retriever's builder, which never see the whole corpus; the folder staged
beside `out` and renamed there once complete, its manifest (ragbench._retrieval.index.built) written last."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._errors import ConfigError, RecordError
from ..._storage.files import naming, write_problem
from ..._types import Document
from ..._values.options import construct
from ..base import IndexBuilder
from ..corpus.chunking import chunk_documents, parse_split, title_header
from ..corpus.identity import CorpusState, corpus_bytes, corpus_sha256, corpus_state
from ..corpus.readers import corpus_format, read_corpus
from .built import Manifest, built_index
from .docstore import DocStoreWriter
from .progress import build_progress
from .removal import empty_marked, set_aside
from .staging import BUILD_MARK, MANIFEST_FILE, held_staging

if TYPE_CHECKING:
    from ..._registry import Registry

KEPT_ERRORS = 20  # bad records listed in the manifest (all are counted)
Feeder = Callable[[Any, Iterable[list[str]]], None]  # (builder, chunks' texts): gives the builder the texts


def chunks(items: Iterable[Document | RecordError], size: int, errors: list[RecordError]) -> Iterator[list[Document]]:
    """Passages in lists of at most `size`; bad records go to `errors`."""
    chunk: list[Document] = []
    for item in items:
        if isinstance(item, RecordError):
            errors.append(item)
            continue
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def build_index(
    corpus: str | Path,
    out: str | Path,
    kind: str,
    options: Mapping[str, object] | None = None,
    chunk_size: int = 50_000,
    title: bool = True,
    overwrite: bool = False,
    progress: bool = True,
    split: str | None = None,
    split_header: str | None = None,
    *,
    registry: Registry,
    feeder: Feeder | None = None,
    named_sha256: str | None = None,
) -> Manifest:
    """Build a `kind` index of `corpus` into `out`; it appears there only once complete. `split`
    (`tokens:SIZE:OVERLAP`) cuts documents longer than SIZE characters into chunks of SIZE tokens
    as llama-index's TokenTextSplitter does (ragbench._retrieval.corpus.chunking), `split_header` (a template
    over {title}) being the metadata text taken off each chunk's budget. The retriever comes from
    the run's `registry`, which a builder whose `__init__` takes
    `registry` is given too (e.g. dense, for its query style). `feeder` gives the builder the passages' texts
    (default: chunk by chunk, `add`; a parallel build's: `parallel_build`). `named_sha256`: the corpus sha256
    `out` was named by (the index cache's folder), which the bytes read must have."""
    kind, builder_class = _index_builder(registry, kind)
    if chunk_size < 1:
        raise ConfigError(f"--chunk-size {chunk_size}: must be at least 1")
    if split_header is not None and split is None:
        raise ConfigError(
            "--split-header is the metadata text of split documents: pass --split tokens:SIZE:OVERLAP too"
        )
    corpus, out = Path(corpus), Path(out)
    passages = _split_passages(read_corpus(corpus), split, split_header)
    _check_out(out)
    with held_staging(out) as staging:
        _check_replaceable(out, overwrite)  # checked while no other build can end
        with naming(staging):  # a full disk's error names no file of its own
            manifest = _build_into(
                staging,
                builder_class,
                kind,
                corpus,
                passages,
                options or {},
                chunk_size,
                title,
                progress,
                split,
                split_header,
                registry=registry,
                feeder=feeder or add_chunks,
                named_sha256=named_sha256,
            )
            (staging / BUILD_MARK).unlink()
        replaced = set_aside(out) if out.exists() else None  # an index ragbench built (`built_index`)
        staging.rename(out)
    if replaced is not None:
        empty_marked(replaced)
    return manifest


def _index_builder(registry: Registry, kind: str) -> tuple[str, type[IndexBuilder]]:
    """The retriever `kind`'s name (an alias's kind) and the builder of its index; a ConfigError where it has none."""
    kind = registry.entry("retrievers", kind).name
    builder_class = registry.load("retrievers", kind).builder
    if builder_class is None:
        raise ConfigError(
            f"retriever {kind} has no index to build (only retrievers with an index do, "
            "e.g. bm25 or dense; `ragbench list retrievers`)"
        )
    return kind, builder_class


def _split_passages(
    passages: Iterable[Document | RecordError], split: str | None, split_header: str | None
) -> Iterable[Document | RecordError]:
    """`passages`, their documents cut as `split` says (`build_index`); as they are without it."""
    if split is None:
        return passages
    splitter = parse_split(split)  # upstream keeps documents of at most SIZE characters whole
    header = title_header(split_header) if split_header is not None else None
    return chunk_documents(passages, splitter, whole_up_to=splitter.chunk_size, header=header)


def _check_out(out: Path) -> None:
    """A ConfigError where `out` is a file, or its staging folder beside it cannot be written."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a folder; choose a folder (new, or an index's with --overwrite)")
    if unwritable := write_problem(out.with_name(out.name + ".partial")):
        raise ConfigError(f"--out {out}: {unwritable}; choose a folder that can be written")


def _check_replaceable(out: Path, overwrite: bool) -> None:
    """A ConfigError where `out` holds files a build may not replace: no index ragbench built, or no --overwrite."""
    if out.exists() and any(out.iterdir()):
        if not built_index(out):
            raise ConfigError(
                f"--out {out} holds files but no index ragbench built (no {MANIFEST_FILE} it "
                "wrote); --overwrite replaces only an index: choose another folder"
            )
        if not overwrite:
            raise ConfigError(f"--out {out} exists and is not empty; pass --overwrite or choose another folder")


def _build_into(
    folder: Path,
    builder_class: type[IndexBuilder],
    kind: str,
    corpus: Path,
    passages: Iterable[Document | RecordError],
    options: Mapping[str, object],
    chunk_size: int,
    title: bool,
    progress: bool,
    split: str | None = None,
    split_header: str | None = None,
    *,
    registry: Registry,
    feeder: Feeder,
    named_sha256: str | None = None,
) -> Manifest:
    started = time.perf_counter()
    builder = construct(
        builder_class,
        dict(options),
        f"index build --retriever {kind}",
        positional=(folder,),
        injected={"registry": registry},
    )
    docs = DocStoreWriter(folder)
    errors: list[RecordError] = []
    before = corpus_state(corpus)
    with build_progress(corpus.name, kind, " passages", progress) as bar:
        indexed = partial(builder_class.indexed_text, title=title, corpus_format=corpus_format(corpus))
        feeder(builder, stored_texts(chunks(passages, chunk_size, errors), docs, indexed, bar))
    docs.close()
    _check_passages(corpus, docs, len(errors))
    sha256, after = _read_whole(corpus, before, named_sha256)
    manifest = Manifest(
        retriever=kind,
        doc_count=len(docs),
        corpus={
            "path": str(corpus.resolve()),
            "format": corpus_format(corpus),
            "bytes": corpus_bytes(after),
            "sha256": sha256,
            "title": title,
            **({"split": split} if split else {}),
            **({"split_header": split_header} if split and split_header is not None else {}),
        },
        options=builder.finish(),
        bad_records=len(errors),
        errors=[str(e) for e in errors[:KEPT_ERRORS]],
        build_seconds=round(time.perf_counter() - started, 3),
        built_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
    (folder / MANIFEST_FILE).write_text(
        json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return manifest


def _check_passages(corpus: Path, docs: DocStoreWriter, bad_records: int) -> None:
    """A ConfigError where the corpus gave no readable passage, or passages sharing an id."""
    if len(docs) == 0:
        raise ConfigError(f"corpus {corpus} has no readable passages ({bad_records} bad records)")
    if repeated := docs.repeated_ids():
        shown = ", ".join(f"{doc_id!r} ({count} passages)" for doc_id, count in list(repeated.items())[:3])
        raise ConfigError(
            f"corpus {corpus}: {len(repeated)} passage id(s) repeat: {shown}; retrieval metrics match "
            "documents by id, so each passage needs its own: make the ids unique, then build again"
        )


def _read_whole(corpus: Path, before: CorpusState, named_sha256: str | None) -> tuple[str, CorpusState]:
    """The corpus's sha256 and state after it was indexed; a ConfigError where it changed meanwhile (`before`),
    or is not the one the run named its index by (`named_sha256`)."""
    sha256, after = corpus_sha256(corpus), corpus_state(corpus)
    if after != before:  # a download or copy still writing
        raise ConfigError(
            f"corpus {corpus} changed while it was indexed ({corpus_bytes(before)} bytes, now "
            f"{corpus_bytes(after)}): the index would hold neither version; build again once the "
            f"{'folder' if corpus.is_dir() else 'file'} is complete"
        )
    if named_sha256 is not None and sha256 != named_sha256:
        raise ConfigError(
            f"corpus {corpus} changed since the run named its index (by sha256 {named_sha256[:12]}..., now "
            f"{sha256[:12]}...): run again, which names the index of the corpus as it is then"
        )
    return sha256, after


def add_chunks(builder: Any, texts: Iterable[list[str]]) -> None:
    for chunk in texts:
        builder.add(chunk)


def stored_texts(
    chunked: Iterable[list[Document]], docs: DocStoreWriter, indexed: Callable[[Document], str], bar: Any
) -> Iterator[list[str]]:
    """Each chunk's indexed texts (`indexed`: the builder's `indexed_text`), its passages added to the docs store
    first."""
    for chunk in chunked:
        for doc in chunk:
            docs.add(doc)
        yield [indexed(doc) for doc in chunk]
        bar.update(len(chunk))
