"""The prompting of a YAML task (`YamlTask.prompting`): what its file declares (answer format, citing, system
message, postprocess filters) and, in the `template` style, its Jinja2 templates. A prompt style with prompts
of its own subclasses `YamlPrompting` (a frozen dataclass: its options are fields, set with
`dataclasses.replace` in its task's `__init__`) and its `YamlTask` subclass names it (`prompting_class`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .._task.prompting import Prompt, TaskPrompting
from .._types import Document, Example
from .filters import Filter, chain

if TYPE_CHECKING:  # jinja2 loads for a task of the `template` style alone (yaml_tasks.task)
    from .templates import PromptTemplate


@dataclass(frozen=True)
class YamlPrompting(TaskPrompting):
    """The `template` style: the file's templates (`template`, `query_template`) over the task's variables."""

    renders_templates: ClassVar[bool] = True  # a style with prompts of its own sets False (the file's are refused)

    answer_format: str = "short"
    cites: bool = False
    system: str | None = None  # `prompt.system`: the system message a chat model gets
    answer_filter: Filter = chain([])  # `postprocess`: the file's filters, in order
    template: PromptTemplate | None = None
    query_template: PromptTemplate | None = None

    def variables(self, example: Example, docs: list[Document] | None, question: str | None) -> Mapping[str, object]:
        choices = example.gold.get("choices") or {}
        return {
            **example.extras,
            "question": example.question if question is None else question,
            "docs": list(docs or []),
            "meta": example.meta,
            "choices": [
                {"label": label, "text": text} for label, text in zip(choices.get("label", []), choices.get("text", []))
            ],
        }

    def build_prompt(
        self, example: Example, docs: list[Document] | None = None, question: str | None = None, **options: Any
    ) -> Prompt:
        assert self.template is not None  # the template style's, checked with the file
        return self.template.render(self.variables(example, docs, question))

    def query_text(self, example: Example) -> str:
        if self.query_template is None:
            return example.question
        return self.query_template.render(self.variables(example, None, None))

    def chat_messages(self, prompt: str) -> list[dict[str, str]]:
        system = [{"role": "system", "content": self.system}] if self.system else []
        return system + [{"role": "user", "content": prompt}]

    def postprocess(self, text: str) -> str:
        return self.answer_filter(text)

    def citations(self, answer: str) -> list[list[int]]:
        """A citing task's [n] markers per sentence (Punkt sentences, as ALCE's eval.py splits statements)."""
        if not self.cites:
            return []
        from .._shared.citations import cited_numbers
        from .._shared.sentences import sent_tokenize

        return [cited_numbers(sentence) for sentence in sent_tokenize(answer)]
