"""The zero-shot prompt of FlashRAG's `ConditionalPipeline` (flashrag/pipeline/pipeline.py:155-160, commit
1ee5249), verbatim: a backslash line continuation inside its string literal leaves 29 spaces between the
two sentences."""

from __future__ import annotations

from ragbench.api.flashrag import FlashRagTemplate

ZERO_SHOT = FlashRagTemplate(
    system="Answer the question based on your own knowledge."
    + " " * 29
    + "Only give me the answer and do not output any other words.",
    user="Question: {question}",
)
