"""On-disk indexes: built once from a corpus by `ragbench index build`, memory-mapped by runs.

Folder layout:

    manifest.json       retriever kind, builder options, corpus (path, size, sha256), doc count,
                        bad records, build time and versions; written last, so a folder without
                        it is an unfinished build
    docs.jsonl          the passages, so hits come back with title and text (`docstore`)
    docs.offsets.npy
    <retriever files>   bm25/ (bm25s's own format) or embeddings.npy (dense)

The build streams the corpus in chunks of `chunk_size` passages: the docs store and the
retriever's builder see one chunk at a time and never the whole corpus.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ..._errors import ConfigError, RecordError, one_line_text
from ..._storage.files import naming, write_problem
from ..._storage.jsonl import read_json
from ..._types import Document, JsonObject
from ..._values.options import construct
from ..base import IndexBuilder, Retriever
from ..corpus.chunking import chunk_documents, parse_split, title_header
from ..corpus.identity import CorpusState, corpus_bytes, corpus_sha256, corpus_state
from ..corpus.readers import corpus_format, read_corpus
from .damage import IndexDamage, typed_fields
from .docstore import DOCS_FILE, OFFSETS_FILE, DocStore, DocStoreWriter, check_docstore
from .progress import build_progress
from .removal import empty_marked, set_aside
from .staging import BUILD_MARK, MANIFEST_FILE, held_staging

if TYPE_CHECKING:
    from ..._registry import Registry

INDEX_FORMAT = 1
KEPT_ERRORS = 20  # bad records listed in the manifest (all are counted)
# what reading a file an index build wrote raises when it is missing, cut short or not that file (np.load's
# EOFError, json's ValueError, bm25s's KeyError on a params file without its fields)
INDEX_FILE_ERRORS = (OSError, ValueError, EOFError, KeyError, TypeError)
T = TypeVar("T")
Feeder = Callable[[Any, Iterable[list[str]]], None]  # (builder, chunks' texts): gives the builder the texts
MANIFEST_TYPES: dict[str, tuple[type, ...]] = {
    "retriever": (str,),
    "doc_count": (int,),
    "corpus": (dict,),
    "options": (dict,),
    "bad_records": (int,),
    "errors": (list,),
    "build_seconds": (int, float),
    "built_at": (str,),
}


@dataclass
class Manifest:
    retriever: str
    doc_count: int
    corpus: dict[str, Any]
    options: dict[str, Any]  # what the builder recorded: the settings that change results
    bad_records: int = 0
    errors: list[str] = field(default_factory=list)
    build_seconds: float = 0.0
    built_at: str = ""
    format: int = INDEX_FORMAT

    def to_dict(self) -> JsonObject:
        return asdict(self)

    def run_metadata(self, retriever: str, folder: Path) -> JsonObject:
        """What a run's metadata says of the index at `folder`, built as this manifest says."""
        return {
            "retriever": retriever,
            "index": str(folder.resolve()),
            "doc_count": self.doc_count,
            "corpus": self.corpus,
            "options": self.options,
        }

    def index_contents(self) -> JsonObject:
        """What the index holds: its corpus less where it lay (an index moved gives the same bytes)."""
        corpus = {key: value for key, value in self.corpus.items() if key != "path"}
        return {"doc_count": self.doc_count, "corpus": corpus, "options": self.options}


def built_index(folder: Path) -> bool:
    """Whether `folder` holds an index ragbench built: its manifest, a file (not a link) of the fields a build
    writes. Only such a folder is replaced by `index build --overwrite`."""
    path = folder / MANIFEST_FILE
    if path.is_symlink() or not path.is_file():
        return False
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and all(key in manifest for key in ("retriever", "doc_count", "format"))


def build_hint(kind: str, folder: Path | str) -> str:
    return f"build it with `ragbench index build --corpus FILE --retriever {kind} --out {folder}`"


def read_manifest(folder: str | Path | None, kind: str) -> Manifest:
    """The manifest of an index built for retriever `kind`, or a ConfigError that says what is wrong and
    how to fix it."""
    label = f"retriever {kind}"
    if folder is None:
        raise ConfigError(f"{label} needs --retriever-arg index=DIR; {build_hint(kind, 'DIR')}")
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{label}: index folder {folder} does not exist; {build_hint(kind, folder)}")
    path = folder / MANIFEST_FILE
    if not path.is_file():
        raise ConfigError(
            f"{label}: {folder} is not a ragbench index (no {MANIFEST_FILE}; an unfinished "
            f"build leaves none); {build_hint(kind, folder)}"
        )
    data = read_json(path, f"the {MANIFEST_FILE} ragbench index build wrote; {build_hint(kind, folder)}")
    try:
        manifest = manifest_from(data)
    except IndexDamage as exc:
        raise ConfigError(f"{label}: {path} {exc.problem}; {build_hint(kind, folder)}") from None
    if manifest.retriever != kind:
        raise ConfigError(
            f"{label}: {folder} holds a {manifest.retriever} index, not {kind}; "
            f"use --retriever {manifest.retriever} or {build_hint(kind, folder)}"
        )
    return manifest


def manifest_from(data: Any) -> Manifest:
    """The manifest a build wrote, from the JSON `data` of its file; an IndexDamage naming the file when it is
    not one this ragbench reads (another format, fields missing, unknown or of another type)."""
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise IndexDamage(MANIFEST_FILE, f"has index format {found}, this ragbench reads {INDEX_FORMAT}")
    try:
        manifest = Manifest(**data)
        typed_fields(MANIFEST_FILE, data, MANIFEST_TYPES, required=())
    except TypeError as exc:  # fields missing or unknown
        raise IndexDamage(MANIFEST_FILE, f"is damaged ({one_line_text(str(exc))})") from None
    except IndexDamage as exc:
        raise IndexDamage(MANIFEST_FILE, f"is damaged ({exc.problem})") from None
    if manifest.doc_count < 1:
        raise IndexDamage(
            MANIFEST_FILE, f"is damaged (doc_count {manifest.doc_count}: a build indexes 1 passage or more)"
        )
    return manifest


def rebuild_hint(manifest: Manifest, folder: Path | str, shards: int | None = None) -> str:
    """The command that builds the index of `manifest` into `folder` again (`shards`: as that many shards, by a
    shard-parallel build, `index build --ray --shards S`)."""
    corpus = manifest.corpus if isinstance(manifest.corpus, dict) else {}
    flags = (" --no-title" if corpus.get("title") is False else "") + (
        f" --split {corpus['split']}" if corpus.get("split") else ""
    )
    parallel = f" --ray --shards {shards}" if shards is not None else ""
    return (
        f"build it again: ragbench index build --corpus {corpus.get('path', 'FILE')} --retriever "
        f"{manifest.retriever} --out {folder}{parallel} --overwrite{flags} (and the --build-arg options its "
        f"{MANIFEST_FILE} records)"
    )


class IndexedRetriever(Retriever):
    """A retriever over an index folder: its manifest, its docs store, hits as Documents. What the build
    wrote is checked when it opens, before anything is searched (`check_files`): a file missing, cut short,
    of another shape or type, holding numbers out of range or order, or another number of passages than the
    manifest (a damaged index, or files of two builds) is a ConfigError naming it, never a search over part of
    the corpus or a failure in the middle of a run."""

    # the options the builder records in the manifest that the retriever reads: their types, and those it needs
    option_types: ClassVar[Mapping[str, tuple[type, ...]]] = MappingProxyType({})
    required_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, index: str | Path | None = None) -> None:
        self.manifest = read_manifest(index, self.name)
        self.folder = Path(index)  # type: ignore[arg-type]  # read_manifest rejected None
        self.load("its files", lambda: self.check_files(self.folder, self.manifest))  # before anything loads
        self.docs = self.load(f"{DOCS_FILE} or {OFFSETS_FILE}", lambda: DocStore(self.folder))

    @classmethod
    def check_files(cls, folder: Path, manifest: Manifest) -> None:
        """An IndexDamage naming the first file of the index at `folder` that is not what its build wrote: the
        manifest's options, the docs store; a retriever with files of its own checks them after these."""
        typed_fields(f"{MANIFEST_FILE} options", manifest.options, cls.option_types, cls.required_options)
        check_docstore(folder, manifest.doc_count)

    def load(self, name: str, loader: Callable[[], T]) -> T:
        """What `loader` reads of the index's file(s) `name`; one missing, cut short or not what the build
        wrote is a ConfigError naming it and how to build the index again."""
        try:
            return loader()
        except IndexDamage as exc:
            raise ConfigError(
                f"retriever {self.name}: index {self.folder}: {exc} (damaged, or a file of another build); "
                f"{rebuild_hint(self.manifest, self.folder)}"
            ) from None
        except INDEX_FILE_ERRORS as exc:
            problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            problem = one_line_text(problem)  # a key of a damaged JSON file, named by the loader's TypeError
            raise ConfigError(
                f"retriever {self.name}: index {self.folder}: {name} missing or damaged ({problem}); "
                f"{rebuild_hint(self.manifest, self.folder)}"
            ) from None

    def hits(self, ids: Iterable[Iterable[int]], scores: Iterable[Iterable[float]]) -> list[list[Document]]:
        return [[self.docs.get(i, float(s)) for i, s in zip(row, row_scores)] for row, row_scores in zip(ids, scores)]

    def metadata(self) -> JsonObject:
        return self.manifest.run_metadata(self.name, self.folder)

    def contents(self) -> JsonObject:
        return self.manifest.index_contents()

    def close(self) -> None:
        self.docs.close()


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
