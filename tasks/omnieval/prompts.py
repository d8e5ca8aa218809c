"""OmniEval's RAG baseline prompt (upstream evaluator/inference/rag_inference.sh strings, flashrag
prompt/base_prompt.py reference format), loaded as data from `data/rag_prompts.json`.

Upstream passes its prompts through bash double quotes, so the model saw a literal backslash-n
where `\\n` is written. `literal_newlines=True` reproduces that (the strings the released script
receives); the default sends real newlines, as the authors meant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragbench.api import Document, Example, Prompt, TaskPrompting

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


@dataclass(frozen=True)
class OmniEvalPrompting(TaskPrompting):
    """Upstream rag_model.py's prompt: the reference and instruction as the system message,
    `问题: {question}\\n答案:` as the user's (one text for a model that is not a chat model: `chat=False`); the
    answer stripped."""

    answer_format = "long"
    literal_newlines: bool = False
    chat: bool = True
    conversation_query: str = "turn"  # a conversational turn's question (OmniEvalAuto's CONVERSATION_QUERIES)

    def query_text(self, example: Example) -> str:
        history = example.extras.get("history")
        if example.meta.get("round") is None or self.conversation_query == "upstream_repr":
            return example.question
        return conversation_question(history or [], example.question, templates(False)[2])

    def build_prompt(
        self, example: Example, docs: list[Document] | None = None, question: str | None = None, **options: Any
    ) -> Prompt:
        """A conversational turn's question carries the earlier questions (the closed-book form), or with
        conversation_query=upstream_repr the list's repr, as upstream's retrieval path."""
        system, user, conversation = templates(self.literal_newlines)
        text = question
        if text is None:
            text = example.question
            if example.meta.get("round") is not None and self.conversation_query == "turn":
                text = conversation_question(example.extras.get("history", []), text, conversation)
        system = system.format(reference=reference(docs or []))
        user = user.format(question=text)
        if self.chat:
            return [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return system + "\n\n" + user  # upstream's text for a model without "chat"/"instruct" in its path

    def postprocess(self, text: str) -> str:
        return text.strip()  # upstream takes choices[0].text.strip()
