"""The `siglip` retriever (alias `clip`): one vector a page (`page_retriever`: a ViDoRe dataset's, a folder of page
images) and a query from a transformers dual encoder (SigLIP, CLIP: `AutoModel` with `get_image_features` /
`get_text_features`), saved and reused as `colpali`'s index is (a `PageRetriever` too, not a late-interaction one),
scored as vidore-benchmark's `SigLIPRetriever` scores: the raw dot product (`einsum("bd,cd->bc")`, no
normalisation), its model in float32, queries padded to the tokenizer's `max_length` and truncated. A search by
picture (`search_images`, e.g. flashrag_mm's) ranks the pages by the cosine of their image features and the
picture's (CLIP's similarity of two pictures: the raw dot product would favour pages whose vectors are long).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._imports import import_extra
from ..._types import Document
from ..._values.images import Image
from ..._values.json_values import JsonObject
from ..base import RetrievalError
from ..pictures import opened_picture
from .encoding import check_torchvision
from .page_retriever import PageOptions, PageRetriever
from .page_set import RAW_SCORES


class DualEncoder:
    """A local transformers dual encoder and its processor (no hub); each embedding as a (1, dim) tensor."""

    def __init__(self, model: str, device: str = "cpu") -> None:
        check_torchvision("retriever siglip")
        transformers = import_extra(
            "transformers", "retriever siglip encodes with transformers: pip install 'ragbench[hf]'"
        )
        folder = Path(model).expanduser()
        if not (folder / "config.json").is_file():
            raise ConfigError(
                f"retriever siglip: model={model}: no config.json there; name a local folder holding a SigLIP or CLIP "
                "model and its processor (saved by save_pretrained)"
            )
        self.device = device
        self.model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True).to(device).eval()
        # the PIL image processor, as transformers 4 (vidore-benchmark's) processes images: with torchvision installed,
        # transformers 5 defaults to its own, whose resizing gives other pixels (SigLIP scores off in the 3rd decimal)
        pictures = transformers.AutoImageProcessor.from_pretrained(str(folder), local_files_only=True, backend="pil")
        self.processor = transformers.AutoProcessor.from_pretrained(
            str(folder), local_files_only=True, image_processor=pictures
        )
        self.description = {"path": str(folder.resolve()), "image_processor": type(pictures).__name__}

    def identity(self) -> JsonObject:
        return dict(self.description)

    def encode_pages(self, images: list[Any]) -> list[Any]:
        inputs = self.processor(images=[image.convert("RGB") for image in images], return_tensors="pt", padding=True)
        return self.unbound(self.model.get_image_features(**inputs.to(self.device)))

    def encode_queries(self, texts: list[str]) -> list[Any]:
        inputs = self.processor(text=texts, return_tensors="pt", padding="max_length", truncation=True)
        return self.unbound(self.model.get_text_features(**inputs.to(self.device)))

    @staticmethod
    def unbound(features: Any) -> list[Any]:
        import torch

        if not isinstance(features, torch.Tensor):  # an output object (transformers 5's, some models)
            features = features.pooler_output
        return [vector[None] for vector in torch.unbind(features.detach().to("cpu"), dim=0)]


class ImageDenseRetriever(PageRetriever):
    """Single-vector pages, their index saved at `index` and reused (`PageOptions`), scored by dot product; the model
    in float32, as upstream's `SigLIPRetriever` runs it."""

    name = "siglip"
    image_queries = True
    model_kind = "a SigLIP or CLIP model"

    options_from = PageOptions

    def __init__(self, **options: Any) -> None:
        """Every page retriever's options (`PageOptions`), none of MaxSim's, token pooling's or the model's dtype
        (its index records no pooling: `pool_factor` 1)."""
        shared = PageOptions(**options)
        self.checked(shared)
        super().__init__(shared, loader=partial(DualEncoder, device=shared.device))

    def refuse_missing(self, no_index: bool, no_model: bool) -> None:
        """As colpali's, `model=` asked for first (as siglip always has)."""
        super().refuse_missing(no_index and not no_model, no_model)

    def scores(self, queries: list[Any]) -> list[list[float]]:
        import torch

        query_vectors = torch.cat(queries)  # (n_queries, dim): each encoded as (1, dim)
        page_vectors = torch.cat(self.pages)
        scores: list[list[float]] = torch.einsum("bd,cd->bc", query_vectors, page_vectors).tolist()
        return scores

    def search_images(self, images: list[Image], k: int) -> Sequence[list[Document] | RetrievalError]:
        import torch

        pictures = [opened_picture(image, self.name, "a query picture") for image in images]
        readable = [picture for picture in pictures if not isinstance(picture, RetrievalError)]
        encoded: list[Any] = []
        for start in range(0, len(readable), self.query_batch_size):
            encoded.extend(self.encoder.encode_pages(readable[start : start + self.query_batch_size]))
        unit = torch.nn.functional.normalize
        rows = iter(
            (unit(torch.cat(encoded), dim=-1) @ unit(torch.cat(self.pages), dim=-1).T).tolist() if encoded else []
        )
        found: list[list[Document] | RetrievalError] = []
        for picture in pictures:
            found.append(picture if isinstance(picture, RetrievalError) else self.ranked(next(rows), k, RAW_SCORES))
        return found
