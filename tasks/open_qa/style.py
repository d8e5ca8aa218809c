"""FlashRAG's QA prompt as the `flashrag` prompt style of YAML tasks (one prompt for the sets of this
folder instead of a copy of the template in each file).

flashrag/prompt/base_prompt.py `PromptTemplate`, as its string (non-chat) form joins the system and
user prompts: with documents, the base system prompt (upstream's missing space after "document." kept)
over `Doc {i}(Title: {title}) {text}` lines, then "Question: {question}"; without documents, the
zero-shot prompt of flashrag/pipeline/pipeline.py. A chat model gets the whole prompt as one user
message (FlashRAG sends the instruction and documents as a system message)."""
from __future__ import annotations

from typing import Any

from ragbench.api import REFINED_TEXT, Document, Example, Prompt, YamlTask

WITH_DOCUMENTS = ("Answer the question based on the given document.Only give me the answer and do not output any "
                  "other words.\nThe following are given documents.\n\n{reference}")
WITHOUT_DOCUMENTS = "Answer the question based on your own knowledge. Only give me the answer and do not output any other words."
QUESTION = "Question: {question}"


def reference(docs: list[Document]) -> str:
    """PromptTemplate.format_reference: one line per document, its title the first line of FlashRAG's
    `contents` ("title\\ntext"), its text the rest. A passage of a FlashRAG corpus shows that line as
    written (`metadata["title_line"]` where it is not the title: quoted, or empty), and one whose title is
    still in its text (an index built before ragbench split FlashRAG's `contents`) the text's first line, so
    both are shown as FlashRAG shows them. A refiner's text made of the documents (`--refiner`) is shown as
    it is, as FlashRAG's `formatted_reference`."""
    if len(docs) == 1 and docs[0].metadata.get(REFINED_TEXT):
        return docs[0].text
    lines = []
    for i, doc in enumerate(docs, 1):
        title, text = doc.metadata.get("title_line", doc.title), doc.text
        if not title and "title_line" not in doc.metadata:
            title, _, text = text.partition("\n")
        lines.append(f"Doc {i}(Title: {title}) {text}\n")
    return "".join(lines)


class FlashRagPrompt(YamlTask):
    """FlashRAG's QA prompt, with the shown documents or (none shown) its zero-shot form."""

    renders_templates = False

    def build_prompt(self, example: Example, docs: list[Document] | None = None, question: str | None = None,
                     **options: Any) -> Prompt:
        instruction = WITH_DOCUMENTS.format(reference=reference(docs)) if docs else WITHOUT_DOCUMENTS
        return instruction + "\n\n" + QUESTION.format(question=example.question if question is None else question)
