"""`cragmm_search`: CRAG-MM's mock search APIs (`cragmm-search-pipeline` 0.5.1's `UnifiedSearchPipeline`) over
the user's local copies of the search indexes and of the CLIP and BGE models, without chromadb.

Image search (`image_index=`, `image_model=`) takes the example's image, or the picture a search by picture asks
with (`search_images`, e.g. flashrag_mm's): CLIP image features (`CLIPProcessor`, `get_image_features`), unit
length; the index's nearest images by cosine, each with its URL and its entities (names and attributes). Web
search (`web_index=`, `text_model=`) takes the query's text: the model's mean-pooled last hidden state (padding,
truncation at 512 tokens, no instruction), unit length; the nearest chunks by cosine, the first chunk of each page
kept (the id cut at `_chunk`, as `web_search` does), each with its page's name, snippet and URL. Scores are `1 - cosine distance`, computed in float32 as chromadb does.

The nearest are found as chromadb finds them: its HNSW graph walked as hnswlib walks it (hnsw_graph.py), or, where
writes were queued after the graph was saved (or none was), every vector compared (chroma_store.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from annotated_types import Ge

from ragbench.api import ConfigError, Document, Example, Image
from ragbench.api.data import JsonObject, import_extra
from ragbench.api.retrieval import (
    DualEncoder,
    FlashRagEncoder,
    RetrievalError,
    Retriever,
    opened_picture,
    option_path,
)

from .chroma_store import Collection, read_collection

IMAGE_COLLECTION, WEB_COLLECTION = "image_embeddings", "web_search_embeddings"
KINDS = ("image", "web")
IMAGE_SEARCH_RESULTS = 30  # utils/retriever.py NUM_IMG_SEARCH_RESULTS: get_rag_context's k for image search


class CragMMSearchRetriever(Retriever):
    """Image and/or web search (`search=image`, `web` or `both`; by default whichever indexes are given). A search
    returns the image hits (the top `image_k`, by default get_rag_context's 30) and then the web hits (the top
    `web_k`, by default the k asked), each Document's metadata naming its kind (`cragmm_search`). A search by picture
    (`search_images`) returns the image index's top k for that picture, whatever `search` is."""

    name = "cragmm_search"
    max_batch_size = 16
    image_queries = True

    def __init__(
        self,
        image_index: str | None = None,
        image_model: str | None = None,
        web_index: str | None = None,
        text_model: str | None = None,
        search: str | None = None,
        image_k: Annotated[int, Ge(0)] | None = IMAGE_SEARCH_RESULTS,
        web_k: Annotated[int, Ge(0)] | None = None,
        device: str = "cpu",
    ) -> None:
        kinds = (
            {"image": ("image",), "web": ("web",), "both": KINDS}.get(search)
            if search is not None
            else tuple(kind for kind, index in zip(KINDS, (image_index, web_index)) if index)
        )
        if not kinds:
            raise ConfigError(
                f"retriever cragmm_search: search={search!r}; pass search=image, web or both, with image_index= "
                "and image_model= (image search) and web_index= and text_model= (web search)"
            )
        self.kinds = kinds
        self.limits = {"image": image_k, "web": web_k}
        self.image: Collection | None = None
        self.web: Collection | None = None
        self.options: JsonObject = {
            "search": "both" if len(kinds) == 2 else kinds[0],
            "image_k": image_k,
            "web_k": web_k,
        }
        if "image" in kinds or image_index is not None:  # a search by picture needs no `search=image`
            self.image = read_collection(folder_of(image_index, "image_index"), IMAGE_COLLECTION, "image_index")
            self.clip = ImageEncoder(*local_model(image_model, "image_model"), device)
            self.entities = entity_table(self.image.metadatas)
            self.options.update(image_index=str(image_index), image_model=self.clip.identity)
        if "web" in kinds:
            self.web = read_collection(folder_of(web_index, "web_index"), WEB_COLLECTION, "web_index")
            text_folder, text_identity = local_model(text_model, "text_model")
            self.text = text_encoder(text_folder, device)
            self.options.update(web_index=str(web_index), text_model=text_identity)

    def for_example(self, example: Example) -> Retriever | None:
        return ExampleSearch(self, example) if "image" in self.kinds else None

    def search(self, queries: list[str], k: int) -> list[list[Document] | RetrievalError]:
        if "image" in self.kinds:
            raise RetrievalError("retriever cragmm_search: image search needs an example's image (ctx.retriever)")
        return self.search_examples([], queries, k)

    def search_images(self, images: list[Image], k: int) -> list[list[Document] | RetrievalError]:
        if self.image is None:
            return [
                RetrievalError("retriever cragmm_search: a search by picture needs image_index= and image_model=")
                for _ in images
            ]
        return self.image_hits([opened_picture(image, self.name, "a query picture") for image in images], k)

    def search_examples(
        self, bound: list[Retriever], queries: list[str], k: int
    ) -> list[list[Document] | RetrievalError]:
        results: list[list[Document] | RetrievalError] = [[] for _ in queries]
        if "image" in self.kinds:
            scopes: list[ExampleSearch] = bound  # type: ignore[assignment]  # from for_example
            for row, hits in enumerate(self.image_hits([scope.picture for scope in scopes], self.limit("image", k))):
                results[row] = hits
        if "web" in self.kinds:
            for row, hits in enumerate(self.web_hits(queries, self.limit("web", k))):
                found = results[row]
                results[row] = found if isinstance(found, RetrievalError) else found + hits
        return results

    def limit(self, kind: str, k: int) -> int:
        limit = self.limits[kind]
        return limit if limit is not None else k

    def image_hits(self, pictures: list[Any], k: int) -> list[list[Document] | RetrievalError]:
        assert self.image is not None
        found: list[list[Document] | RetrievalError] = []
        present = [picture for picture in pictures if not isinstance(picture, RetrievalError)]
        ranked = iter(self.image.nearest(self.clip.encode(present), k) if present else [])
        for picture in pictures:
            if isinstance(picture, RetrievalError):
                found.append(picture)
                continue
            hits = next(ranked)
            try:
                found.append([self.image_document(int(self.image.ids[row]), score) for row, score in hits])
            except (KeyError, ValueError, IndexError) as exc:  # a row upstream's lookups would fail on too
                found.append(
                    RetrievalError(f"retriever cragmm_search: an image index row: {type(exc).__name__}: {exc}")
                )
        return found

    def image_document(self, index: int, score: float) -> Document:
        """UnifiedSearchPipeline's image result: the URL and entities of the `index`-th row of the collection
        (its `get()` order, as upstream reads `id2_data[index]`); each entity's attributes from any row's info."""
        assert self.image is not None
        row = self.image.metadatas[index]
        names = json.loads(row["entities"])
        entities = [
            {"entity_name": name, "entity_attributes": self.entities[name]}
            for name in (names if isinstance(names, list) else [names])
        ]
        return Document(
            id=str(index),
            title=", ".join(str(entity["entity_name"]) for entity in entities),
            text="\n".join(
                f"{entity['entity_name']}: {json.dumps(entity['entity_attributes'], ensure_ascii=False)}"
                for entity in entities
            ),
            url=row["image_url"],
            score=score,
            metadata={"cragmm_search": "image", "entities": entities},
        )

    def web_hits(self, queries: list[str], k: int) -> list[list[Document]]:
        assert self.web is not None
        vectors = self.text.encode(queries) if queries else np.zeros((0, 0), np.float32)
        found = []
        for ranked in self.web.nearest(unit(vectors), k):
            pages: dict[str, Document] = {}
            for row, score in ranked:  # the best chunk of each page, as web_search's dedup keeps it
                chunk = self.web.ids[row]
                meta = self.web.metadatas[row]
                pages.setdefault(
                    chunk.split("_chunk")[0],
                    Document(
                        id=chunk,
                        title=str(meta.get("page_name") or ""),
                        text=meta.get("page_snippet") or "",
                        url=meta.get("page_url"),
                        score=score,
                        metadata={"cragmm_search": "web"},
                    ),
                )
            found.append(list(pages.values()))
        return found

    def metadata(self) -> JsonObject:
        return {"retriever": self.name, **self.options}

    def contents(self) -> JsonObject:
        return {
            kind: {"entries": len(collection.ids), "version": collection.version}
            for kind, collection in (("image", self.image), ("web", self.web))
            if collection is not None
        }


class ExampleSearch(Retriever):
    """The search bound to one example: its image (the first of `Example.images`) for image search."""

    pooled = True

    def __init__(self, owner: CragMMSearchRetriever, example: Example) -> None:
        self.owner = owner
        self.name = owner.name  # type: ignore[misc]
        self.picture: Any = picture_of(example)

    def search(self, queries: list[str], k: int) -> list[list[Document] | RetrievalError]:
        return self.owner.search_examples([self] * len(queries), queries, k)


def picture_of(example: Example) -> Any:
    """The example's first image as PIL opens it, or the RetrievalError its search gets."""
    if not example.images:
        return RetrievalError(f"retriever cragmm_search: example {example.id} has no image to search with")
    return opened_picture(example.images[0], "cragmm_search", f"example {example.id}'s image")


class ImageEncoder:
    """A local CLIP model and processor: unit-length image features, as `extract_features` computes them."""

    def __init__(self, folder: str, identity: JsonObject, device: str) -> None:
        transformers = import_extra(
            "transformers", "retriever cragmm_search encodes with transformers: pip install 'ragbench[hf]'"
        )
        self.identity = identity
        self.device = device
        try:
            self.model = transformers.CLIPModel.from_pretrained(folder, local_files_only=True).to(device).eval()
            self.processor = transformers.CLIPProcessor.from_pretrained(folder, local_files_only=True)
        except Exception as exc:  # a damaged or foreign folder: one line
            raise unloadable("image_model", folder, exc) from None

    def encode(self, pictures: list[Any]) -> np.ndarray:
        import torch

        rows = []
        with torch.no_grad():
            for picture in pictures:  # one at a time, as the pipeline sends them
                inputs = self.processor(images=picture, return_tensors="pt").to(self.device)
                features = torch.cat(DualEncoder.unbound(self.model.get_image_features(**inputs)))
                rows.append((features / features.norm(dim=-1, keepdim=True)).cpu().numpy())
        return unit(np.concatenate(rows).astype(np.float32))


def text_encoder(model: str, device: str) -> Any:
    """The BGE model as `extract_features` runs it: mean pooling, unit length, 512 tokens, no instruction; one query
    at a time, as the pipeline encodes them (padding in a batch would move the last bits of a score)."""
    try:
        return FlashRagEncoder(
            model, "cragmm", "mean", None, True, max_length=512, batch_size=1, fp16=False, device=device
        )
    except ConfigError as exc:
        raise unloadable("text_model", model, exc.__context__ or exc) from None


def unloadable(option: str, folder: str, exc: BaseException) -> ConfigError:
    return ConfigError(
        f"retriever cragmm_search: {option}={folder} could not be loaded ({type(exc).__name__}: {exc}); "
        "name a local model folder (saved by save_pretrained or downloaded with huggingface-cli)"
    )


def unit(vectors: np.ndarray) -> np.ndarray:
    """Each row over its norm (the search functions' own normalisation of the query), zero rows as they are."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    result: np.ndarray = vectors / np.where(norms > 0, norms, 1)
    return result


def entity_table(metadatas: list[dict[str, Any]]) -> dict[str, Any]:
    """CragImageKG's `kg`: every row's `info` (entity -> attributes), a later row's entry replacing an earlier."""
    table: dict[str, Any] = {}
    for meta in metadatas:
        table.update(json.loads(meta.get("info") or "{}"))
    return table


def folder_of(value: str | None, option: str) -> str:
    hint = "a local copy (huggingface-cli download, or save_pretrained for a model)"
    return str(option_path("retriever cragmm_search", value, option, hint, folder=True))


def local_model(model: str | None, option: str) -> tuple[str, JsonObject]:
    """The model folder `option` names, and what identifies it (its path, its config's digest)."""
    folder = Path(folder_of(model, option))
    config = folder / "config.json"
    if not config.is_file():
        raise ConfigError(
            f"retriever cragmm_search: {option}={model}: no config.json there; name a local model folder "
            "(saved by save_pretrained or downloaded with huggingface-cli)"
        )
    return str(folder), {
        "path": str(folder.resolve()),
        "config_sha256": hashlib.sha256(config.read_bytes()).hexdigest(),
    }
