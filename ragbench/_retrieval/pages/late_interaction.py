"""The `colpali` retriever: pages of a ViDoRe dataset encoded by a colpali-engine model (ColPali, ColQwen2,
ColQwen2.5, ColIdefics3 = ColSmol), saved once as a multi-vector index (`index`), searched by MaxSim (`maxsim`).

Encoded as vidore-benchmark's `ColPaliRetriever` (and its ColQwen2/ColIdefics3 siblings) encode: the processor's
`process_images` / `process_queries` over `batch_size` items, the model's output unbound per item, kept whole
(its zero rows where an item was padded within its batch included: they take part in MaxSim as upstream's
do); with `pool_factor` above 1, each page's vectors pooled by colpali-engine's `HierarchicalTokenPooler`.
Every row of the dataset is encoded and scored, as upstream's evaluators do; a page's score is made from its rows'
as upstream's `results` make it (`corpus.page_scores`; `page_scores=raw` for each page's best row's score as the
model gave it). Hits are ranked as trec_eval ranks those scores (`trec_order`), and the pages mteb's MRR would rank
within the first k where ties cross the cut are shown after them (`ranking.shown_order`); the first hit carries
what mteb's confidence scores read of every page's score (`RANKING`). A page shown is the `Document` of its id,
its image the page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal, Protocol

from ..._errors import ConfigError
from ..._imports import import_extra
from ..._storage.locations import absolute_path
from ..._types import Document, JsonObject
from ..base import RetrievalError, Retriever
from .corpus import PageCorpus, page_corpus
from .encoding import INSTALL, check_torchvision, encoded_pages
from .index import FORMAT, MANIFEST, MARK, load_vectors, save_index
from .maxsim import SCORE_BATCH, maxsim_scores
from .model_files import ModelFiles, model_files
from .ranking import RANKING, confidence, shown_order
from .shards import PageRecipe, PageShards, batch_ranges, given
from .vidore_data import open_vidore

# a colpali-engine model's `architectures[0]` -> its model and processor classes in colpali_engine.models
MODEL_CLASSES = {
    "ColPali": ("ColPali", "ColPaliProcessor"),
    "ColQwen2": ("ColQwen2", "ColQwen2Processor"),
    "ColQwen2_5": ("ColQwen2_5", "ColQwen2_5_Processor"),
    "ColIdefics3": ("ColIdefics3", "ColIdefics3Processor"),
}
DTYPES = ("bfloat16", "float32", "float16")


class PageEncoder(Protocol):
    """Pages (PIL images) and queries to multi-vector embeddings, one (tokens, dim) tensor each."""

    def identity(self) -> JsonObject: ...

    def encode_pages(self, images: list[Any]) -> list[Any]: ...

    def encode_queries(self, texts: list[str]) -> list[Any]: ...


class ColEngineEncoder:
    """A colpali-engine model and its processor from a local folder (no hub), in `dtype` on `device`."""

    def __init__(self, model: str, device: str = "cpu", dtype: str = "bfloat16") -> None:
        import torch

        check_torchvision("retriever colpali")
        engine = import_extra("colpali_engine.models", f"retriever colpali encodes with colpali-engine: {INSTALL}")
        folder = Path(model).expanduser()
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"retriever colpali: model={model}: no readable config.json ({exc}); name a local folder holding a "
                "colpali-engine model and its processor (saved by save_pretrained)"
            ) from None
        architecture = (config.get("architectures") or [""])[0]
        if architecture not in MODEL_CLASSES:
            raise ConfigError(
                f"retriever colpali: model={model} is a {architecture or 'model of no architecture'}, not one of "
                f"colpali-engine's late-interaction models ({', '.join(MODEL_CLASSES)})"
            )
        if dtype not in DTYPES:
            raise ConfigError(f"retriever colpali: dtype={dtype!r}: one of {', '.join(DTYPES)}")
        model_class, processor_class = (getattr(engine, name) for name in MODEL_CLASSES[architecture])
        self.device = device
        self.model = model_class.from_pretrained(
            str(folder), dtype=getattr(torch, dtype), device_map=device, local_files_only=True
        ).eval()
        self.processor = processor_class.from_pretrained(str(folder), local_files_only=True)
        self.description = {
            "path": str(folder.resolve()),
            "architecture": architecture,
            "dtype": dtype,
            # transformers' torchvision or PIL image processor (torchvision installed or not): their pixels differ
            "image_processor": type(self.processor.image_processor).__name__,
        }

    def identity(self) -> JsonObject:
        return dict(self.description)

    def encode_pages(self, images: list[Any]) -> list[Any]:
        return self.forward(self.processor.process_images(images=images))

    def encode_queries(self, texts: list[str]) -> list[Any]:
        return self.forward(self.processor.process_queries(queries=texts))

    def forward(self, batch: Any) -> list[Any]:
        import torch

        with torch.no_grad():
            return list(torch.unbind(self.model(**batch.to(self.device)).to("cpu")))


class LateInteractionRetriever(Retriever):
    """Multi-vector pages of a ViDoRe dataset (`pages`, its `split`), their index saved at `index` and reused."""

    name = "colpali"
    max_batch_size = 32
    page_images = True
    model_kind = "a colpali-engine model"  # what `model=` names, as a missing one is asked for

    def __init__(
        self,
        pages: str | None = None,
        index: str | None = None,
        model: str | None = None,
        split: str = "test",
        batch_size: int = 4,
        query_batch_size: int = 4,
        score_batch_size: int = SCORE_BATCH,
        pool_factor: int = 1,
        device: str = "cpu",
        dtype: str = "bfloat16",
        page_scores: Literal["vidore", "raw"] = "vidore",
        encoder: PageEncoder | None = None,
        in_shards: PageShards | None = None,
    ) -> None:
        """`encoder` a stand-in for the model's (tests); `in_shards` encodes the pages in shards (`pages.shards`:
        `ragbench index build --ray --shards S`) where the index is not built yet."""
        self.refuse_missing(index is None, model is None and encoder is None)
        self.page_scores: str = page_scores
        assert index is not None  # refused above
        self.folder = Path(index).expanduser().resolve()  # `.` and `..` named as the folders they are
        for option, value in (("batch_size", batch_size), ("query_batch_size", query_batch_size),
                              ("score_batch_size", score_batch_size), ("pool_factor", pool_factor)):  # fmt: skip
            if value < 1:
                raise ConfigError(f"retriever {self.name}: {option}={value}: must be at least 1")
        data = open_vidore(pages, split, what=f"retriever {self.name}: pages=")
        self.corpus: PageCorpus = page_corpus(data)
        if in_shards is not None:
            batch_ranges(len(self.corpus), batch_size, in_shards.shards)  # too many refused before the model loads
        model_folder: Path | None = None
        if encoder is not None:
            load: Callable[[], PageEncoder] = partial(given, encoder)
        else:  # the model's folder as a worker elsewhere names it (`shards`)
            model_folder = absolute_path(Path(str(model)).expanduser())
            load = self.encoder_factory(str(model_folder), device, dtype)
        self.encoder: PageEncoder = load()
        files: ModelFiles | None = None
        if model_folder is not None:  # loaded: the folder is a model's; its files as the index recorded them
            files = model_files(model_folder, recorded_model_files(self.folder))
        self.query_batch_size, self.score_batch_size, self.device = query_batch_size, score_batch_size, device
        self.identity: JsonObject = {
            "format": FORMAT,
            "kind": self.name,
            "pages": {
                "path": str(data.folder.resolve()),
                "split": split,
                "sha256": data.sha256,
                "rows": len(self.corpus),
                "count": len(self.corpus.ids),
            },
            "model": {**self.encoder.identity(), **({"files_sha256": files.sha256} if files is not None else {})},
            "options": {"batch_size": batch_size, "pool_factor": pool_factor},
        }
        self.records: JsonObject = {"model_files": files.records} if files is not None else {}
        recipe = PageRecipe(str(absolute_path(data.folder)), split, batch_size, pool_factor, load)
        self.pages = self.read_or_built(recipe, in_shards)

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

    @staticmethod
    def encoder_factory(model: str, device: str, dtype: str) -> Callable[[], PageEncoder]:
        """What loads the retriever's encoder (in each worker of a sharded build, too)."""
        return partial(ColEngineEncoder, model, device, dtype)

    def search(self, queries: list[str], k: int) -> Sequence[list[Document] | RetrievalError]:
        encoded: list[Any] = []
        for start in range(0, len(queries), self.query_batch_size):
            encoded.extend(self.encoder.encode_queries(queries[start : start + self.query_batch_size]))
        return [self.ranked(row, k) for row in self.scores(encoded)]

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

    def scores(self, queries: list[Any]) -> list[list[float]]:
        """Each query's score of every row, as the retriever's upstream scores them (MaxSim here)."""
        scores: list[list[float]] = maxsim_scores(queries, self.pages, self.score_batch_size, self.device).tolist()
        return scores

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
