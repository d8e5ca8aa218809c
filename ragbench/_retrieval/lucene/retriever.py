"""pyserini's BM25 (`LuceneSearcher(index).set_bm25(k1, b)` over an index built with pyserini's defaults), without
Java: the same passages in the same order with the same scores.

The index holds what Lucene's holds for scoring: each passage's terms from Anserini's default English analyzer
(`lucene_analyzer`), their frequencies, and each passage's length as Lucene's one-byte norm (SmallFloat's
`intToByte4` of its number of terms). A search scores as Lucene 9's BM25Similarity does, in its float32 operations
and order:

    idf    = float32(ln(1 + (N - df + 0.5) / (df + 0.5)))     N: passages with any term, df: with this one
    weight = float32(count of the term in the query) * idf    (Anserini's query: each term once, boosted by its count)
    cache  = 1 / (k1 * ((1 - b) + b * byte4ToInt(norm) / avgdl))   avgdl = float32(terms in all passages / N)
    score  = weight - weight / (1 + tf * cache)

summed over the query's terms in float64 and rounded to float32 (Lucene's disjunction sums in double). Passages
with none of the terms are not hits. Like Anserini's searcher, ties are broken by passage id (code-point order),
then scores are rounded as its ScoreTiesAdjusterReranker rounds them: to 4 decimals, each score within 1e-4 of
the one above lowered by 1e-6 times its place in that run of ties.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from ..._errors import ConfigError
from ..._storage.json_list import write_json_list
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import IndexBuilder
from ..corpus.readers import SEGMENTED
from ..corpus.segmented import anserini_contents
from ..index.built import IndexedRetriever, Manifest, rebuild_hint
from ..index.damage import (
    INTEGERS,
    IndexDamage,
    ascending,
    blocks,
    expect_count,
    read_array,
    vector,
    within,
)
from ..index.docstore import DocStore
from ..index.staging import MANIFEST_FILE
from .analyzer import ANALYZER_VERSION, analyze
from .postings import analysed_postings
from .tokenizer import token_regex

FILES_DIR = "lucene_bm25"
# what an index records of how it indexed a segment of MS MARCO V2.1 (`indexed_text`); an index without it holds
# title and segment only, which rank otherwise than Anserini's
SEGMENT_TEXT = "anserini-msmarco-v2.1: url title headings segment"
SPILL_DIR = "lucene_bm25.spill"
NUM_FREE_VALUES = 24  # SmallFloat: 255 - longToInt4(Integer.MAX_VALUE)


def long_to_int4(value: int) -> int:
    """SmallFloat.longToInt4: a float-like encoding with a 3-bit mantissa."""
    bits = value.bit_length()
    if bits < 4:
        return value
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def int4_to_long(value: int) -> int:
    mantissa, shift = value & 0x07, (value >> 3) - 1
    return mantissa if shift == -1 else (mantissa | 0x08) << shift


def length_to_norm(length: int) -> int:
    """SmallFloat.intToByte4 (as an unsigned byte): exact below 24, 4 significant bits above."""
    return length if length < NUM_FREE_VALUES else NUM_FREE_VALUES + long_to_int4(length - NUM_FREE_VALUES)


def norm_to_length(norm: int) -> int:
    """SmallFloat.byte4ToInt."""
    return norm if norm < NUM_FREE_VALUES else NUM_FREE_VALUES + int4_to_long(norm - NUM_FREE_VALUES)


NORM_OF_LENGTH = np.array([length_to_norm(n) for n in range(1024)], dtype=np.uint8)  # the common lengths
LENGTH_TABLE = np.array([norm_to_length(n) for n in range(256)], dtype=np.float32)  # BM25Similarity.LENGTH_TABLE


def norms(lengths: np.ndarray) -> np.ndarray:
    short = lengths < len(NORM_OF_LENGTH)
    out = NORM_OF_LENGTH[np.where(short, lengths, 0)]
    for i in np.flatnonzero(~short):
        out[i] = length_to_norm(int(lengths[i]))
    return out


ANALYSED_AT_ONCE = 4_000_000  # characters of text analysed at a time (`LuceneBM25Builder.add`)


def text_blocks(texts: list[str], characters: int) -> Iterator[list[str]]:
    """`texts` cut into runs of at most `characters` characters (a longer text alone)."""
    start = size = 0
    for end, text in enumerate(texts):
        if end > start and size + len(text) > characters:
            yield texts[start:end]
            start, size = end, 0
        size += len(text)
    if start < len(texts):
        yield texts[start:]


class LuceneBM25Builder(IndexBuilder):
    """Postings (term -> passages, term frequencies), norms and id order of the corpus, into `lucene_bm25/`."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        token_regex()  # without the regex package: refused before the corpus is read, not at its first non-ASCII text
        self.spill = folder / SPILL_DIR
        self.spill.mkdir()
        self.vocabulary: dict[str, int] = {}  # term -> number, in order of first sight
        self.chunk_files: list[Path] = []
        self.lengths: list[np.ndarray] = []
        self.n_docs = 0

    @classmethod
    def indexed_text(cls, doc: Document, title: bool, corpus_format: str) -> str:
        """A segment of MS MARCO V2.1 as Anserini indexes it (MsMarcoV2DocCollection: url, title, headings and
        segment, as its rag24 regressions and prebuilt index do); any other passage as pyserini's `contents`."""
        if title and corpus_format == SEGMENTED:
            return anserini_contents(doc)
        return super().indexed_text(doc, title, corpus_format)

    def add(self, texts: list[str]) -> None:
        """The next texts' postings, analysed a block of at most `ANALYSED_AT_ONCE` characters at a time (a block's
        tokens are held as strings while it is analysed, ~10x its text: a --chunk-size of 50,000 passages held a
        few hundred MB), each block spilled as a chunk of its own (the index is the same however texts are cut)."""
        for block in text_blocks(texts, ANALYSED_AT_ONCE):
            self.add_postings(*analysed_postings(block))

    def add_postings(
        self, docs: np.ndarray, terms: np.ndarray, freqs: np.ndarray, lengths: np.ndarray, words: list[str]
    ) -> None:
        """The next chunk's postings (`analysed_postings`: passages numbered from 0 within the chunk, terms as
        places in `words`), numbered in the corpus's passages and vocabulary (terms in order of first sight)."""
        vocabulary = self.vocabulary
        numbers = np.array([vocabulary.setdefault(word, len(vocabulary)) for word in words], dtype=np.int32)
        path = self.spill / f"chunk{len(self.chunk_files):06d}.npz"
        np.savez(path, doc=(docs + self.n_docs).astype(np.int32), term=numbers[terms], tf=freqs)
        self.chunk_files.append(path)
        self.lengths.append(lengths)
        self.n_docs += len(lengths)

    def finish(self) -> JsonObject:
        out = self.folder / FILES_DIR
        out.mkdir()
        words = sorted(self.vocabulary)
        total = self.write_postings(out, self.term_places(words), len(words))
        lengths = self.all_lengths()
        np.save(out / "norms.npy", norms(lengths))
        np.save(out / "id_ranks.npy", self.id_ranks())
        write_json_list(out / "terms.json", words)
        shutil.rmtree(self.spill)
        return {
            "analyzer": ANALYZER_VERSION,
            "terms": len(words),
            "postings": total,
            "docs_with_terms": int(np.count_nonzero(lengths)),  # Lucene's docCount of the field
            "total_terms": int(lengths.sum()),  # its sumTotalTermFreq
            "segment_text": SEGMENT_TEXT,
        }

    def all_lengths(self) -> np.ndarray:
        return np.concatenate(self.lengths) if self.lengths else np.zeros(0, dtype=np.int64)

    def term_places(self, words: list[str]) -> np.ndarray:
        """Each of this build's terms' place in `words` (its sorted vocabulary, or a whole corpus's of which this
        build is a shard), by the term's first-sight number: only its own terms looked up, no dict of `words`."""
        places = np.empty(len(self.vocabulary), dtype=np.int32)
        vocabulary = self.vocabulary
        for place, word in enumerate(words):
            if (number := vocabulary.get(word)) is not None:
                places[number] = place
        return places

    def write_postings(self, out: Path, new_number: np.ndarray, term_count: int) -> int:
        """postings.npy, freqs.npy and offsets.npy into `out` for a vocabulary of `term_count` terms, each of this
        build's terms numbered `new_number[its first-sight number]` (`term_places`); the postings written."""
        doc_freqs = np.zeros(term_count, dtype=np.int64)
        for path in self.chunk_files:
            with np.load(path) as chunk:
                doc_freqs += np.bincount(new_number[chunk["term"]], minlength=term_count)
        offsets = np.zeros(term_count + 1, dtype=np.int64)
        np.cumsum(doc_freqs, out=offsets[1:])
        total = int(offsets[-1])
        postings = np.lib.format.open_memmap(out / "postings.npy", "w+", np.int32, (total,))
        freqs = np.lib.format.open_memmap(out / "freqs.npy", "w+", np.int32, (total,))
        heads = offsets[:-1].copy()
        for path in self.chunk_files:  # chunks in corpus order: each term's passages come out ascending
            with np.load(path) as chunk:
                # a chunk holds each of its terms' passages as one run, in order (`analysed_postings`): each
                # posting's place is its term's next free one plus its place in the run, no sort
                terms = new_number[chunk["term"]]
                starts = np.flatnonzero(np.diff(terms, prepend=-1))
                columns, sizes = terms[starts], np.diff(starts, append=len(terms))
                slots = np.repeat(heads[columns] - starts, sizes) + np.arange(len(terms))
                postings[slots] = chunk["doc"]
                freqs[slots] = chunk["tf"]
                heads[columns] += sizes
        postings.flush()
        freqs.flush()
        del postings, freqs
        np.save(out / "offsets.npy", offsets)
        return total

    def id_ranks(self) -> np.ndarray:
        """Each passage's place in the order of ids (Anserini breaks score ties by id); the docs store is complete
        when `finish` runs."""
        store = DocStore(self.folder)
        try:
            ids = store.ids()
        finally:
            store.close()
        ranks = np.empty(len(ids), dtype=np.int32)
        ranks[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids), dtype=np.int32)
        return ranks


def java_round(value: float) -> float:
    """Math.round(double): the nearest integer, halves up."""
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def anserini_scores(scores: np.ndarray) -> list[float]:
    """ScoreTiesAdjusterReranker on ranked float32 scores: each rounded to 4 decimals; one within 1e-4 of the
    (adjusted) score above it goes down by 1e-6 for each tie before it in the run."""
    out: list[float] = []
    run = 0
    step = np.float32(1e-6)
    for i, raw in enumerate(scores):
        score = np.float32(java_round(float(raw) * 10000.0) / 10000.0)
        if i > 0 and np.float32(out[-1] - score) <= np.float32(1e-4):  # float32 subtraction, as Java's
            run += 1
            score = np.float32(score - np.float32(step * np.float32(run)))
        else:
            run = 0
        out.append(score)
    return [float(s) for s in out]


class LuceneBM25Retriever(IndexedRetriever):
    """pyserini's `LuceneSearcher` with `set_bm25(k1, b)` (defaults 0.9 and 0.4, pyserini's) over an index from
    `ragbench index build --retriever lucene_bm25` (module docstring). A query with no term in common with any
    passage (or none left after analysis: stop words, punctuation) gets no hits, as from pyserini."""

    name = "lucene_bm25"
    builder = LuceneBM25Builder

    option_types: ClassVar[Mapping[str, tuple[type, ...]]] = MappingProxyType(
        {
            "analyzer": (str,),
            "terms": (int,),
            "postings": (int,),
            "docs_with_terms": (int,),
            "total_terms": (int,),
            "segment_text": (str,),
        }
    )
    required_options = ("terms", "postings", "docs_with_terms", "total_terms")

    def __init__(self, index: str | None = None, k1: float = 0.9, b: float = 0.4) -> None:
        super().__init__(index)  # its files checked first (`check_files`)
        check_segment_text(self.manifest, self.folder)
        token_regex()  # the regex package, checked as the run starts
        files = self.folder / FILES_DIR
        self.offsets = np.load(files / "offsets.npy")
        self.postings = np.load(files / "postings.npy", mmap_mode="r")
        self.freqs = np.load(files / "freqs.npy", mmap_mode="r")
        self.norms = np.load(files / "norms.npy")
        self.id_ranks = np.load(files / "id_ranks.npy")
        words = json.loads((files / "terms.json").read_text("utf-8"))
        options = self.manifest.options
        self.term_numbers = {word: i for i, word in enumerate(words)}
        self.k1, self.b = np.float32(k1), np.float32(b)
        self.doc_count = int(options["docs_with_terms"])
        self.cache = lucene_cache(k1, b, self.doc_count, options["total_terms"])

    @classmethod
    def check_files(cls, folder: Path, manifest: Manifest) -> None:
        """The docs store, then the postings' files against the manifest's counts: each term's postings a run of
        rising passage numbers between its offsets, frequencies of at least 1, a norm and an id rank per passage
        (the ranks each passage's once), the terms a list of distinct words in order."""
        super().check_files(folder, manifest)
        try:
            check_postings(folder / FILES_DIR, manifest)
        except IndexDamage as exc:
            raise IndexDamage(f"{FILES_DIR}/{exc.file}", exc.problem) from None

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        ranked = [self.top_k(query, k) for query in queries]
        return self.hits([ids for ids, _ in ranked], [anserini_scores(scores) for _, scores in ranked])

    def top_k(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The passage numbers and float32 scores of the `k` best passages, best first, ties by id."""
        return ranked_by_id(*self.scores(self.query_terms(query)), self.id_ranks, k)

    def query_terms(self, query: str) -> list[tuple[int, int]]:
        return query_terms(query, self.term_numbers)

    def scores(self, terms: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        offsets = self.offsets
        doc_freqs = [int(offsets[number + 1] - offsets[number]) for number, _ in terms]
        return lucene_scores(terms, doc_freqs, self, self.doc_count, self.cache)


def check_segment_text(manifest: Manifest, folder: Path) -> None:
    """An index of a segmented corpus folder built before its segments were indexed as Anserini's (title and segment
    only) is refused in one line: searched, it would rank otherwise than Anserini's index, unseen."""
    corpus, recorded = manifest.corpus, manifest.options.get("segment_text")
    if corpus.get("format") == SEGMENTED and corpus.get("title") is not False and recorded != SEGMENT_TEXT:
        raise ConfigError(
            f"retriever lucene_bm25: index {folder} indexes each segment of MS MARCO V2.1 as its title and segment, "
            "not as Anserini does (url, title, headings and segment: ragbench before this version); "
            f"{rebuild_hint(manifest, folder)}"
        )


def query_terms(query: str, term_numbers: dict[str, int]) -> list[tuple[int, int]]:
    """The query's analyzed terms in the index, as (term number, count in the query), in order of first sight."""
    found = ((term_numbers.get(word), count) for word, count in Counter(analyze(query)).items())
    return [(number, count) for number, count in found if number is not None]


def lucene_cache(k1: float, b: float, doc_count: int, total_terms: int) -> np.ndarray:
    """BM25Similarity's cache: 1 / (k1 * ((1 - b) + b * length / avgdl)) for each norm, in float32."""
    k1_, b_, one = np.float32(k1), np.float32(b), np.float32(1)
    avgdl = np.float32(total_terms / doc_count) if doc_count else one
    cache: np.ndarray = one / (k1_ * ((one - b_) + b_ * LENGTH_TABLE / avgdl))
    return cache


def lucene_scores(
    terms: list[tuple[int, int]], doc_freqs: list[int], files: Any, doc_count: int, cache: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The passages with any of `terms` (term number, count in the query) and their float32 BM25 scores: each
    term's scores in float32, summed per passage in float64 (over the terms' postings only, not the whole corpus).
    `doc_freqs`: each term's passages in the whole index, `doc_count` its passages with terms (a shard's postings,
    `files`' offsets, postings, freqs and norms, are scored with the whole index's statistics)."""
    docs, scores = [], []
    for (number, count), df in zip(terms, doc_freqs):
        start, end = int(files.offsets[number]), int(files.offsets[number + 1])
        postings = np.asarray(files.postings[start:end])
        idf = np.float32(math.log(1 + (doc_count - df + 0.5) / (df + 0.5)))
        weight = np.float32(count) * idf
        tf = np.asarray(files.freqs[start:end]).astype(np.float32)
        docs.append(postings)
        scores.append(weight - weight / (np.float32(1) + tf * cache[files.norms[postings]]))
    if not docs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    matched, slots = np.unique(np.concatenate(docs), return_inverse=True)
    totals = np.bincount(slots, weights=np.concatenate(scores).astype(np.float64), minlength=len(matched))
    return matched, totals.astype(np.float32)


def ranked_by_id(docs: np.ndarray, scores: np.ndarray, id_ranks: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` best of `docs` scored `scores`, best first, ties by smaller `id_ranks[doc]` (none for `k` 0)."""
    if k <= 0:
        return docs[:0], scores[:0]
    if len(docs) > k:
        threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= threshold
        docs, scores = docs[keep], scores[keep]
    order = np.lexsort((id_ranks[docs], -scores))[:k]
    return docs[order], scores[order]


def check_postings(files: Path, manifest: Manifest) -> None:
    """`LuceneBM25Retriever.check_files`'s checks of the `lucene_bm25/` files (an IndexDamage names the first
    found wrong), and of the manifest's counts that scores are made of against them: its total_terms is the sum of
    the frequencies, its docs_with_terms the passages with a norm (a wrong one gives every score wrong)."""
    options, passages = manifest.options, manifest.doc_count
    terms, total = options["terms"], options["postings"]
    offsets = vector("offsets.npy", np.asarray(read_array(files, "offsets.npy")), INTEGERS, terms + 1)
    if len(offsets) and (int(offsets[0]) != 0 or int(offsets[-1]) != total):
        raise IndexDamage("offsets.npy", f"runs from {offsets[0]} to {offsets[-1]}, not from 0 to the {total} postings")
    ascending("offsets.npy", offsets, "offset", strictly=True)  # every term is in some passage
    postings = vector("postings.npy", read_array(files, "postings.npy"), INTEGERS, total)
    within("postings.npy", postings, 0, passages, "passage number", f"the index has {passages} passages")
    runs = " in its term's run, as offsets.npy divides them"
    ascending("postings.npy", postings, "passage number", strictly=True, restarts=offsets[1:-1], runs=runs)
    freqs = vector("freqs.npy", read_array(files, "freqs.npy"), INTEGERS, total)
    within("freqs.npy", freqs, 1, 2**31, "term frequency", "a term is in the passages it is listed for")
    occurrences = sum(int(block.sum(dtype=np.int64)) for _, block in blocks(freqs))
    expect_count("freqs.npy", "term occurrences", occurrences, options["total_terms"], f"{MANIFEST_FILE}'s total_terms")
    norms = vector("norms.npy", read_array(files, "norms.npy"), INTEGERS, passages)
    within("norms.npy", norms, 0, 256, "norm", "one byte")
    with_terms = int(np.count_nonzero(norms))  # a passage's norm is 0 only when it has no terms
    expect_count(
        "norms.npy", "passages with terms", with_terms, options["docs_with_terms"], f"{MANIFEST_FILE}'s docs_with_terms"
    )
    ranks = vector("id_ranks.npy", np.asarray(read_array(files, "id_ranks.npy")), INTEGERS, passages)
    within("id_ranks.npy", ranks, 0, passages, "rank", f"the index has {passages} passages")
    if passages and int(np.bincount(ranks, minlength=passages).max()) > 1:
        raise IndexDamage("id_ranks.npy", "gives two passages the same place in the order of ids")
    try:
        words = json.loads((files / "terms.json").read_bytes())
    except FileNotFoundError:
        raise IndexDamage("terms.json", "missing") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise IndexDamage("terms.json", f"not readable JSON ({exc})") from None
    if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
        raise IndexDamage("terms.json", "is not a list of words")
    expect_count("terms.json", "terms", len(words), terms, MANIFEST_FILE)
    if any(a >= b for a, b in zip(words, words[1:])):
        raise IndexDamage("terms.json", "its words are not distinct and in order")
