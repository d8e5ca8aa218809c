"""Prompt formats of instruction-tuned models, for tasks that offer a `template` option: an instruction,
with or without a block of numbered passages.

The strings are byte-exact as AkariAsai/self-rag retrieval_lm/utils.py writes them (PROMPT_DICT; MIT
licence) - the Alpaca, Llama-2 chat and Open-Instruct formats - and `paragraph` is its baseline
script's passage block, so that tasks prompted this way match the published baselines."""

from __future__ import annotations

from .._types import Document

# name -> (template without documents, template with documents); the names are PROMPT_DICT's.
TEMPLATES = {
    "alpaca": (
        "### Instruction:\n{instruction}\n\n### Response:\n",
        "Below is an instruction that describes a task. Write a response that appropriately completes "
        "the request.\n\n### Paragraph:\n{paragraph}\n\n### Instruction:\n{instruction}\n\n### Response:",
    ),
    "llama_chat": ("[INST]{instruction}[/INST]", "[INST]{paragraph}\n{instruction}[/INST]"),
    "open_instruct": (
        "<user>\n{instruction}\n<assistant>\n",
        "<user>\nReference:{paragraph}\n{instruction}\n<assistant>\n",
    ),
}


def paragraph(docs: list[Document]) -> str:
    """run_baseline_lm.py: "[i] title\\ntext" per document, joined by newlines."""
    return "\n".join(f"[{i}] {doc.title}\n{doc.text}" for i, doc in enumerate(docs, 1))


def fill(template: str, instruction: str, docs: list[Document] | None, limit: int | None = None) -> str:
    """The prompt of `template` (a TEMPLATES name) for `instruction`: the form with passages when there
    are `docs`, showing the first `limit` of them (None: all)."""
    without_docs, with_docs = TEMPLATES[template]
    if docs:
        return with_docs.format(paragraph=paragraph(list(docs)[:limit]), instruction=instruction)
    return without_docs.format(instruction=instruction)
