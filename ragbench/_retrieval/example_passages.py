"""`example_bm25` and `example_dense`: an example's own passages ranked for each query a system sends.

`provided` returns an example's passages in their given order whatever the query, which defeats a
system that searches again with new words (LLatrieval's re-retrieval, SMART's per-intent searches,
an IRCoT-style loop) in a distractor setting such as HotpotQA's (10 passages per question). These
retrievers rank those passages by the query instead: BM25 (bm25s, with the corpus `bm25` retriever's
defaults) or the sentence-transformers encoder of the `dense` retriever (by default the packaged
all-MiniLM-L6-v2).

An example's passages are indexed once, at its first search, by the retriever bound to it
(`for_example`), which the example's context holds and drops when the example ends. Searches go
through the run's retrieval pool (`pooled`): each batch, in the pool's worker thread, indexes the
examples seen for the first time and ranks every query of the batch (dense: one encoder call for the
batch's queries, one for its new passages). Ties keep the given order, so a query that shares nothing
with any passage gets the passages in the order `provided` gives; a query BM25 analyses to nothing
(empty, stopwords alone) gets none, as the corpus `bm25` retriever.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import ConfigError
from .._types import Document, Example
from .._values.json_values import JsonObject
from .base import RetrievalError, Retriever
from .bm25.retriever import METHODS, import_bm25s, make_stemmer
from .corpus.readers import passage_text
from .dense.retriever import EMBEDDED_MODEL, Encoder, EncoderOptions

if TYPE_CHECKING:
    from .._registry import Registry


class ExamplePassages(Retriever):
    """One example's passages; `index` is built by the owning retriever at the first search."""

    pooled = True

    def __init__(self, owner: ExamplePassageRetriever, docs: list[Document]) -> None:
        self.owner, self.docs = owner, docs
        self.name = owner.name  # type: ignore[misc]
        self.index: Any = None

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        return self.owner.search_examples([self] * len(queries), queries, k)


class ExamplePassageRetriever(Retriever):
    """Ranks the passages of the example each query comes from. Subclasses build an example's index
    (`build_indexes`, for the examples of a batch not indexed yet) and score a query against one
    (`score_queries`, a score per passage)."""

    max_batch_size = 256  # queries per batch: tiny per-example indexes, one encoder call
    example_documents_only = True

    def __init__(self, with_title: bool = True) -> None:
        self.with_title = bool(with_title)

    def for_example(self, example: Example) -> ExamplePassages:
        return ExamplePassages(self, list(example.docs))

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        raise RetrievalError(
            f"the {self.name} retriever has no corpus of its own: it ranks one example's "
            "passages, through ctx.retriever"
        )

    def search_examples(self, bound: list[Retriever], queries: list[str], k: int) -> list[list[Document]]:
        scopes: list[ExamplePassages] = bound  # type: ignore[assignment]  # from for_example
        new = list({id(scope): scope for scope in scopes if scope.index is None}.values())
        if new:
            for scope, index in zip(new, self.build_indexes([self.texts(scope.docs) for scope in new])):
                scope.index = index
        return [
            ranked(scope.docs, scores, k)
            for scope, scores in zip(scopes, self.score_queries([scope.index for scope in scopes], queries))
        ]

    def texts(self, docs: list[Document]) -> list[str]:
        """What is indexed of each passage: `title + "\\n" + text` (as corpus indexes), or the text alone."""
        return [passage_text(doc, self.with_title) for doc in docs]

    def build_indexes(self, passages: list[list[str]]) -> list[Any]:
        raise NotImplementedError

    def score_queries(self, indexes: list[Any], queries: list[str]) -> list[np.ndarray | None]:
        """A score per passage of each query's example, or None for a query with nothing to search with."""
        raise NotImplementedError

    def metadata(self) -> JsonObject:
        return {"retriever": self.name, "with_title": self.with_title}


def ranked(docs: list[Document], scores: np.ndarray | None, k: int) -> list[Document]:
    """The top `k` passages by score, ties in their given order, each with its score (none for None)."""
    if scores is None:
        return []
    order = np.lexsort((np.arange(len(docs)), -np.asarray(scores, dtype=np.float64)))[:k]
    return [replace(docs[i], score=float(scores[i]), metadata=dict(docs[i].metadata)) for i in order]


class ExampleBM25Retriever(ExamplePassageRetriever):
    """BM25 over the example's passages: bm25s with the `bm25` retriever's defaults (pyserini's k1=0.9,
    b=0.4, Lucene's English stopwords, Porter stemming), idf from the example's passages alone."""

    name = "example_bm25"

    def __init__(
        self,
        k1: float = 0.9,
        b: float = 0.4,
        method: str = "lucene",
        stopwords: str = "en",
        stemmer: str = "porter",
        with_title: bool = True,
    ) -> None:
        super().__init__(with_title)
        self.bm25s = import_bm25s()
        if method not in METHODS:
            raise ConfigError(f"{self.name} method '{method}' is unknown; choose one of {', '.join(METHODS)}")
        self.params = {"k1": float(k1), "b": float(b), "method": method}
        self.stopwords, self.stemmer_name, self.stemmer = stopwords, stemmer, make_stemmer(stemmer)
        try:
            self.tokenize(["a check of the stopwords"], ids=False)
        except ValueError as exc:
            raise ConfigError(f"{self.name} stopwords '{stopwords}': {exc}") from exc

    def tokenize(self, texts: list[str], ids: bool) -> Any:
        return self.bm25s.tokenize(
            texts, stopwords=self.stopwords, stemmer=self.stemmer, return_ids=ids, show_progress=False
        )

    def build_indexes(self, passages: list[list[str]]) -> list[Any]:
        indexes = []
        for texts in passages:
            tokens = self.tokenize(texts, ids=True)
            index = None
            if tokens.vocab:  # bm25s cannot index passages without a single word (it raises)
                index = self.bm25s.BM25(**self.params)
                index.index(tokens, show_progress=False)
            indexes.append((index, len(texts)))
        return indexes

    def score_queries(self, indexes: list[Any], queries: list[str]) -> list[np.ndarray | None]:
        words = self.tokenize(queries, ids=False)
        # a query of stopwords alone has no words (bm25s's get_scores raises on it): it finds nothing
        return [
            None if not query else index.get_scores(query) if index is not None else np.zeros(size)
            for (index, size), query in zip(indexes, words)
        ]

    def metadata(self) -> JsonObject:
        return {
            **super().metadata(),
            **self.params,
            "stopwords": self.stopwords,
            "stemmer": self.stemmer_name,
            "bm25s": self.bm25s.__version__,
        }


class ExampleDenseRetriever(ExamplePassageRetriever):
    """Inner product of normalised embeddings, with the `dense` retriever's encoder and query styles
    (`model`: `embedded`, the packaged all-MiniLM-L6-v2, by default; any sentence-transformers folder;
    `query_instruction`, `query_style`). `registry` is the run's, given by the core (not an option)."""

    name = "example_dense"

    def __init__(
        self,
        model: str = EMBEDDED_MODEL,
        query_instruction: str | None = None,
        query_style: str = "default",
        batch_size: int = 64,
        device: str | None = None,
        with_title: bool = True,
        *,
        registry: Registry,
    ) -> None:
        super().__init__(with_title)
        options = EncoderOptions(model, query_instruction, True, batch_size, device, query_style)
        self.encoder = Encoder(options, registry=registry)

    def build_indexes(self, passages: list[list[str]]) -> list[Any]:
        flat = [text for texts in passages for text in texts]
        vectors = self.encoder.encode_passages(flat) if flat else np.zeros((0, self.encoder.dim), np.float32)
        return np.split(vectors, np.cumsum([len(texts) for texts in passages])[:-1])

    def score_queries(self, indexes: list[Any], queries: list[str]) -> list[np.ndarray | None]:
        vectors = self.encoder.encode_queries(queries)
        return [index @ vector for index, vector in zip(indexes, vectors)]

    def metadata(self) -> JsonObject:
        return {
            **super().metadata(),
            "model": self.encoder.name,
            "query_instruction": self.encoder.query_instruction,
            "query_style": self.encoder.query_style,
        }
