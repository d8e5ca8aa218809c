"""The mock KG's name search, as upstream's: rank_bm25's BM25Okapi over normalised names (open,
finance, movie) and the music domain's fast BM25; every search answers at most TOP_N names."""

from __future__ import annotations

import collections
import heapq
import math
import string

import numpy as np

TOP_N = 10
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize(name: str) -> str:
    """Lower-case, "_" to space, ASCII punctuation removed, whitespace collapsed (all domains)."""
    return " ".join(name.lower().replace("_", " ").translate(_PUNCTUATION).split())


class OkapiSearch:
    """rank_bm25 BM25Okapi over normalised names; `np.argsort(scores)[::-1][:10]`, zero scores
    dropped, every original name of a hit (open: corpus de-duplicated and sorted; finance: one
    corpus row per name, in file order)."""

    def __init__(self, names: list[str], dedupe: bool) -> None:
        from rank_bm25 import BM25Okapi

        self.key_map: dict[str, list[str]] = {}
        corpus = []
        for name in names:
            key = normalize(name)
            self.key_map.setdefault(key, []).append(name)
            corpus.append(key)
        if dedupe:
            corpus = sorted(set(corpus))
        self.corpus = [key.split() for key in corpus]
        self.bm25 = BM25Okapi(self.corpus)

    def search(self, query: str) -> list[str]:
        scores = self.bm25.get_scores(normalize(query).split())
        top = [" ".join(self.corpus[i]) for i in np.argsort(scores)[::-1][:TOP_N] if scores[i] != 0]
        return [name for key in top for name in self.key_map[key]][:TOP_N]


class FastBM25:
    """The music domain's vendored fast BM25 (MIT, Teo Orthlieb): k1 1.5, b 0.75, terms with
    idf <= 4 dropped, top n by `heapq.nlargest` over documents sharing a kept term."""

    def __init__(self, corpus: list[list[str]], k1: float = 1.5, b: float = 0.75, alpha: float = 4) -> None:
        self.k1, self.b = k1, b
        self.doc_len = [len(doc) for doc in corpus]
        self.t2d: dict[str, dict[int, int]] = {}
        for index, doc in enumerate(corpus):
            for word in doc:
                self.t2d.setdefault(word, {}).setdefault(index, 0)
                self.t2d[word][index] += 1
        self.avgdl = sum(self.doc_len) / len(self.doc_len) if self.doc_len else 0.0
        self.idf = {}
        for word, docs in list(self.t2d.items()):
            idf = math.log(len(self.doc_len) - len(docs) + 0.5) - math.log(len(docs) + 0.5)
            if idf > alpha:
                self.idf[word] = idf
            else:
                del self.t2d[word]
        # (upstream divides by len(self.idf) here, so a KG of fewer than ~83 names fails to start)

    def top_n(self, query: list[str], n: int) -> list[int]:
        scores: dict[int, float] = collections.defaultdict(float)
        for token in query:
            for index, freq in self.t2d.get(token, {}).items():
                denominator = self.k1 * (1 - self.b + self.b * self.doc_len[index] / self.avgdl)
                scores[index] += self.idf[token] * freq * (self.k1 + 1) / (freq + denominator)
        return heapq.nlargest(n, scores.keys(), key=scores.__getitem__)


class FastSearch:
    def __init__(self, names: list[str]) -> None:
        self.key_map: dict[str, list[str]] = {}
        for name in names:
            self.key_map.setdefault(normalize(name), []).append(name)
        self.corpus = sorted(self.key_map)
        self.bm25 = FastBM25([key.split() for key in self.corpus])

    def search(self, query: str) -> list[str]:
        hits = self.bm25.top_n(normalize(query).split(), TOP_N)
        return [name for i in hits for name in self.key_map[self.corpus[i]]][:TOP_N]
