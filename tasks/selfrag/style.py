"""Self-RAG's prompting protocol as prompt styles of YAML tasks (`prompt.style: selfrag`, `selfrag_squad`):
the logic a template cannot hold. The tasks themselves (data, fields, metrics, answer post-processing)
are the YAML files beside this module.

Prompts follow Self-RAG's baseline script (run_baseline_lm.py) by default; `instruction_format`
selects the variants:
  baseline               run_baseline_lm.py: TASK_INST + "\\n\\n### Input:\\n" + question; ARC's
                         options are never shown (upstream quirk, kept for parity)
  selfrag                run_short_form.py: ARC with options A-D (a 5th option is dropped),
                         PubHealth with "\\n\\n## Input:\\n\\n"
  baseline_with_choices  fixed: the baseline format plus every ARC option under its own label
`template` picks the model's prompt format (Self-RAG's PROMPT_DICT: alpaca, llama_chat, open_instruct).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from ragbench.api import ConfigError, Document, Example, Prompt
from ragbench.api.text import TEMPLATES, fill
from ragbench.api.yaml_tasks import RecordPlace, YamlPrompting, YamlTask, yaml_task_class

from ..shared.task_options import check_choices
from .formats import SquadFormat
from .prompts import TASK_INSTRUCTIONS

INSTRUCTION_FORMATS = ("baseline", "selfrag", "baseline_with_choices")
PASSAGES = ("none", "context")


@dataclass(frozen=True)
class SelfRagPrompting(YamlPrompting):
    """Self-RAG's baseline prompts: the task instruction (`instruction_key`) over the question, in the
    model's prompt format, with run_baseline_lm.py's passage block when there are documents."""

    renders_templates = False
    instruction_key: str | None = None  # the task's (StandingInstruction); None: the question alone
    instruction_format: str = "baseline"
    prompt_format: str = "alpaca"  # the `template` option: a key of TEMPLATES

    def instruction(self, example: Example, instruction_format: str | None = None) -> str:
        fmt = instruction_format or self.instruction_format
        if self.instruction_key is None:
            return example.question
        choices = example.gold.get("choices")
        # run_short_form.py: ARC keeps the baseline separator and adds its options; PubHealth's changes
        separator = "\n\n## Input:\n\n" if fmt == "selfrag" and choices is None else "\n\n### Input:\n"
        base = TASK_INSTRUCTIONS[self.instruction_key] + separator + example.question
        if choices is None or fmt == "baseline":
            return base
        if fmt == "selfrag":
            return base + selfrag_options(choices)
        return base + "".join(f"\n{label}: {text}" for label, text in zip(choices["label"], choices["text"]))

    def query_text(self, example: Example) -> str:
        """The question as run_short_form.py poses it (task instruction, ARC's options A-D)."""
        return self.instruction(example, "selfrag")

    def build_prompt(
        self, example: Example, docs: list[Document] | None = None, question: str | None = None, **options: Any
    ) -> Prompt:
        return fill(self.prompt_format, self.instruction(example) if question is None else question, docs)


class SelfRagPrompt(YamlTask):
    """A Self-RAG-format task, prompted as Self-RAG's baselines (`SelfRagPrompting`)."""

    prompting_class = SelfRagPrompting
    prompting: SelfRagPrompting
    instruction_key: ClassVar[str | None] = None  # a file's `instruction_key` (StandingInstruction)

    def __init__(
        self, data_path: str | Path | None = None, instruction_format: str = "baseline", template: str = "alpaca"
    ) -> None:
        check_choices(
            self.name,
            {"instruction_format": INSTRUCTION_FORMATS, "template": TEMPLATES},
            instruction_format=instruction_format,
            template=template,
        )
        super().__init__(data_path)
        self.args.update(instruction_format=instruction_format, template=template)
        self.prompting = replace(
            self.prompting,
            instruction_key=self.instruction_key,
            instruction_format=instruction_format,
            prompt_format=template,
        )

    def parse(self, record: Any, place: RecordPlace) -> Example:
        """The mapped example; Self-RAG's scripts read `answers` as a list, so another kind of value there
        is a bad record (a string is one answer only in `answer`)."""
        if isinstance(record, dict) and not isinstance(record.get("answers", []), list):
            raise place.error(f"expected list, got {type(record['answers']).__name__}", "answers")
        return super().parse(record, place)

    def task_input(self, example: Example) -> str:
        """The claim or question under the instruction; a multiple-choice question adds its options A-D as
        run_short_form.py and SMART's process_arc_instruction show them."""
        choices = example.gold.get("choices")
        return example.question + (selfrag_options(choices) if choices is not None else "")


class SquadPrompt(SelfRagPrompt):
    """SQuAD as SMART evaluates it (appendix B.1): the question alone in Self-RAG's prompt format, over
    passages the run's retriever finds (passages=none, SMART's setting), or over the record's own
    paragraph (passages=context, reading comprehension)."""

    def __init__(self, data_path: str | Path | None = None, passages: str = "none", template: str = "alpaca") -> None:
        check_choices(self.name, {"passages": PASSAGES}, passages=passages)
        super().__init__(data_path, template=template)
        self.args.pop("instruction_format")  # SQuAD has no task instruction: the question alone
        self.passages_from = self.args["passages"] = passages
        self.own_documents = passages == "context"

    def parse(self, record: Any, place: RecordPlace) -> Example:
        example = super().parse(record, place)
        if self.passages_from == "none":
            example.docs = []
        return example


def selfrag_options(choices: dict[str, list[str]]) -> str:
    """run_short_form.py preprocess_input_data: labels 1-4 become A-D, a missing D is shown empty, and
    option E is never shown."""
    by_letter: dict[str, str] = {}
    for label, text in zip(choices["label"], choices["text"]):
        letter = {"1": "A", "2": "B", "3": "C", "4": "D"}.get(label, label)
        if letter in "ABCD":
            by_letter[letter] = text
    return "".join(f"\n{letter}: {by_letter.get(letter, '')}" for letter in "ABCD")


STYLES = {"selfrag": SelfRagPrompt, "selfrag_squad": SquadPrompt}


def declared_task(filename: str) -> type[YamlTask]:
    """The task declared by one of the YAML files beside this module (for code that imports its class)."""
    return yaml_task_class(
        str(resources.files(__package__).joinpath(filename)), _style, f"{__package__}:{filename}", _format
    )


def _format(name: str) -> SquadFormat:
    if name != "squad":
        raise ConfigError(f"unknown record format '{name}' (the Self-RAG tasks' own: squad)")
    return SquadFormat()


def _style(name: str) -> type[YamlTask]:
    if name not in STYLES:
        raise ConfigError(f"unknown prompt style '{name}' (the Self-RAG styles: {', '.join(STYLES)})")
    return STYLES[name]
