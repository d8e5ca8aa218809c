"""OmniEval's dense query styles (`query_style=omnieval` and `omnieval_flashrag`), served to the dense
encoder through the `ragbench_query_styles` hook (registry.yaml's `task_query_styles`)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from ragbench.api import ConfigError
from ragbench.api.retrieval import BGE_QUERY_INSTRUCTION, QueryStyle

BGE_ZH_QUERY_INSTRUCTION = "为这个句子生成表示以用于检索相关文章："
# OmniEval's configs/query_instruction.json (spec omnieval.md 2.2): queries are
# f"{instruction} {question}", with the space even when the instruction is empty.
OMNIEVAL_QUERY_INSTRUCTIONS = {
    r"bge-large-zh(-v1\.5)?": BGE_ZH_QUERY_INSTRUCTION,
    r"e5-mistral-7b(-instruct)?": "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: ",
    r"gte-qwen2-(1\.5b|7b)(-instruct)?": "Given a web search query, retrieve relevant passages that answer the query: ",
    r"bge-m3|jina-embeddings-v2-base-zh|jina-zh|bm25": "",
}


def omnieval_query_instruction(model: str) -> str:
    name = Path(model).name.lower()
    for pattern, instruction in OMNIEVAL_QUERY_INSTRUCTIONS.items():
        if re.fullmatch(pattern, name):
            return instruction
    raise ConfigError(
        f"query_style=omnieval: OmniEval has no query instruction for model '{model}' (it has bge-large-zh, "
        "e5-mistral-7b, gte-qwen2-*, bge-m3, jina-zh); pass query_instruction=... as well"
    )


def _flashrag_is_zh(text: str) -> bool:
    """FlashRAG's `is_zh`: more than 20% of the characters have "CJK" in their Unicode name
    (unnamed characters count in the length only). Upstream divides by zero on ""; here "" is not."""
    return bool(text) and sum("CJK" in unicodedata.name(c, "") for c in text) / len(text) > 0.2


def flashrag_prefixes(model: str, texts: list[str], batch_size: int) -> list[str]:
    """FlashRAG's `parse_query(model_name, batch, is_query=True)` (flashrag/retriever/encoder.py), batch
    by batch as its encoder is called: "query: " for a name containing "e5"; for one containing
    "bge", the Chinese BGE instruction when the batch's FIRST text is Chinese, else the English one.
    Upstream's index builder calls the same encode with is_query=True, so passages get it too."""
    name = Path(model).name.lower()
    out: list[str] = []
    for start in range(0, len(texts), max(1, batch_size)):
        batch = texts[start : start + max(1, batch_size)]
        if "e5" in name:
            batch = [f"query: {text}" for text in batch]
        if "bge" in name and batch:
            prefix = BGE_ZH_QUERY_INSTRUCTION if _flashrag_is_zh(batch[0]) else BGE_QUERY_INSTRUCTION
            batch = [prefix + text for text in batch]
        out.extend(batch)
    return out


class OmniEvalStyle(QueryStyle):
    """`query_style=omnieval`: f"{instruction} {query}" with OmniEval's instruction for the model."""

    separator = " "

    def instruction(self, model: str) -> str:
        return omnieval_query_instruction(model)


class OmniEvalFlashRAGStyle(OmniEvalStyle):
    """`query_style=omnieval_flashrag`: what FlashRAG's encoder added on top in OmniEval's runs
    (`flashrag_prefixes`: bge-large-zh's instruction twice, bge-m3's once, "query: " for e5, on queries
    AND passages, the first text of each `batch_size` batch deciding the language); opt-in, only to
    reproduce upstream's retrieval runs."""

    changes_passages = True

    def texts(self, model: str, texts: list[str], batch_size: int, is_query: bool) -> list[str]:
        return flashrag_prefixes(model, texts, batch_size)  # upstream passes is_query=True for passages too
