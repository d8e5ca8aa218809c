"""FlashRAG's dense retrieval artefacts searched as they are: the faiss index its `Index_Builder` wrote
(`{method}_{faiss_type}.index`, any index type), the JSONL corpus it was built from, and the encoder folder.

As FlashRAG's `DenseRetriever` (flashrag/retriever/retriever.py): queries are encoded by its rules for the
retrieval method (`flashrag_encoder`), `index.search` answers with row numbers of the corpus as `datasets` loads
it (`jsonl_rows`), and the scores are faiss's. What differs: a label of -1 (fewer than k vectors found, e.g. an
IVF index probing few lists) is left out, where FlashRAG shows the corpus's last passage; a bge query's language
is judged per query, where FlashRAG judges the first query of each encoder batch for the whole batch.

Everything that can be checked is checked before the encoder loads: the three paths, the index header (its
dimension and vector count) against the encoder's config.json and the corpus's rows.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import ConfigError, RecordError
from ..._storage.content_digest import content_digest
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import RetrievalError, Retriever
from ..corpus.jsonl_rows import JsonlRows
from ..option_paths import option_path
from .encoder_check import check_encoding
from .flashrag_encoder import (
    MODEL_POOLING,
    POOLINGS,
    FlashRagEncoder,
    model_config,
    model_dimension,
    needs_language_check,
    prefix,
)

LABEL = "retriever faiss_index"
# every faiss index file opens with its type's fourcc ("IxFI": flat inner product, "IHNf": HNSW, "IwFl": IVF ...),
# its dimension (int32) and its vector count (int64)
HEADER = struct.Struct("<4siq")
MAX_DIM = 1 << 16


def index_header(path: Path) -> tuple[int, int]:
    """(dimension, vector count) from a faiss index file's header, without reading the vectors."""
    with open(path, "rb") as handle:
        head = handle.read(HEADER.size)
    if len(head) < HEADER.size:
        raise ConfigError(
            f"{LABEL}: index {path} is {len(head)} bytes, not a faiss index; pass index= the "
            ".index file FlashRAG's index_builder wrote"
        )
    fourcc, dim, count = HEADER.unpack(head)
    if not (fourcc.startswith(b"I") and fourcc.isalnum()) or not 0 < dim <= MAX_DIM or count < 0:
        raise ConfigError(
            f"{LABEL}: index {path} is not a faiss index (it starts with {fourcc!r}); pass index= the "
            ".index file FlashRAG's index_builder wrote"
        )
    return dim, count


def method_name(index: Path, model: str) -> str:
    """FlashRAG's `retrieval_method` for these files: the `{method}` of the index's name `{method}_{faiss_type}.index`
    when it names a model family FlashRAG's rules know, else the model folder's name."""
    method = index.stem.rsplit("_", 1)[0]
    if "_" in index.stem and any(key in method.lower() for key in MODEL_POOLING):
        return method
    return Path(model).expanduser().resolve().name


def check_dimension(model: str, model_dim: int, index: Path, dim: int) -> None:
    if model_dim != dim:
        raise ConfigError(
            f"{LABEL}: model {model} gives {model_dim}-dimensional vectors, index {index} holds "
            f"{dim}-dimensional ones; pass model= the encoder the index was built with"
        )


class FaissIndexRetriever(Retriever):
    """Searches a faiss index FlashRAG built over its JSONL corpus (module docstring).

    `method`: FlashRAG's retrieval_method name, which sets the query prefix, pooling and normalisation
    (default: from the index file's name, else the model folder's); `pooling`, `instruction`, `normalize`
    override what it sets. `query_max_length`, `batch_size`, `fp16`: FlashRAG's retrieval_query_max_length (128),
    retrieval_batch_size (256), retrieval_use_fp16 (True in FlashRAG, which runs on a GPU; off here unless
    asked). `nprobe` (IVF) and `ef_search` (HNSW's efSearch) replace what the index file stores, which is what
    FlashRAG searches with. `mmap`: leave a flat index's vectors on disk, read as searches need them.
    `check_encoder`: refuse an encoder that does not give the index's vector of row 0 (`check_encoder`), its passage
    cut at `passage_max_length` tokens (index_builder's max_length; FlashRAG's docs build with 512)."""

    name = "faiss_index"

    def __init__(
        self,
        index: str | None = None,
        corpus: str | None = None,
        model: str | None = None,
        method: str | None = None,
        pooling: str | None = None,
        instruction: str | None = None,
        normalize: bool | None = None,
        query_max_length: int = 128,
        batch_size: int = 256,
        fp16: bool = False,
        device: str | None = None,
        nprobe: int | None = None,
        ef_search: int | None = None,
        mmap: bool = False,
        check_encoder: bool = True,
        passage_max_length: int = 512,
    ) -> None:
        index_path = option_path(
            LABEL, index, "index", "the .index file FlashRAG's index_builder wrote, e.g. e5_Flat.index"
        )
        corpus_path = option_path(LABEL, corpus, "corpus", "the JSONL corpus the index was built from")
        if not model:
            raise ConfigError(
                f"{LABEL} needs --retriever-arg model=PATH (the encoder the index was built with, "
                "e.g. a local e5-base-v2)"
            )
        dim, count = index_header(index_path)
        model_dim = model_dimension(model_config(model))
        if model_dim is not None:
            check_dimension(model, model_dim, index_path, dim)
        self.method = method or method_name(index_path, model)
        if pooling is not None and pooling not in POOLINGS:
            raise ConfigError(f"{LABEL}: pooling {pooling!r}: choose {', '.join(POOLINGS)}")
        if needs_language_check(self.method, instruction):
            try:
                import langid  # noqa: F401
            except ImportError:
                raise ConfigError(
                    f"{LABEL}: a bge query's instruction depends on its language, which FlashRAG judges "
                    "with langid: pip install langid, or pass instruction="
                ) from None
        self.index_path, self.corpus_path, self.model_path = index_path, corpus_path, model
        self.rows = JsonlRows(corpus_path)
        try:
            self.open(count, mmap, {"nprobe": nprobe, "efSearch": ef_search})
            self.encoder = FlashRagEncoder(
                model, self.method, pooling, instruction, normalize, query_max_length, batch_size, fp16, device
            )
            if model_dim is None:  # its config.json names none: the dimension of a vector it gives
                check_dimension(model, self.encoder.encode(["dimension"], is_query=True).shape[-1], index_path, dim)
            self.encoder_check = self.check_encoder(passage_max_length) if check_encoder else "off"
        except BaseException:
            self.rows.close()
            raise
        self.max_batch_size = int(batch_size)

    def open(self, count: int, mmap: bool, search_params: dict[str, int | None]) -> None:
        """The corpus's rows against the index's vector count, its first row, then the index itself."""
        if len(self.rows) != count:
            raise ConfigError(
                f"{LABEL}: index {self.index_path} holds {count} vectors, corpus {self.corpus_path} "
                f"{len(self.rows)} rows; pass the corpus the index was built from (FlashRAG numbers its "
                "non-blank lines)"
            )
        try:
            if count:
                self.rows.get(0)
        except RecordError as exc:
            raise ConfigError(
                f'{LABEL}: corpus {exc}; pass a FlashRAG JSONL corpus ({{"id", "contents"}} a line)'
            ) from None
        self.index = self.read_index(mmap)
        self.check_ids()
        self.search_params = {key: value for key, value in search_params.items() if value is not None}
        self.set_search_params()

    def check_encoder(self, passage_max_length: int) -> str:
        """The run's encoder gives the index's vectors: row 0's passage, encoded as FlashRAG's index_builder encodes
        passages, points where the index's vector 0 does, so an encoder of the same dimension that is not the
        index's (bge-base for an e5-base index, another pooling or prefix) is refused, not searched. Skipped, and
        said so, where the index cannot give a vector back as stored (IVF lists, product-quantised codes)."""
        if self.index.ntotal == 0:
            return "skipped (empty index)"
        kind = type(self.index).__name__
        try:
            if "PQ" in kind:
                raise RuntimeError("product-quantised codes")
            stored = self.index.reconstruct(0)
        except RuntimeError as exc:
            return f"skipped ({kind} gives back no stored vector: {str(exc).strip().splitlines()[0][:80]})"
        record = self.rows.record(0)
        contents = record.get("contents", record.get("text"))  # FlashRAG's load_corpus: `text` where no `contents`
        if not isinstance(contents, str):
            return "skipped (row 0 has no contents)"
        vector = self.encoder.encode([contents], is_query=False, max_length=passage_max_length)[0]
        cosine = check_encoding(
            vector,
            stored,
            f"{LABEL}: model {self.model_path} ({self.method}: pooling {self.encoder.pooling}, passage prefix "
            f"{prefix(self.method, self.encoder.instruction, False, '')!r})",
            f"index {self.index_path}",
            "row 0",
            "pass the model, method=, pooling= or instruction= the index was built with (passage_max_length= its "
            "max_length), or check_encoder=false",
        )
        return f"row 0 at cosine {cosine:.4f}"

    def read_index(self, mmap: bool) -> Any:
        try:
            import faiss
        except ImportError:
            raise ConfigError(f"{LABEL} needs faiss: pip install faiss-cpu (or faiss-gpu)") from None
        try:
            found = faiss.read_index(str(self.index_path), faiss.IO_FLAG_MMAP_IFC if mmap else 0)
        except RuntimeError as exc:  # faiss's own error text runs over many lines: its first is the cause
            cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(
                f"{LABEL}: index {self.index_path} could not be read ({cause}); it is damaged or not "
                "a faiss index: copy or build it again"
            ) from None
        return found

    def check_ids(self) -> None:
        """The index answers with row numbers of the corpus: one that maps its vectors to ids of its own
        (`IndexIDMap`) maps them to rows 0..rows-1, or a search would show another row, or none."""
        if hasattr(self.index, "id_map"):
            import faiss

            ids = faiss.vector_to_array(self.index.id_map)
            bad = np.flatnonzero((ids < 0) | (ids >= len(self.rows)))
            if len(bad):
                raise ConfigError(
                    f"{LABEL}: index {self.index_path} maps vector {bad[0]} to id {ids[bad[0]]}, not a row of "
                    f"corpus {self.corpus_path} (0..{len(self.rows) - 1}): it is damaged or of another corpus; pass "
                    "the index built from it"
                )

    def set_search_params(self) -> None:
        import faiss

        space = faiss.ParameterSpace()
        for name, value in self.search_params.items():
            option = "ef_search" if name == "efSearch" else name
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{LABEL}: {option}={value!r}: expected a whole number >= 1")
            try:
                space.set_index_parameter(self.index, name, value)
            except RuntimeError:
                raise ConfigError(
                    f"{LABEL}: {option}= does not apply to index {self.index_path} "
                    f"({type(self.index).__name__}): nprobe is an IVF index's, ef_search an HNSW "
                    "index's"
                ) from None

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        if k == 0 or not queries:
            return [[] for _ in queries]
        scores, labels = self.index.search(self.encoder.encode(queries, is_query=True), k)
        return self.documents(labels, scores)

    def documents(self, labels: Any, scores: Any) -> list[list[Document]]:
        """Each query's rows `labels` scored `scores` (its -1 labels left out) as documents of the corpus."""
        try:
            return [
                [self.rows.get(int(label), float(score)) for label, score in zip(row, row_scores) if label >= 0]
                for row, row_scores in zip(labels, scores)
            ]
        except RecordError as exc:
            raise RetrievalError(f"{LABEL}: corpus {exc}") from None

    def metadata(self) -> JsonObject:
        encoder = self.encoder
        return {
            "retriever": self.name,
            "index": str(self.index_path.resolve()),
            "index_type": type(self.index).__name__,
            "vectors": int(self.index.ntotal),
            "dim": int(self.index.d),
            "corpus": str(self.corpus_path.resolve()),
            "model": str(Path(self.model_path).expanduser().resolve()),
            "method": self.method,
            "pooling": encoder.pooling,
            "query_prefix": prefix(self.method, encoder.instruction, True, ""),
            "normalize": encoder.normalize,
            "query_max_length": encoder.max_length,
            "fp16": self.encoder_fp16,
            "encoder_check": self.encoder_check,
            **{("ef_search" if key == "efSearch" else key): value for key, value in self.search_params.items()},
        }

    @property
    def encoder_fp16(self) -> bool:
        return bool(next(self.encoder.model.parameters()).dtype.itemsize == 2)  # a torch dtype's size

    def contents(self) -> JsonObject:
        """The files' contents (sampled: `content_digest`), so a resumed run searches the same index and corpus
        with the same encoder wherever they were moved."""
        return {
            "index": content_digest(self.index_path),
            "corpus": content_digest(self.corpus_path),
            "model": content_digest(self.model_path),
            "rows": len(self.rows),
        }

    def close(self) -> None:
        self.rows.close()
