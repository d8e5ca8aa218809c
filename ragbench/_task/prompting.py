"""How systems prompt for a task's examples, in one object: `Task.prompting`.

A task with a baseline prompt of its own provides a `TaskPrompting` subclass, handed the state it needs
(prompt files, templates, the task's options) when the task makes it. Generic systems (closed_book,
vanilla) send its `reader_prompt`; systems that write their own prompts read the question as the task
poses it (`query_text`), its documents as passages (`passages`) and the kind of answer (`answer_format`,
`cites`), and end with `answer_prompt`, `chat_messages` and `postprocess`, so that answers are scored as
the benchmark's reference baselines are (docs/writing-plugins.md, "The task-system contract").
"""

from __future__ import annotations

from typing import Any

from .._types import Document, Example
from .._values.chat_turns import Message
from .._values.sampling import SamplingArgs

# A text, or a chat: typed turns (`Message`: a role and its text, or its texts and images; `chat_turn`, `user_turn`),
# or plain {"role", "content"} dicts of text
Prompt = str | list[Message] | list[dict[str, str]]


class TaskPrompting:
    """The default prompting: the subclass's `build_prompt` over the documents, the question as it is, the
    model's text as the answer. A subclass overrides what its benchmark's baseline does otherwise."""

    # "short" (an entity or phrase), "long" (a paragraph), "list", "choice" (a multiple-choice letter) or
    # "label" (a verdict such as true/false)
    answer_format: str = "short"
    # answers cite the shown documents as [1], [2] ... (ALCE-style citation metrics)
    cites: bool = False

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        """The task's prompt for `example` over `docs` (None or []: closed book); the options a system may
        pass are `answer_prompt`'s."""
        raise NotImplementedError

    def answer_prompt(
        self, example: Example, docs: list[Document] | None, question: str | None = None, shot: int | None = None
    ) -> Prompt:
        """The task's own answer prompt over `docs` (None or []: closed book); `question` replaces the
        question text (a system's rewritten question or sub-questions); `shot` sets how many worked
        examples a prompt with demonstrations shows (None: the task's own number; a task without
        demonstrations ignores it). Systems end with this, then `postprocess`, so that answers are
        scored as the benchmark's baselines are."""
        options = {"question": question, "shot": shot}
        return self.build_prompt(example, docs, **{k: v for k, v in options.items() if v is not None})

    async def reader_prompt(
        self, example: Example, ctx: Any, docs: list[Document] | None
    ) -> tuple[Prompt, list[Document]]:
        """What a generic system sends for `example` and the documents it shows, in order.

        `docs` are the system's documents (None: closed book). The default formats them with
        `build_prompt`; a task whose reference baseline does more (CRAG: pages to sentences,
        embedding ranking, LLM entity extraction and KG calls through `ctx`) overrides this, so
        that `closed_book` / `vanilla` reproduce that baseline.
        """
        return self.build_prompt(example, docs), list(docs or [])

    async def passages(self, docs: list[Document]) -> list[Document]:
        """Retrieved documents as passages a system can read itself (summarise, select, verify, cite),
        in order (awaited: a task that splits its documents does that work off the event loop).
        Default: unchanged; a task whose documents are not passages (CRAG's HTML pages) splits them
        here. Generic readers (closed_book, vanilla) use `reader_prompt` instead, which reproduces
        the task's own baseline."""
        return docs

    def query_text(self, example: Example) -> str:
        """The question as this task poses it to a system writing its own prompts (instruction and
        answer options included where the task has them); `example.question` stays the bare question
        that retrieval uses."""
        return example.question

    def chat_messages(self, prompt: str) -> list[dict[str, str]]:
        """How a chat model receives a text prompt; a task may add its baseline's system message."""
        return [{"role": "user", "content": prompt}]

    def answer_sampling(self, model: str, sampling: SamplingArgs) -> SamplingArgs:
        """The sampling keywords of a generic system's answer call to `model` (the engine's model name), from the
        system's own (`sampling`; `left_to_server`: those it leaves to the server). Default: as the system gives
        them; a task whose reference agents send other fields to some models changes them (CRAG-MM's API agents)."""
        return sampling.copy()

    def postprocess(self, text: str) -> str:
        """Turn raw model output into the answer that is scored."""
        return text

    def documents_read(self, docs: list[Document]) -> int:
        """How many of `docs` (those `reader_prompt` gave: a generic system's prediction keeps them) its prompt shows
        the reader, the first ones: what a run counts as passages shown to the reader. Default: all of them; a
        prompting that shows fewer (ViDoRe's top `images` pages) says so."""
        return len(docs)

    def citations(self, answer: str) -> list[list[int]]:
        """For tasks whose answers cite documents: per statement of `answer`, the document
        numbers it cites (1-based positions in the documents shown). Informational; metrics
        parse the answer themselves, as the upstream evaluation does."""
        return []


# what a Task subclass may not define on itself: they are `prompting`'s (TaskPrompting's members)
PROMPTING_NAMES = frozenset(name for name in vars(TaskPrompting) if not name.startswith("_"))
