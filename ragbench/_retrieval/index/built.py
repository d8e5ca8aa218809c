"""On-disk indexes: built once from a corpus by `ragbench index build`, memory-mapped by runs.

Folder layout:

    manifest.json       retriever kind, builder options, corpus (path, size, sha256), doc count,
                        bad records, build time and versions; written last, so a folder without
                        it is an unfinished build
    docs.jsonl          the passages, so hits come back with title and text (`docstore`)
    docs.offsets.npy
    <retriever files>   bm25/ (bm25s's own format) or embeddings.npy (dense)

A built folder's manifest (`Manifest`, read back checked) and the retriever over the folder (`IndexedRetriever`,
its files checked as it opens); the build that writes it is ragbench._retrieval.index.building.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ..._errors import ConfigError, one_line_text
from ..._storage.jsonl import read_json
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import Retriever
from .damage import IndexDamage, typed_fields
from .docstore import DOCS_FILE, OFFSETS_FILE, DocStore, check_docstore
from .staging import MANIFEST_FILE

if TYPE_CHECKING:
    pass

INDEX_FORMAT = 1
# what reading a file an index build wrote raises when it is missing, cut short or not that file (np.load's
# EOFError, json's ValueError, bm25s's KeyError on a params file without its fields)
INDEX_FILE_ERRORS = (OSError, ValueError, EOFError, KeyError, TypeError)
T = TypeVar("T")
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
