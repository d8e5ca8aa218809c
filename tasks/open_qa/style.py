"""FlashRAG's QA prompt as the `flashrag` prompt style of YAML tasks (one prompt for the sets of this
folder instead of a copy of the template in each file).

flashrag/prompt/base_prompt.py `PromptTemplate`, as its string (non-chat) form joins the system and
user prompts: with documents, the base system prompt (upstream's missing space after "document." kept)
over `Doc {i}(Title: {title}) {text}` lines, then "Question: {question}"; without documents, the
zero-shot prompt of flashrag/pipeline/pipeline.py. A chat model (`ctx.llm.chat_model`) gets FlashRAG's
chat form: the instruction and documents as a system message, the question as a user message
(ragbench._shared.flashrag)."""

from __future__ import annotations

from typing import Any

from ragbench.api import Context, Document, Example, Prompt
from ragbench.api.flashrag import FLASHRAG_RAG_TEMPLATE as RAG_TEMPLATE
from ragbench.api.flashrag import FLASHRAG_ZERO_SHOT_TEMPLATE as ZERO_SHOT_TEMPLATE
from ragbench.api.yaml_tasks import YamlPrompting, YamlTask


class FlashRagPrompting(YamlPrompting):
    """FlashRAG's QA prompt, with the shown documents or (none shown) its zero-shot form."""

    renders_templates = False

    def build_prompt(
        self,
        example: Example,
        docs: list[Document] | None = None,
        question: str | None = None,
        chat_model: bool = False,
        **options: Any,
    ) -> Prompt:
        template = RAG_TEMPLATE if docs else ZERO_SHOT_TEMPLATE
        return template.render(chat_model, docs, question=example.question if question is None else question)

    async def reader_prompt(
        self, example: Example, ctx: Context, docs: list[Document] | None
    ) -> tuple[Prompt, list[Document]]:
        """FlashRAG's messages for a chat model (`ctx.llm.chat_model`), its string for a plain one."""
        return self.build_prompt(example, docs, chat_model=ctx.llm.chat_model), list(docs or [])


class FlashRagPrompt(YamlTask):
    """A FlashRAG-format task, prompted with FlashRAG's QA prompt (`FlashRagPrompting`)."""

    prompting_class = FlashRagPrompting
