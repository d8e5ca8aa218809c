"""flashrag_bm25's sharding (FlashRAG's bm25s index, no manifest: checked as read, `foreign`): bm25's
(`bm25.kind`) with FlashRAG's builder, the language chosen once by the corpus's first indexed text, as its
one-process build chooses it (`prepare` in a shard build, `settings` in a merged parallel build); its split
(`split`), its run-side fronts (`front`; `build`'s over shards it built), its shard search (`search`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...bm25.flashrag import FlashRagBM25Builder
from ..bm25.kind import Bm25Kind
from ..merged_build.analysis import WorkerSettings
from .build import FlashRagPartBuilder, FlashRagShardsFront
from .front import FlashRagQueries
from .search import FlashRagShardSearch
from .split import bm25s_folder, split_flashrag_bm25

if TYPE_CHECKING:
    from ...._registry import Registry


class FlashRagKind(Bm25Kind):
    """flashrag_bm25 (module docstring); a build's options are `FlashRagBM25Builder`'s (language)."""

    name = "flashrag_bm25"
    front = FlashRagQueries
    search = FlashRagShardSearch
    checked = None
    shards_front = FlashRagShardsFront
    split = staticmethod(split_flashrag_bm25)
    foreign = staticmethod(bm25s_folder)

    def prepare(self, first_text: str) -> None:
        if self.build_options.get("language", "auto") == "auto":
            chinese = FlashRagBM25Builder.first_is_chinese(first_text)
            self.build_options["language"] = "zh" if chinese else "en"

    def part_builder(self, folder: Path) -> FlashRagPartBuilder:
        return FlashRagPartBuilder(folder, **self.build_options)

    def reopened(self, folder: Path) -> FlashRagPartBuilder:
        return FlashRagPartBuilder.reopened(folder, self.build_options)  # type: ignore[return-value]

    def settings(self, builder: FlashRagBM25Builder, first: str, registry: Registry) -> WorkerSettings:  # type: ignore[override]
        builder.choose_language(first)
        return super().settings(builder, first, registry)
