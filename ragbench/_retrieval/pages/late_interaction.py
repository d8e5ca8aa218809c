"""The `colpali` retriever: pages (`page_retriever`: a ViDoRe dataset's, a folder of page images) encoded by a
colpali-engine model (ColPali, ColQwen2, ColQwen2.5, ColIdefics3 = ColSmol), saved once as a multi-vector index
(`index`), searched by MaxSim (`maxsim`).

Encoded as vidore-benchmark's `ColPaliRetriever` (and its ColQwen2/ColIdefics3 siblings) encode: the processor's
`process_images` / `process_queries` over `batch_size` items, the model's output unbound per item, kept whole
(its zero rows where an item was padded within its batch included: they take part in MaxSim as upstream's
do); with `pool_factor` above 1, each page's vectors pooled by colpali-engine's `HierarchicalTokenPooler`.
Every row of the dataset is encoded and scored, as upstream's evaluators do; a page's score is made from its rows'
as upstream's `results` make it (`page_set.page_scores`; `page_scores=raw` for each page's best row's score as the
model gave it).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._imports import import_extra
from ..._values.json_values import JsonObject
from .encoding import INSTALL, check_torchvision
from .maxsim import SCORE_BATCH, maxsim_scores
from .page_retriever import PageOptions, PageRetriever

# a colpali-engine model's `architectures[0]` -> its model and processor classes in colpali_engine.models
MODEL_CLASSES = {
    "ColPali": ("ColPali", "ColPaliProcessor"),
    "ColQwen2": ("ColQwen2", "ColQwen2Processor"),
    "ColQwen2_5": ("ColQwen2_5", "ColQwen2_5_Processor"),
    "ColIdefics3": ("ColIdefics3", "ColIdefics3Processor"),
}
DTYPES = ("bfloat16", "float32", "float16")


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


class LateInteractionRetriever(PageRetriever):
    """Multi-vector pages, their index saved at `index` and reused (`PageOptions`), scored by MaxSim in blocks of
    `score_batch_size`, the model in `dtype`, each page's vectors pooled by `pool_factor`."""

    name = "colpali"
    model_kind = "a colpali-engine model"

    options_from = PageOptions

    def __init__(
        self, score_batch_size: int = SCORE_BATCH, pool_factor: int = 1, dtype: str = "bfloat16", **options: Any
    ) -> None:
        """`options`: those of every page retriever (`PageOptions`)."""
        shared = PageOptions(**options)
        self.checked(shared, score_batch_size=score_batch_size, pool_factor=pool_factor)
        self.score_batch_size = score_batch_size
        loader = partial(ColEngineEncoder, device=shared.device, dtype=dtype)
        super().__init__(shared, loader=loader, pool_factor=pool_factor)

    def scores(self, queries: list[Any]) -> list[list[float]]:
        """Each query's score of every row by MaxSim, as colpali-engine's `score_multi_vector`."""
        scores: list[list[float]] = maxsim_scores(queries, self.pages, self.score_batch_size, self.device).tolist()
        return scores
