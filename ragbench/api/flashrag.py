"""FlashRAG's conventions, which its methods and the QA prompt style share.

    from ragbench.api.flashrag import FLASHRAG_RAG_TEMPLATE, flashrag_generate

`FlashRagTemplate` (its `PromptTemplate`: a string, or a chat model's `[system, user]` messages),
`FLASHRAG_RAG_TEMPLATE` and `FLASHRAG_ZERO_SHOT_TEMPLATE` (its base and zero-shot prompts),
`flashrag_reference` and `title_and_text` (its reference formatting), `flashrag_sampling` and
`flashrag_generate` (its vLLM or HF generator's parameters and stop handling, on any engine),
`flashrag_retrieving` and `flashrag_searching` (the declarations of a method that searches with the question, and
of one that writes its own searches, bounded by its option); the judgers
of its conditional methods (SKR, Adaptive-RAG): `Judger` (a judger model loaded once from a local folder,
or a file of judgements by example id; each judgement recorded as the example's step "judgement") and
`judger_folder` (that folder, else one line), and `flashrag_naive_or_zero_shot` (the prediction of the two
pipelines they choose between).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._shared.flashrag import (
        FLASHRAG_RAG_TEMPLATE,
        FLASHRAG_ZERO_SHOT_TEMPLATE,
        FlashRagTemplate,
        flashrag_generate,
        flashrag_naive_or_zero_shot,
        flashrag_reference,
        flashrag_retrieving,
        flashrag_sampling,
        flashrag_searching,
        title_and_text,
    )
    from ragbench._shared.judgers import Judger, judger_folder

_MODULES = {
    "ragbench._shared.flashrag": (
        "FlashRagTemplate",
        "flashrag_reference",
        "flashrag_sampling",
        "flashrag_generate",
        "flashrag_naive_or_zero_shot",
        "flashrag_retrieving",
        "flashrag_searching",
        "title_and_text",
        "FLASHRAG_RAG_TEMPLATE",
        "FLASHRAG_ZERO_SHOT_TEMPLATE",
    ),
    "ragbench._shared.judgers": ("Judger", "judger_folder"),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)
