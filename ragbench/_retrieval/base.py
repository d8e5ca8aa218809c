"""The retriever interface: a batch of queries in, a ranked list of documents per query out.

Retrievers are plugins (the `retrievers` section of the catalogue). A run builds one, systems
reach it through `ctx.retriever` (`ragbench._retrieval.handle`), which pools the queries of all
in-flight examples into one `search` call per k, run in a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .._values.json_values import JsonObject
from .corpus.readers import passage_text  # at module level: a build calls indexed_text once a passage

if TYPE_CHECKING:
    from .._types import Document, Example
    from .._values.images import Image


class RetrievalError(RuntimeError):
    """A search that failed (the example fails with it; the run goes on)."""


class Retriever:
    """Subclasses implement `search` (blocking: encoders, matrix products, posting lists).

    Options are keyword arguments of `__init__` (from `--retriever-arg`). A retriever that reads
    an on-disk index names the class that builds it in `builder`, which is what
    `ragbench index build --retriever NAME` runs.
    """

    name: ClassVar[str] = ""
    builder: ClassVar[type[IndexBuilder] | None] = None
    max_batch_size: int = 64  # queries per `search` call
    # True: an example's every query gets the same documents, its own in their given order (`provided`,
    # or a replay of it); a system that would search by rewritten queries ranks them itself instead.
    fixed_documents: bool = False
    # True: searches return only documents of the example searched for (`provided`, `example_bm25`,
    # `example_dense`), so an example without documents gets none, whatever the query
    example_documents_only: bool = False
    # True for a retriever bound to one example whose search does real work (an index, an encoder):
    # its queries go through the run's pool like corpus searches, off the event loop and batched with
    # other examples' queries by the run retriever's `search_examples`. False: `for_example`'s
    # retriever is searched directly, on the loop (`provided`: a slice of a list).
    pooled: bool = False
    # True: `search_images` answers searches by a picture (`ctx.retriever.search_image`), e.g. a CLIP image index
    image_queries: ClassVar[bool] = False
    # True: its passages are a page-image dataset's pages (ViDoRe's: `colpali`, `siglip`), what a task whose corpus
    # is pages (`Task.page_retrieval`) needs
    page_images: ClassVar[bool] = False

    def search(self, queries: list[str], k: int) -> Sequence[list[Document] | RetrievalError]:
        """The top `k` documents for each query, best first, each with its `score`. A query the retriever cannot
        answer gets a RetrievalError in its place: that search fails, the batch's other queries do not."""
        raise NotImplementedError

    def search_images(self, images: list[Image], k: int) -> Sequence[list[Document] | RetrievalError]:
        """The top `k` documents for each query picture, best first (a retriever whose `image_queries` is True)."""
        raise NotImplementedError

    def for_example(self, example: Example) -> Retriever | None:
        """A retriever bound to one example (e.g. its own documents), searched directly (or through
        the pool when it is `pooled`); None for retrievers over a shared corpus."""
        return None

    def search_examples(
        self, bound: list[Retriever], queries: list[str], k: int
    ) -> Sequence[list[Document] | RetrievalError]:
        """One pooled batch of example-bound searches: the top `k` for `queries[i]` from `bound[i]`
        (a `pooled` retriever from `for_example`). A retriever overrides it to share work across the
        batch (one encoder call for all queries)."""
        return [scope.search([query], k)[0] for scope, query in zip(bound, queries)]

    @property
    def retriever_id(self) -> str:
        """Identity of what answers a query: identical (query, k) in flight share one search."""
        return f"{self.name}:{id(self)}"

    def metadata(self) -> JsonObject:
        """What results.json records about the retriever (kind, model, corpus, index)."""
        return {"retriever": self.name}

    def contents(self) -> JsonObject:
        """What its answers depend on beyond its options (an index's corpus digest, passage count and build
        options): `--resume` refuses a run whose retriever's contents changed since it started."""
        return {}

    def close(self) -> None:
        """Free resources (encoders, memory maps)."""


class IndexBuilder:
    """Writes one retriever's files into an index folder while the corpus streams by in chunks.

    `add` gets the indexed text of the next chunk of passages (in corpus order); `finish` returns
    what the manifest records about the build (the options that change results).
    """

    def __init__(self, folder: Path, **options: Any) -> None:
        self.folder = folder

    @classmethod
    def indexed_text(cls, doc: Document, title: bool, corpus_format: str) -> str:
        """What is indexed of a passage of a corpus read as `corpus_format`: `title\\ntext`, the text alone where
        `title` is off (`--no-title`) or the passage has none."""
        return passage_text(doc, title)

    def add(self, texts: list[str]) -> None:
        raise NotImplementedError

    def finish(self) -> JsonObject:
        raise NotImplementedError
