"""BM25 with bm25s, built by streaming the corpus and searched from memory-mapped arrays.

bm25s's own `BM25.index` needs every tokenized passage in memory at once (a Python list of
lists: far beyond 24 GB for psgs_w100's 21M passages). The builder here produces the very same
index (bm25s's CSC score matrix, vocabulary and params files, loaded with `BM25.load(mmap=True)`)
in two streaming passes:

1. each chunk is tokenized with bm25s's `Tokenizer` (one growing vocabulary), reduced to
   (passage, term, term frequency) triples spilled to disk, while document frequencies and
   passage lengths accumulate;
2. with the global idf and average length known, each spilled chunk is scored with bm25s's own
   scoring functions and scattered into its columns of the memory-mapped CSC arrays (a
   counting sort: column sizes are the document frequencies).

Scores are bit-identical to `bm25s.BM25().index(...)` on the whole corpus (tests check this).
Defaults follow pyserini's `LuceneSearcher` (k1=0.9, b=0.4, Porter stemming, Lucene's 33 English
stopwords), which ALCE and LLatrieval used for BM25; tokenization is bm25s's (lower-cased words of
2+ characters), not Lucene's analyzer, so scores are close to pyserini's, not equal.
"""

from __future__ import annotations

import itertools
import json
import logging
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from ..._errors import ConfigError
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import IndexBuilder
from ..index.built import IndexedRetriever, Manifest
from ..index.damage import expect_count
from ..index.staging import MANIFEST_FILE
from ..ranking import best_k
from .bm25s_files import INDPTR, PARAMS, VOCAB, read_bm25s_index

BM25_DIR = "bm25"
SPILL_DIR = "bm25.spill"
METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


def import_bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:
        raise ConfigError("the bm25 retriever needs bm25s and PyStemmer: pip install 'ragbench[retrieval]'") from exc
    # bm25s sets its own logger to DEBUG on import: under any root handler (ROUGE's absl logging adds one) every
    # per-example index of example_bm25 printed "Building index..."; its warnings still show
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


def make_stemmer(name: str | None) -> Any:
    """A PyStemmer stemmer by algorithm name ("porter", "english" ...), or None for "none"."""
    if name in (None, "", "none"):
        return None
    try:
        import Stemmer
    except ImportError as exc:
        raise ConfigError(
            "bm25 stemming needs PyStemmer: pip install 'ragbench[retrieval]' (or --build-arg stemmer=none)"
        ) from exc
    try:
        return Stemmer.Stemmer(name)
    except KeyError as exc:
        raise ConfigError(
            f"bm25 stemmer '{name}' is unknown; choose one of {', '.join(Stemmer.algorithms())} or none"
        ) from exc


def jieba_words(text: str) -> list[str]:
    """jieba's precise-mode words, whitespace dropped (`tokenizer=jieba`, for Chinese corpora such as
    OmniEval's; bm25s's default regex keeps only runs of 2+ word characters)."""
    try:
        import jieba
    except ImportError as exc:
        raise ConfigError(f"bm25 tokenizer=jieba needs jieba ({exc}); run `pip install ragbench[omnieval]`") from exc
    jieba.setLogLevel(60)
    return [word for word in jieba.cut(text) if word.strip()]


TOKENIZERS = ("regex", "jieba")


def make_tokenizer(stopwords: str, stemmer: str, tokenizer: str) -> Any:
    """bm25s's `Tokenizer` with these settings (`BM25Builder`'s), its vocabulary empty."""
    bm25s = import_bm25s()
    if tokenizer not in TOKENIZERS:
        raise ConfigError(f"bm25 tokenizer '{tokenizer}' is unknown; choose one of {', '.join(TOKENIZERS)}")
    splitter = {"splitter": jieba_words} if tokenizer == "jieba" else {}
    try:
        return bm25s.tokenization.Tokenizer(stopwords=stopwords, stemmer=make_stemmer(stemmer), **splitter)
    except ValueError as exc:
        raise ConfigError(f"bm25 stopwords '{stopwords}': {exc}") from exc


def token_ids(tokenizer: Any, texts: list[str]) -> list[list[int]]:
    """The texts' term numbers, `tokenizer`'s vocabulary growing with their new words. allow_empty=False: a passage
    without tokens has length 0 and no entries, as with bm25s.tokenize (whose default `allow_empty=True` adds
    nothing, a quirk of its code)."""
    ids: list[list[int]] = tokenizer.tokenize(
        texts, update_vocab=True, return_as="ids", show_progress=False, allow_empty=False
    )
    return ids


def id_triples(ids: list[list[int]]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The (passage, term, term frequency) triples of passages' term numbers, sorted by passage (numbered from 0)
    then term, and the passages' lengths."""
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    terms = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
    docs = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
    pairs, counts = np.unique((docs << 32) | terms, return_counts=True)
    triples = {
        "doc": (pairs >> 32).astype(np.int32),
        "term": (pairs & 0xFFFFFFFF).astype(np.int32),
        "tf": counts.astype(np.float32),
    }
    return triples, lengths


class BM25Builder(IndexBuilder):
    """Writes bm25s's index files into `files_dir` of the index folder (module docstring)."""

    files_dir = BM25_DIR
    empty_token = True  # bm25s's `index()` of token lists adds a "" term; of a Tokenizer's ids (FlashRAG's) it does not
    backend = "numpy"  # what params.index.json records (`BM25.load` searches with it)
    int32_pointers = False  # bm25s 0.3 writes indptr as int64, 0.2 (FlashRAG's) as int32

    def __init__(
        self,
        folder: Path,
        k1: float = 0.9,
        b: float = 0.4,
        method: str = "lucene",
        stopwords: str = "en",
        stemmer: str = "porter",
        delta: float = 0.5,
        tokenizer: str = "regex",
    ) -> None:
        super().__init__(folder)
        if method not in METHODS:
            raise ConfigError(f"bm25 method '{method}' is unknown; choose one of {', '.join(METHODS)}")
        self.params = {"k1": float(k1), "b": float(b), "delta": float(delta), "method": method}
        self.stopwords, self.stemmer_name, self.tokenizer_name = stopwords, stemmer, tokenizer
        self.tokenizer = make_tokenizer(stopwords, stemmer, tokenizer)
        self.spill = folder / SPILL_DIR
        self.spill.mkdir()
        self.chunk_files: list[Path] = []
        self.lengths: list[np.ndarray] = []
        self.doc_freqs = np.zeros(0, dtype=np.int64)
        self.n_docs = 0

    def add(self, texts: list[str]) -> None:
        self.add_postings(*id_triples(token_ids(self.tokenizer, texts)))

    def add_postings(self, triples: dict[str, np.ndarray], lengths: np.ndarray) -> None:
        """The next chunk's (passage, term, term frequency) triples, passages numbered from 0 within the chunk and
        terms as `self.tokenizer` numbers them, and the chunk's passage lengths (`id_triples`)."""
        spilled: dict[str, Any] = {**triples, "doc": (triples["doc"] + self.n_docs).astype(np.int32)}
        path = self.spill / f"chunk{len(self.chunk_files):06d}.npz"
        np.savez(path, **spilled)
        self.chunk_files.append(path)
        vocab_size = len(self.tokenizer.get_vocab_dict())
        self.doc_freqs = np.pad(self.doc_freqs, (0, vocab_size - len(self.doc_freqs)))
        self.doc_freqs += np.bincount(spilled["term"], minlength=vocab_size)
        self.lengths.append(lengths.astype(np.int32))
        self.n_docs += len(lengths)

    def finish(self) -> JsonObject:
        lengths = np.concatenate(self.lengths)
        vocab = dict(self.tokenizer.get_vocab_dict())
        corpus = CorpusStats(self.doc_freqs, self.n_docs, float(lengths.mean()))  # bm25s's mean, in float64
        postings = self.write_files(vocab, corpus, np.arange(len(self.doc_freqs)))
        return self.options(len(vocab), postings)

    def options(self, vocabulary: int, postings: int) -> JsonObject:
        """What the manifest records of a build of `vocabulary` terms and `postings` postings."""
        return {
            **self.params,
            "stopwords": self.stopwords,
            "stemmer": self.stemmer_name,
            "tokenizer": self.tokenizer_name,
            "vocabulary": vocabulary,
            "postings": postings,
            "bm25s": import_bm25s().__version__,
        }

    def write_files(self, vocab: dict[str, int], corpus: CorpusStats, numbers: np.ndarray) -> int:
        """bm25s's files of this build's passages into `files_dir`, terms numbered `numbers[term]` in `vocab` (this
        build's own, or the whole corpus's of which this build is a shard), scored with `corpus`'s statistics
        (this build's, or the whole corpus's); the postings written."""
        out = self.folder / self.files_dir
        out.mkdir(exist_ok=True)
        scorer = _Scoring.of(self.params, corpus)
        indptr = self._write_postings(out, len(vocab), numbers, scorer)
        whole_postings = int(corpus.doc_freqs.sum())  # int32 pointers as the whole index's
        np.save(
            out / "indptr.csc.index.npy",
            indptr.astype(np.int32) if self.int32_pointers and whole_postings < 2**31 else indptr,
        )
        if scorer.nonoccurrence is not None:
            np.save(out / "nonoccurrence_array.index.npy", scorer.nonoccurrence)
        self._write_vocab_and_params(out, vocab)
        shutil.rmtree(self.spill)
        return int(indptr[-1])

    def _write_postings(self, out: Path, n_vocab: int, numbers: np.ndarray, scorer: _Scoring) -> np.ndarray:
        """The score and passage arrays of the CSC matrix, column by column from the spilled chunks; its pointers."""
        lengths = np.concatenate(self.lengths)
        counts = np.zeros(n_vocab, dtype=np.int64)
        np.add.at(counts, numbers[: len(self.doc_freqs)], self.doc_freqs)
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        data = np.lib.format.open_memmap(out / "data.csc.index.npy", "w+", np.float32, (int(indptr[-1]),))
        indices = np.lib.format.open_memmap(out / "indices.csc.index.npy", "w+", np.int32, (int(indptr[-1]),))
        heads = indptr[:-1].copy()
        for path in self.chunk_files:
            with np.load(path) as chunk:
                docs, terms, tf = chunk["doc"], numbers[chunk["term"]], chunk["tf"]
            scores = scorer.scores(terms, tf, lengths[docs])
            order = np.argsort(terms, kind="stable")  # column-major, passages ascending in a column
            terms = terms[order]
            columns, starts, sizes = np.unique(terms, return_index=True, return_counts=True)
            slots = heads[terms] + (np.arange(len(terms)) - np.repeat(starts, sizes))
            data[slots] = scores[order].astype(np.float32)
            indices[slots] = docs[order]
            heads[columns] += sizes
        data.flush()
        indices.flush()
        del data, indices
        return indptr

    def _write_vocab_and_params(self, out: Path, vocab: dict[str, int]) -> None:
        """bm25s's vocab.index.json and params.index.json of this build."""
        n_vocab = len(vocab)
        if self.empty_token:
            vocab = {**vocab}
            vocab.setdefault("", n_vocab)  # bm25s's index() adds this empty token the same way
        (out / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        params = {
            **self.params,
            "idf_method": self.params["method"],
            "dtype": "float32",
            "int_dtype": "int32",
            "num_docs": self.n_docs,
            "version": import_bm25s().__version__,
            "backend": self.backend,
        }
        (out / "params.index.json").write_text(json.dumps(params, indent=4), encoding="utf-8")


@dataclass(frozen=True)
class _Scoring:
    """bm25s's scorers of a build's method and parameters, with the corpus's statistics: a term's idf, the term
    frequency scorer, and (bm25l, bm25+) the score of a term a passage lacks."""

    params: Mapping[str, Any]
    avg_len: float
    idf: np.ndarray
    tfc_scorer: Any
    nonoccurrence: np.ndarray | None

    @classmethod
    def of(cls, params: Mapping[str, Any], corpus: CorpusStats) -> _Scoring:
        import_bm25s()
        from bm25s import scoring

        method, k1, b, delta = (params[key] for key in ("method", "k1", "b", "delta"))
        doc_freqs = dict(enumerate(corpus.doc_freqs.tolist()))
        idf = scoring._build_idf_array(doc_freqs, corpus.n_docs, scoring._select_idf_scorer(method), "float32")
        tfc_scorer = scoring._select_tfc_scorer(method)
        nonoccurrence = None
        if method in ("bm25l", "bm25+"):
            nonoccurrence = scoring._build_nonoccurrence_array(
                doc_freqs,
                corpus.n_docs,
                scoring._select_idf_scorer(method),
                tfc_scorer,
                corpus.avg_len,
                corpus.avg_len,
                k1,
                b,
                delta,
                "float32",
            )
        return cls(params, corpus.avg_len, idf, tfc_scorer, nonoccurrence)

    def scores(self, terms: np.ndarray, tf: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """bm25s scores one passage at a time with scalar lengths; the same float64 operations on arrays give
        the same bits."""
        k1, b, delta = (self.params[key] for key in ("k1", "b", "delta"))
        scores: np.ndarray = self.idf[terms] * self.tfc_scorer(
            tf_array=tf, l_d=lengths, l_avg=self.avg_len, k1=k1, b=b, delta=delta
        )
        if self.nonoccurrence is not None:
            scores -= self.nonoccurrence[terms]
        return scores


@dataclass(frozen=True)
class CorpusStats:
    """What BM25 scores a passage with beyond its own terms: each term's passages (by term number), the passages
    and their average length."""

    doc_freqs: np.ndarray
    n_docs: int
    avg_len: float


class BM25Retriever(IndexedRetriever):
    """bm25s over an index from `ragbench index build --retriever bm25` (memory-mapped).

    Queries are tokenized like the passages were (`bm25s.tokenize` with the index's stopwords and
    stemmer); hits are the top k of bm25s's scores among the passages that hold one of the query's words,
    ties by passage number (`ranking.best_k`): fewer than k when fewer passages match, none when no word
    of the query is in the index or it analyses to nothing (empty, stopwords alone, one-letter words), as
    pyserini's search does; not bm25s's padding of the corpus's first passages at score 0, which a reader
    would be shown as if they were found (`lucene_bm25` is pyserini's in every case).
    """

    name = "bm25"
    builder = BM25Builder

    option_types: ClassVar[Mapping[str, tuple[type, ...]]] = MappingProxyType(
        {
            "stopwords": (str, list, type(None)),
            "stemmer": (str, type(None)),
            "tokenizer": (str,),
            "vocabulary": (int,),
            "postings": (int,),
        }
    )
    required_options = ("stopwords", "stemmer", "vocabulary", "postings")

    def __init__(self, index: str | None = None, mmap: bool = True) -> None:
        super().__init__(index)
        bm25s = import_bm25s()
        # its arrays and vocabulary checked (`check_files`): what bm25s refuses now is a value of its params
        self.bm25 = self.load(f"{BM25_DIR}/{PARAMS}", lambda: bm25s.BM25.load(self.folder / BM25_DIR, mmap=bool(mmap)))
        self.stopwords = self.manifest.options["stopwords"]
        self.stemmer = make_stemmer(self.manifest.options["stemmer"])
        self.jieba = self.manifest.options.get("tokenizer") == "jieba"

    @classmethod
    def check_files(cls, folder: Path, manifest: Manifest) -> None:
        """The docs store, then bm25s's files (`bm25s_files`) and their counts against the manifest's: bm25s's
        vocabulary holds one more word than the build's, its empty word, numbered past the last term."""
        super().check_files(folder, manifest)
        files = read_bm25s_index(folder / BM25_DIR, prefix=f"{BM25_DIR}/")
        terms = manifest.options["vocabulary"]
        expect_count(f"{BM25_DIR}/{PARAMS}", "passages", files.passages, manifest.doc_count, MANIFEST_FILE)
        expect_count(f"{BM25_DIR}/{INDPTR}", "postings", files.postings, manifest.options["postings"], MANIFEST_FILE)
        expect_count(f"{BM25_DIR}/{INDPTR}", "terms", files.terms, terms, MANIFEST_FILE)
        expect_count(f"{BM25_DIR}/{VOCAB}", "words and the empty word", len(files.vocab) - 1, terms, MANIFEST_FILE)

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        tokens = query_tokens(queries, self.stopwords, self.stemmer, self.jieba)
        ranked = [bm25_top_k(self.bm25, query, k) for query in tokens]
        return self.hits([ids for _, ids in ranked], [scores for scores, _ in ranked])


def query_tokens(queries: list[str], stopwords: Any, stemmer: Any, jieba: bool) -> list[list[str]]:
    """The queries tokenized as the index's passages were (its stopwords, stemmer and tokenizer)."""
    bm25s = import_bm25s()
    if jieba:  # the builder's Tokenizer steps: lower, split, drop stopwords, stem
        stop = set(bm25s.tokenization._infer_stopwords(stopwords) or ())
        words = [[w for w in jieba_words(q.lower()) if w not in stop] for q in queries]
        return [stemmer.stemWords(ws) if stemmer else ws for ws in words]
    tokens: list[list[str]] = bm25s.tokenize(
        queries, stopwords=stopwords, stemmer=stemmer, return_ids=False, show_progress=False
    )
    return tokens


def bm25_top_k(bm25: Any, tokens: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top k (scores, passage numbers) of the passages of a loaded bm25s index that hold a word of a tokenized
    query, none when no passage does (not bm25s's retrieve: its ties vary, and it fills k with passages that match
    nothing). The passages that hold a word are its column of the score matrix, at any score (atire's idf of a word
    in every passage is 0); among them the order is the whole ranking's (`best_k`: score, then passage number)."""
    ids = bm25.get_tokens_ids(tokens)
    if not ids:
        return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
    scores = bm25.get_scores_from_ids(ids)
    indptr, indices = bm25.scores["indptr"], bm25.scores["indices"]
    matched = np.unique(np.concatenate([indices[indptr[term] : indptr[term + 1]] for term in set(ids)]))
    return best_k(scores[matched], k, matched)
