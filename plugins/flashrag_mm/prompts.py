"""FlashRAG's multimodal prompt templates (flashrag/prompt/mm_prompt.py, commit 1ee5249): one user turn holding the
pictures of the retrieved documents that have one, in rank order, then the question's picture, then the text.
Each document is a line `Example {i}: ...` of the reference: a picture's document gives its text, a text passage its
FlashRAG `contents` ("title\\ntext").
"""

from __future__ import annotations

from typing import Any

from ragbench.api import Document, Example
from ragbench.api.flashrag import title_and_text

# MMPromptTemplate.BASE_USER_PROMPT
MM_USER = (
    "{reference}\nBased on the above examples, answer the following question. Only give me the final choices.\n"
    "Question: {question}\nAnswer: "
)
_MATHVISTA_HEAD = (
    "You are an AI assistant designed to solve mathematical and visual reasoning problems. "
    "Below is {kind} that requires you to analyze the given information and {task}.\n\n"
    "### Reference Information:\n{{reference}}\n\n"
    "### Question:\n{{question}}\n\n"
    "### Instructions:\n"
    "{instruction}\n\n"
    "### Answer:\n"
)
# MathVistaPromptTemplate's two prompts, by the example's `question_type`
MATHVISTA_USER = {
    "free_form": _MATHVISTA_HEAD.format(
        kind="a question", task="provide a detailed answer", instruction="Only give me the final answer."
    ),
    "multi_choice": _MATHVISTA_HEAD.format(
        kind="a multiple-choice question",
        task="select the correct choice",
        instruction="Only give me the correct option letter, e.g., A, B, C, D.",
    ),
}


def reference(docs: list[Document]) -> tuple[list[Any], str]:
    """The retrieved documents' pictures, in order, and the reference text naming every document."""
    pictures, lines = [], []
    for idx, doc in enumerate(docs, 1):
        if doc.image is None:
            title, text = title_and_text(doc)
            lines.append(f"Example {idx}: {title}\n{text}\n")
        else:
            pictures.append(doc.image)
            lines.append(f"Example {idx}: {doc.text}\n")
    return pictures, "".join(lines)


def user_text(template: str, example: Example, reference_text: str) -> str:
    """The turn's text: `template` "mm" (MMPromptTemplate) or "mathvista" (MathVistaPromptTemplate, its prompt
    chosen by the example's `question_type`: "free_form" or "multi_choice")."""
    if template == "mm":
        return MM_USER.format(question=example.question, reference=reference_text)
    kind = example.meta.get("question_type")
    if kind not in MATHVISTA_USER:
        raise ValueError(
            f"flashrag_mm template=mathvista: example {example.id} has question_type {kind!r}; "
            "it prompts a 'free_form' or a 'multi_choice' question"
        )
    return MATHVISTA_USER[kind].format(question=example.question, reference=reference_text)


def messages(template: str, example: Example, docs: list[Document]) -> list[dict[str, Any]]:
    """The one user turn FlashRAG sends: the documents' pictures, the question's picture (where the example has
    one; FlashRAG's `mm` template would send an empty image part), then the text."""
    pictures, reference_text = reference(docs)
    pictures.extend(example.images[:1])
    parts: list[dict[str, Any]] = [{"type": "image", "image": picture} for picture in pictures]
    parts.append({"type": "text", "text": user_text(template, example, reference_text)})
    return [{"role": "user", "content": parts}]
