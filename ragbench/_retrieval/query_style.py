"""Query styles: how the dense encoder turns queries (and, for some styles, passages) into the texts
it encodes. A style is a `QueryStyle` subclass that a plugin names in its `ragbench_query_styles()`
hook; the user picks one by name with `--build-arg`/`--retriever-arg query_style=NAME`. The core
provides only `default`: the model authors' query instruction prepended to each query (or the one
given with `query_instruction=`), passages as they are. A benchmark's own conventions live with
its task plugin (e.g. OmniEval's in ragbench.tasks.omnieval.query_styles).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def default_query_instruction(model: str) -> str:
    """The instruction a model's authors prepend to queries (FlagEmbedding's, for BGE English)."""
    name = Path(model).name.lower()
    return BGE_QUERY_INSTRUCTION if re.fullmatch(r"bge-(small|base|large)-en(-v1\.5)?", name) else ""


class QueryStyle:
    """The `default` style; a plugin's style subclasses it and overrides what differs.

    A query is encoded as `texts(model, [instruction + separator + query], batch_size, is_query=True)`,
    a passage as `texts(model, [passage], batch_size, is_query=False)`, `instruction` being the
    `query_instruction=` option or else `instruction(model)` (which may raise a ConfigError for a
    model the style knows no instruction for). `batch_size` is the encoder's, for styles that decide
    per encoder batch. A style whose `texts` changes passages sets `changes_passages`: an index
    built with it can only be searched with it, and one built without it only without it."""

    separator: ClassVar[str] = ""  # between the instruction and the query
    changes_passages: ClassVar[bool] = False

    def instruction(self, model: str) -> str:
        return default_query_instruction(model)

    def texts(self, model: str, texts: list[str], batch_size: int, is_query: bool) -> list[str]:
        return texts
