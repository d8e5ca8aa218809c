"""A collection of a chromadb persistent folder (the CRAG-MM search indexes on the hub are such folders), read
without chromadb: its ids and metadata from `chroma.sqlite3` in `collection.get()`'s order (the metadata
segment's rows by insertion), its vectors from the HNSW segment's `data_level0.bin` (hnswlib's layout; labels to
ids from `index_metadata.pickle`, a pickle of plain dicts) and from the write-ahead queue's later entries (what
chromadb had not yet flushed into the HNSW files). A search walks the saved graph where it holds the whole
collection; otherwise it compares every vector.

Nothing in the folder is written, nor made: SQLite opens `chroma.sqlite3` as immutable (`?mode=ro&immutable=1`: no
lock, no `-shm` or `-wal` file beside it, which a read-only open of a database in WAL mode still makes). Where a
`-wal` or `-journal` file holds writes not yet in the database (a chromadb that did not close), the database and it
are copied to a scratch folder and read there, so that those writes are read and the folder is left as it was.
"""

from __future__ import annotations

import json
import pickle
import shutil
import sqlite3
import struct
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.api import ConfigError
from ragbench.api.retrieval import RetrievalError

from .hnsw_graph import GraphDamage, HnswGraph

ADD, UPDATE, UPSERT, DELETE = 0, 1, 2, 3  # chromadb's Operation, as the queue stores it
BLOCK = 65536  # vectors copied or normalised at a time


@dataclass
class Collection:
    """Ids and metadata in `get()`'s order; the vectors (unit length, float32): each id's at its row, or, where the
    graph is searched, the graph's own (mapped from its file, at `element_rows`' positions)."""

    ids: list[str]
    metadatas: list[dict[str, Any]]
    vectors: np.ndarray
    space: str
    version: str  # the collection's id and its last write's sequence number: any write to the index changes it
    graph: HnswGraph | None  # the persisted HNSW graph, when it holds the whole collection (nothing queued since)
    element_rows: np.ndarray  # each graph element's row in `ids` (-1: not in the collection)
    source: str = ""  # the option that named the folder, and the folder (`image_index=DIR`), for messages

    def nearest(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        """The top `k` rows per query, each with its score `1 - cosine distance`: chromadb's HNSW search where the
        graph holds the collection, else every vector compared (as chromadb's brute-force buffer does). A damaged
        graph met on the way is a RetrievalError of one line."""
        if self.graph is None:
            return exact_nearest(queries, self.vectors, k)
        try:
            return [
                [
                    (int(self.element_rows[element]), 1.0 - float(distance))
                    for element, distance in self.graph.search(query, k)
                ]
                for query in queries.astype(np.float32)
            ]
        except GraphDamage as exc:
            raise RetrievalError(f"retriever cragmm_search: {damaged(self.source, exc)}") from None


def exact_nearest(queries: np.ndarray, vectors: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
    """The top `k` rows of `vectors` per query by float32 inner product, each score `1 - (1 - dot)` as chromadb's
    cosine distance makes it; ties in row order. One product per query, so that a query's scores do not depend on
    the others searched with it (a matrix product sums in another order for another number of rows)."""
    found: list[list[tuple[int, float]]] = []
    for query in queries.astype(np.float32):
        if len(vectors) == 0 or k <= 0:
            found.append([])
            continue
        distances = np.float32(1) - vectors @ query
        order = np.argsort(distances, kind="stable")[:k]
        found.append([(int(index), 1.0 - float(distances[index])) for index in order])
    return found


class PlainUnpickler(pickle.Unpickler):
    """chromadb's `index_metadata.pickle` holds dicts of strings and ints only: anything else is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not a plain value")


def read_collection(folder: str, name: str, what: str) -> Collection:
    """The collection `name` of the chromadb folder `folder` (`what` names the option, for messages)."""
    base = Path(folder).expanduser()
    database = base / "chroma.sqlite3"
    if not database.is_file():
        raise ConfigError(
            f"{what}={folder}: no chroma.sqlite3 there; name the folder `huggingface-cli download --repo-type "
            "dataset` wrote for the CRAG-MM search index"
        )
    try:
        with opened(database) as connection:
            collection = _read(connection, base, name, what)
    except GraphDamage as exc:
        raise ConfigError(damaged(f"{what}={folder}", exc)) from None
    except (sqlite3.Error, OSError, pickle.UnpicklingError, struct.error, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{what}={folder}: the chromadb folder could not be read ({type(exc).__name__}: {exc}); download it again"
        ) from None
    collection.source = f"{what}={folder}"
    return collection


def damaged(source: str, exc: GraphDamage) -> str:
    return (
        f"{source}: its HNSW graph is damaged ({exc.file.name} in {exc.file.parent}: {exc.problem}); download the "
        "index folder again (a --resume reads the same files)"
    )


@contextmanager
def opened(database: Path) -> Iterator[sqlite3.Connection]:
    """`database` opened to be read: immutable, where nothing is pending beside it; else a scratch copy of it and
    of its pending `-wal` or `-journal`, where SQLite reads (or rolls back) those writes."""
    pending = [
        side
        for side in (database.with_name(database.name + "-wal"), database.with_name(database.name + "-journal"))
        if side.is_file() and side.stat().st_size > 0
    ]
    if not pending:
        connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            yield connection
        finally:
            connection.close()
        return
    with tempfile.TemporaryDirectory(prefix="ragbench-chroma-") as scratch:
        copy = Path(scratch) / database.name
        for source in (database, *pending):
            shutil.copyfile(source, copy.with_name(source.name))
        connection = sqlite3.connect(copy)
        try:
            yield connection
        finally:
            connection.close()


def _read(connection: sqlite3.Connection, base: Path, name: str, what: str) -> Collection:
    found = connection.execute("SELECT id FROM collections WHERE name = ?", (name,)).fetchone()
    if found is None:
        names = [row[0] for row in connection.execute("SELECT name FROM collections")]
        raise ConfigError(f"{what}={base}: no collection {name!r} in that chromadb folder (it has {names})")
    collection = found[0]
    segments = dict(connection.execute("SELECT scope, id FROM segments WHERE collection = ?", (collection,)))
    space_row = connection.execute(
        "SELECT str_value FROM collection_metadata WHERE collection_id = ? AND key = 'hnsw:space'", (collection,)
    ).fetchone()
    space = space_row[0] if space_row else "l2"
    if space != "cosine":
        raise ConfigError(f"{what}={base}: collection {name!r} has hnsw:space {space}; CRAG-MM's indexes are cosine")
    ids, metadatas = _metadata(connection, segments["METADATA"])
    graph, rows = _hnsw(base / segments["VECTOR"], ef_search(connection, collection))
    stored = graph.vectors if graph is not None else np.zeros((0, 0), dtype=np.float32)
    where: dict[str, int | np.ndarray] = dict(rows)  # each id's row of `stored`, or its queued vector
    seen_row = connection.execute("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", (segments["VECTOR"],))
    seen = (seen_row.fetchone() or (0,))[0]
    if isinstance(seen, bytes):  # chromadb 0.4's big-endian blob
        seen = int.from_bytes(seen, "big")
    queued = connection.execute(
        "SELECT id, operation, vector, encoding FROM embeddings_queue WHERE topic LIKE ? AND seq_id > ? "
        "ORDER BY seq_id",
        (f"%{collection}", seen),
    )
    changed = False
    for id_, operation, vector, encoding in queued:
        changed = True
        if operation == DELETE:
            where.pop(id_, None)
        elif vector is not None and (operation != ADD or id_ not in where):
            if encoding != "FLOAT32":
                raise ValueError(f"queued vector of {id_} encoded {encoding}")
            where[id_] = np.frombuffer(vector, dtype="<f4")
    last = connection.execute(
        "SELECT max(seq_id) FROM embeddings_queue WHERE topic LIKE ?", (f"%{collection}",)
    ).fetchone()[0]
    element_rows = np.full(len(stored), -1, dtype=np.int64)
    if graph is not None and not changed:
        row_of = {id_: row for row, id_ in enumerate(ids)}
        for id_, element in rows.items():
            element_rows[element] = row_of.get(id_, -1)
    usable = None
    if graph is not None and not changed and all(row >= 0 or graph.deleted(e) for e, row in enumerate(element_rows)):
        usable = graph  # every live element is a row of the collection
    vectors = stored if usable is not None else _matrix(ids, where, stored)  # the graph's: mapped, not copied
    return Collection(ids, metadatas, vectors, space, f"{collection}@{last}", usable, element_rows)


def ef_search(connection: sqlite3.Connection, collection: str) -> int:
    """The collection's ef_search: its configuration's, else its legacy `hnsw:search_ef` metadata, else chromadb's
    default, 100."""
    configured = connection.execute("SELECT config_json_str FROM collections WHERE id = ?", (collection,)).fetchone()
    hnsw = (json.loads(configured[0] or "{}") if configured else {}).get("hnsw") or {}
    if hnsw.get("ef_search") is not None:
        return int(hnsw["ef_search"])
    legacy = connection.execute(
        "SELECT int_value FROM collection_metadata WHERE collection_id = ? AND key = 'hnsw:search_ef'", (collection,)
    ).fetchone()
    return int(legacy[0]) if legacy and legacy[0] is not None else 100


def _matrix(ids: list[str], where: dict[str, int | np.ndarray], stored: np.ndarray) -> np.ndarray:
    """The ids' unit vectors in one float32 matrix, gathered from the HNSW file's rows a block at a time (the file
    is mapped, not read whole) and from the queue."""
    missing = [id_ for id_ in ids if id_ not in where]
    if missing:
        raise ValueError(f"{len(missing)} ids without a vector, {missing[0]!r} first")
    sources = [where[id_] for id_ in ids]
    dim = stored.shape[1] if len(stored) else next((len(v) for v in sources if isinstance(v, np.ndarray)), 0)
    matrix = np.empty((len(ids), dim), dtype=np.float32)
    in_file = np.array([i for i, source in enumerate(sources) if not isinstance(source, np.ndarray)], dtype=np.int64)
    file_rows = np.array([sources[i] for i in in_file], dtype=np.int64)
    for start in range(0, len(in_file), BLOCK):
        matrix[in_file[start : start + BLOCK]] = stored[file_rows[start : start + BLOCK]]
    for i, source in enumerate(sources):
        if isinstance(source, np.ndarray):
            matrix[i] = source
    for start in range(0, len(matrix), BLOCK):
        block = matrix[start : start + BLOCK]
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        block /= np.where(norms > 0, norms, 1)
    return matrix


def _metadata(connection: sqlite3.Connection, segment: str) -> tuple[list[str], list[dict[str, Any]]]:
    rows = connection.execute(
        "SELECT e.id, e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
        "FROM embeddings e LEFT JOIN embedding_metadata m ON m.id = e.id WHERE e.segment_id = ? ORDER BY e.id",
        (segment,),
    )
    order: dict[int, str] = {}
    values: dict[int, dict[str, Any]] = {}
    for row_id, embedding_id, key, text, integer, real, boolean in rows:
        order[row_id] = embedding_id
        fields = values.setdefault(row_id, {})
        if key is not None and not key.startswith("chroma:"):
            fields[key] = text if text is not None else integer if integer is not None else real
            if boolean is not None:
                fields[key] = bool(boolean)
    return list(order.values()), [values[row_id] for row_id in order]


def _hnsw(folder: Path, ef: int) -> tuple[HnswGraph | None, dict[str, int]]:
    """The segment's HNSW graph and each id's element in it; none when chromadb never flushed its buffer to the
    files."""
    labels_path = folder / "index_metadata.pickle"
    if not (folder / "header.bin").is_file() or not labels_path.is_file():
        return None, {}
    with labels_path.open("rb") as handle:
        label_to_id: dict[int, str] = PlainUnpickler(handle).load()["label_to_id"]
    graph = HnswGraph(folder, ef)
    rows = {label_to_id[label]: row for row, label in enumerate(graph.labels.tolist()) if label in label_to_id}
    return graph, rows
