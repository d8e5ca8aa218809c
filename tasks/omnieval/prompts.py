"""OmniEval's RAG baseline prompt (upstream evaluator/inference/rag_inference.sh strings, flashrag
prompt/base_prompt.py reference format), loaded as data from `data/rag_prompts.json`.

Upstream passes its prompts through bash double quotes, so the model saw a literal backslash-n
where `\\n` is written. `literal_newlines=True` reproduces that (the strings the released script
receives); the default sends real newlines, as the authors meant."""
from __future__ import annotations

from ragbench.api import Document

from .catalog import data_file


def templates(literal_newlines: bool) -> tuple[str, str, str]:
    """(system, user, conversation) templates."""
    data = data_file("rag_prompts.json")
    form = "as_shipped" if literal_newlines else "intended"
    return data[f"{form}_system_prompt"], data[f"{form}_user_prompt"], data[f"{form}_conversation_prompt"]


def reference(docs: list[Document]) -> str:
    """`Doc i(Title: first line) rest` per document: the chunk's first line is the title shown,
    not the corpus title field (flashrag base_prompt.format_reference)."""
    items = []
    for i, doc in enumerate(docs, 1):
        contents = doc.metadata.get("contents", doc.text)
        title, _, rest = contents.partition("\n")
        items.append(f"Doc {i}(Title: {title}) {rest}\n")
    return "".join(items)


def conversation_question(history: list[str], question: str, template: str) -> str:
    """The closed-book conversational question: earlier questions as `i-round: q` lines."""
    return template.format("\n".join(f"{i}-round: {q}" for i, q in enumerate(history)), question)
