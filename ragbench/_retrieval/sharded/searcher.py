"""One shard's search, in the process that serves it (a Ray actor, `actors`; tests call it directly).

It checks that its shard's files are the ones the split wrote (their sizes and content digests, `layout`), loads
only them and answers a batch with each query's top k among its passages, numbered in the
whole corpus, in the unsharded retriever's order and with its scores (the run prepares each batch once, `fronts`):
- dense: the queries' vectors times its rows, `dense.inner_product_top_k`, in the blocks of the whole corpus the
  unsharded search computes (its rows outside the shard zeros), so its scores are the unsharded ones bit for bit;
- bm25: the queries' tokens, scored by bm25s over its postings, `bm25.bm25_top_k`;
- lucene_bm25: the queries' (term number, count), scored by `lucene_bm25.lucene_scores` with the whole index's
  document frequencies and statistics, ranked ties by id (`ranked_by_id`, its passages' global id ranks);
- flashrag_bm25: the queries' words, scored as FlashRAG's bm25s scores them; it answers with every passage its
  numba heap of k ever took (`numba_top_k.pushed`), from which the run replays the whole corpus's heap;
- faiss_index: the queries' vectors searched in its flat index, the batch at once, as the unsharded search does;
- tevatron_dense: its Tevatron shard files in one flat index, each query searched alone, as the unsharded search.
"""

from __future__ import annotations

from typing import Any, TypedDict

import numpy as np

from ..bm25.bm25s_files import read_bm25s_index
from ..bm25.flashrag import word_scores
from ..bm25.numba_top_k import pushed
from ..bm25.retriever import BM25_DIR, bm25_top_k, import_bm25s
from ..dense.retriever import EMBEDDINGS_FILE, inner_product_top_k
from ..index.damage import IndexDamage, read_array, read_json_object, typed_fields
from ..lucene.retriever import FILES_DIR, lucene_cache, lucene_scores, ranked_by_id
from .layout import Shard, check_written
from .split_faiss import SHARD_FILE
from .split_lucene import DOC_FREQS, STATS

TopK = list[tuple[np.ndarray, np.ndarray]]  # a query's (scores, passage numbers), best first


class DenseSearch(TypedDict, total=False):
    """The options of a dense shard's search (`inner_product_top_k`'s), where given: corpus_rows, the whole
    index's passage count, so the shard scores its rows in the blocks the unsharded search does (the same bits)."""

    chunk_rows: int
    backend: str
    corpus_rows: int


class ShardOptions(DenseSearch, total=False):
    """A shard search's own options (its front's `shard_options`): dense's chunk_rows and backend, bm25's and
    flashrag_bm25's mmap, lucene_bm25's k1 and b."""

    mmap: bool
    k1: float
    b: float


LUCENE_STATS: dict[str, tuple[type, ...]] = {"docs_with_terms": (int,), "total_terms": (int,)}


class ShardSearcher:
    """Shard `shard` of a `kind` index; `options` the search's own (dense: chunk_rows, backend; bm25 and
    flashrag_bm25: mmap; lucene_bm25: k1, b)."""

    def __init__(self, kind: str, shard: Shard, options: ShardOptions) -> None:
        self.kind, self.shard, self.options = kind, shard, options
        self.passages = shard.stop - shard.start
        loaders = {
            "dense": self.load_dense,
            "bm25": self.load_bm25,
            "lucene_bm25": self.load_lucene,
            "flashrag_bm25": self.load_flashrag,
            "faiss_index": self.load_faiss,
            "tevatron_dense": self.load_tevatron,
        }
        if kind not in loaders:
            raise ValueError(f"no shard search for {kind} indexes")
        check_written(shard)
        loaders[kind]()

    def load_dense(self) -> None:
        self.embeddings = read_array(self.shard.folder, EMBEDDINGS_FILE)
        if self.embeddings.ndim != 2 or self.embeddings.shape[0] != self.passages:
            raise IndexDamage(EMBEDDINGS_FILE, f"holds {self.embeddings.shape}, not {self.passages} passage rows")

    def load_bm25(self) -> None:
        files = read_bm25s_index(self.shard.folder / BM25_DIR, prefix=f"{BM25_DIR}/")
        self.expect(f"{BM25_DIR}/params.index.json", files.passages)
        self.bm25 = import_bm25s().BM25.load(self.shard.folder / BM25_DIR, mmap=bool(self.options.get("mmap", True)))

    def load_lucene(self) -> None:
        files = self.shard.folder / FILES_DIR
        self.offsets = np.asarray(read_array(files, "offsets.npy"), dtype=np.int64)
        self.postings, self.freqs = read_array(files, "postings.npy"), read_array(files, "freqs.npy")
        self.norms, self.id_ranks = np.asarray(read_array(files, "norms.npy")), read_array(files, "id_ranks.npy")
        self.doc_freqs = np.asarray(read_array(files, DOC_FREQS), dtype=np.int64)
        stats = read_json_object(files, STATS)
        try:
            typed_fields(STATS, stats, LUCENE_STATS, tuple(LUCENE_STATS))
        except IndexDamage as exc:
            raise IndexDamage(f"{FILES_DIR}/{exc.file}", exc.problem) from None
        self.expect(f"{FILES_DIR}/norms.npy", len(self.norms))
        self.expect(f"{FILES_DIR}/id_ranks.npy", len(self.id_ranks))
        if len(self.doc_freqs) != len(self.offsets) - 1 or int(self.offsets[-1]) != len(self.postings):
            raise IndexDamage(f"{FILES_DIR}/{DOC_FREQS}", "does not hold one count a term of offsets.npy")
        self.doc_count = int(stats["docs_with_terms"])
        self.cache = lucene_cache(
            self.options.get("k1", 0.9), self.options.get("b", 0.4), self.doc_count, int(stats["total_terms"])
        )

    def load_flashrag(self) -> None:
        files = read_bm25s_index(self.shard.folder, mmap=bool(self.options.get("mmap", True)))
        self.expect("params.index.json", files.passages)
        self.vocab, self.data, self.indices, self.indptr = files.vocab, files.data, files.indices, files.indptr

    def load_faiss(self) -> None:
        import faiss

        path = self.shard.folder / SHARD_FILE
        if not path.is_file():
            raise IndexDamage(SHARD_FILE, "is missing")
        try:
            self.index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC if self.options.get("mmap") else 0)
        except RuntimeError as exc:
            raise IndexDamage(SHARD_FILE, f"could not be read ({(str(exc).strip().splitlines() or [''])[0]})") from None
        self.expect(SHARD_FILE, int(self.index.ntotal))

    def load_tevatron(self) -> None:
        from ..dense.tevatron import flat_index

        self.index, docids = flat_index(list(self.shard.files))
        self.expect(str(self.shard.folder), len(docids))

    def expect(self, file: str, passages: int) -> None:
        if passages != self.passages:
            raise IndexDamage(file, f"holds {passages} passages, not {self.passages}")

    def top_k(self, payload: Any, k: int) -> TopK:
        """Each query's top `k` of this shard, passages numbered in the whole corpus."""
        ranked: TopK
        if self.kind == "dense":
            dense: DenseSearch = {}
            for option in ("chunk_rows", "backend", "corpus_rows"):
                if option in self.options:
                    dense[option] = self.options[option]
            queries = np.asarray(payload, dtype=np.float32)
            scores, ids = inner_product_top_k(queries, self.embeddings, k, first_row=self.shard.start, **dense)
            ranked = list(zip(scores, ids))
        elif self.kind == "bm25":
            ranked = [bm25_top_k(self.bm25, tokens, k) for tokens in payload]
        elif self.kind == "lucene_bm25":
            ranked = [self.lucene_top_k(terms, k) for terms in payload]
        elif self.kind == "flashrag_bm25":
            ranked = [self.flashrag_pushed(words, k) for words in payload]
        elif self.kind == "faiss_index":
            ranked = faiss_rows(*self.index.search(np.asarray(payload, dtype=np.float32), k)) if k else []
            ranked = ranked or [(np.zeros(0, np.float32), np.zeros(0, np.int64)) for _ in payload]
        else:  # tevatron_dense: each query alone, as its searcher searches
            ranked = [faiss_rows(*self.index.search(vector[None, :], k))[0] if k else empty() for vector in payload]
        return [(scores, np.asarray(ids, dtype=np.int64) + self.shard.start) for scores, ids in ranked]

    def lucene_top_k(self, terms: list[tuple[int, int]], k: int) -> tuple[np.ndarray, np.ndarray]:
        doc_freqs = [int(self.doc_freqs[number]) for number, _ in terms]
        docs, scores = ranked_by_id(
            *lucene_scores(terms, doc_freqs, self, self.doc_count, self.cache), self.id_ranks, k
        )
        return scores, docs

    def flashrag_pushed(self, words: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Its passages' scores as `FlashRagBM25Retriever.scores` adds them, and those its numba heap took."""
        if not words:
            return empty()
        scores = word_scores(words, self, self.passages)
        places = pushed(scores, k)
        return scores[places], places


def faiss_rows(scores: np.ndarray, labels: np.ndarray) -> TopK:
    """faiss's answer per query, its -1 labels (fewer vectors than k) left out."""
    return [(row_scores[row >= 0], row[row >= 0].astype(np.int64)) for row_scores, row in zip(scores, labels)]


def empty() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
