"""What the page retrievers (`colpali`'s many vectors a page, `siglip`'s one) share: their pages read through a
`corpus.PageCorpus` (`pages=` a ViDoRe dataset or a folder of page images, or a corpus given as an object), each
row encoded by the retriever's encoder into the index a run saves and reuses (`index`), its model known by its files
(`model_files`), built in one process or in shards (`shards`), and a query's hits: each page's score from its rows'
(`page_set`), ranked as trec_eval ranks them, then the pages mteb's MRR would rank within the first k where ties
cross the cut (`ranking.shown_order`); the first hit carries what mteb's confidence scores read of every page's
score (`RANKING`). A page shown is the `Document` of its id, its image the page. The options every page retriever
takes are `PageOptions` (each retriever's `options_from`); each declares its own beside them and scores the rows its
own way (`scores`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from ..._errors import ConfigError
from ..._storage.locations import absolute_path
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import RetrievalError, Retriever
from .corpus import PageCorpus, open_pages
from .encoding import encoded_pages
from .index import FORMAT, MANIFEST, MARK, load_vectors, save_index
from .model_files import ModelFiles, model_files
from .page_set import PageSet
from .ranking import RANKING, confidence, shown_order
from .shards import PageRecipe, PageShards, batch_ranges, given


class PageEncoder(Protocol):
    """Pages (PIL images) and queries to embeddings, one (tokens, dim) tensor each (one token: a single vector)."""

    def identity(self) -> JsonObject: ...

    def encode_pages(self, images: list[Any]) -> list[Any]: ...

    def encode_queries(self, texts: list[str]) -> list[Any]: ...


@dataclass(frozen=True)
class PageOptions:
    """The options every page retriever takes: its pages (`pages=` a folder and its `split`, or `corpus` an object),
    where their vectors are saved and reused (`index`), the model's folder (`model`, or `encoder`, a stand-in for
    it: tests), the batch sizes of pages and queries, the `device`, how a page's score is made of its rows'
    (`page_scores`), and `in_shards` (the pages encoded in shards, `ragbench index build --ray --shards S`, where the
    index is not built yet)."""

    pages: str | None = None
    index: str | None = None
    model: str | None = None
    split: str = "test"
    batch_size: int = 4
    query_batch_size: int = 4
    device: str = "cpu"
    page_scores: Literal["vidore", "raw"] = "vidore"
    encoder: PageEncoder | None = None
    in_shards: PageShards | None = None
    corpus: PageCorpus | None = None


class PageRetriever(Retriever):
    """Pages encoded by a model into an index saved and reused, searched (`PageOptions`). A subclass declares its own
    options beside those (`options_from`), checks them all (`checked`), and passes them on with what loads its
    encoder from a model folder (`loader`)."""

    max_batch_size = 32
    page_images = True
    model_kind: ClassVar[str] = ""  # what `model=` names, as a missing one is asked for

    def __init__(self, options: PageOptions, *, loader: Callable[[str], PageEncoder], pool_factor: int = 1) -> None:
        """`loader` (picklable: a shard's worker loads the encoder with it) makes the encoder of a model folder."""
        self.page_scores: str = options.page_scores
        self.folder = Path(str(options.index)).expanduser().resolve()  # `.` and `..` named as the folders they are
        corpus, reopen, label = self.opened(options.pages, options.corpus, options.split)
        self.corpus = PageSet(corpus)
        batch_size, in_shards = options.batch_size, options.in_shards
        if in_shards is not None:
            batch_ranges(len(self.corpus), batch_size, in_shards.shards)  # too many refused before the model loads
        model_folder: Path | None = None
        if options.encoder is not None:
            load: Callable[[], PageEncoder] = partial(given, options.encoder)
        else:  # the model's folder as a worker elsewhere names it (`shards`)
            model_folder = absolute_path(Path(str(options.model)).expanduser())
            load = partial(loader, str(model_folder))
        self.encoder: PageEncoder = load()
        files: ModelFiles | None = None
        if model_folder is not None:  # loaded: the folder is a model's; its files as the index recorded them
            files = model_files(model_folder, recorded_model_files(self.folder))
        self.query_batch_size, self.device = options.query_batch_size, options.device
        self.identity: JsonObject = {
            "format": FORMAT,
            "kind": self.name,
            "pages": {**corpus.identity(), "rows": len(self.corpus), "count": len(self.corpus.ids)},
            "model": {**self.encoder.identity(), **({"files_sha256": files.sha256} if files is not None else {})},
            "options": {"batch_size": batch_size, "pool_factor": pool_factor},
        }
        self.records: JsonObject = {"model_files": files.records} if files is not None else {}
        self.pages = self.read_or_built(PageRecipe(reopen, label, batch_size, pool_factor, load), in_shards)

    def opened(
        self, pages: str | None, corpus: PageCorpus | None, split: str
    ) -> tuple[PageCorpus, Callable[[], PageCorpus], str]:
        """The pages, what opens them again in a shard's worker (naming their folder as this process does), and
        their name in a build's progress."""
        if corpus is not None:
            if not isinstance(corpus, PageCorpus):  # a --retriever-arg's text, say
                raise ConfigError(
                    f"retriever {self.name}: corpus={corpus!r} is no page corpus (an object of Python's: "
                    "ragbench.api.retrieval.PageCorpus); name a folder of pages with pages=FOLDER"
                )
            if pages is not None:
                raise ConfigError(f"retriever {self.name}: pages={pages} and a corpus given: give the one or the other")
            return corpus, partial(given, corpus), type(corpus).__name__
        opened = open_pages(pages, split, f"retriever {self.name}: pages=")
        where = absolute_path(Path(str(pages)).expanduser())
        return opened, partial(open_pages, str(where), split, "index build: --corpus"), where.name

    def checked(self, options: PageOptions, **counts: int) -> None:
        """A ConfigError of one line where the index or a model (or an encoder) is not given (`refuse_missing`), or
        where a batch size or one of the retriever's own `counts` (its pooling ...) is below 1."""
        self.refuse_missing(options.index is None, options.model is None and options.encoder is None)
        sizes = {"batch_size": options.batch_size, "query_batch_size": options.query_batch_size}
        for option, value in {**sizes, **counts}.items():
            if value < 1:
                raise ConfigError(f"retriever {self.name}: {option}={value}: must be at least 1")

    def refuse_missing(self, no_index: bool, no_model: bool) -> None:
        """A ConfigError asking for `index=` where it is missing, else for `model=`."""
        if no_index:
            raise ConfigError(
                f"retriever {self.name}: pass --retriever-arg index=FOLDER (where the pages' vectors are saved, then reused)"
            )
        if no_model:
            raise ConfigError(
                f"retriever {self.name}: pass --retriever-arg model=FOLDER ({self.model_kind} saved locally)"
            )

    def read_or_built(self, recipe: PageRecipe, in_shards: PageShards | None) -> list[Any]:
        """The pages' vectors read from the index, or, where it is not built yet, encoded by `recipe` (in shards
        with `in_shards`) and saved there."""
        vectors = load_vectors(self.folder, self.identity)
        if vectors is not None:
            return vectors
        count, batch_size, pool_factor = len(self.corpus), recipe.batch_size, recipe.pool_factor
        if in_shards is None:
            build = partial(encoded_pages, self.corpus, self.encoder, 0, count, batch_size, pool_factor)
        else:
            build = partial(in_shards.vectors, recipe, count, self.folder, self.identity)
        vectors = save_index(self.folder, self.identity, build, self.records)
        if in_shards is not None:
            in_shards.close(self.folder)
        return vectors

    def search(self, queries: list[str], k: int) -> Sequence[list[Document] | RetrievalError]:
        encoded: list[Any] = []
        for start in range(0, len(queries), self.query_batch_size):
            encoded.extend(self.encoder.encode_queries(queries[start : start + self.query_batch_size]))
        return [self.ranked(row, k) for row in self.scores(encoded)]

    def scores(self, queries: list[Any]) -> list[list[float]]:
        """Each encoded query's score of every row, as the retriever's upstream scores them."""
        raise NotImplementedError

    def ranked(self, row_scores: list[float], k: int, kind: str | None = None) -> list[Document]:
        """The top `k` pages by the scores `kind` (default: the retriever's `page_scores`) makes of their rows'
        `row_scores`, ranked as trec_eval ranks them, then the pages mteb's MRR ranks within the first k that
        trec_eval does not (ties crossing the cut); the first carries the confidence of the ranking (`RANKING`)."""
        pages = self.corpus.page_scores(row_scores, kind or self.page_scores)
        order = shown_order(pages.scores, self.corpus.ids, k)
        hits = [self.corpus.document(page, pages.scores[page], pages.rows[page]) for page in order]
        if hits:
            hits[0].metadata[RANKING] = confidence(pages.scores)
        return hits

    def metadata(self) -> JsonObject:
        return {"retriever": self.name, "index": str(self.folder), **self.identity}

    def contents(self) -> JsonObject:
        return self.identity


def recorded_model_files(index: Path) -> JsonObject:
    """The model's files as the page index at `index` recorded them (`model_files.model_files` takes their
    digests from it where they stat the same); none where there is no index of ragbench's there."""
    path = index / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return {}
    if not isinstance(manifest, dict) or any(manifest.get(key) != value for key, value in MARK.items()):
        return {}
    records = manifest.get("model_files")
    return records if isinstance(records, dict) else {}
