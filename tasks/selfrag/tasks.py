"""PopQA, PubHealth and ARC-Challenge from Self-RAG's evaluation files.

Prompts follow Self-RAG's baseline script (run_baseline_lm.py) by default; `instruction_format`
selects the variants:
  baseline               run_baseline_lm.py: TASK_INST + "\\n\\n### Input:\\n" + question; ARC's
                         options are never shown (upstream quirk, kept for parity)
  selfrag                run_short_form.py: ARC with options A-D (a 5th option is dropped),
                         PubHealth with "\\n\\n## Input:\\n\\n"
  baseline_with_choices  fixed: the baseline format plus every ARC option under its own label
"""
from __future__ import annotations

from typing import Any, ClassVar, Iterator

from ragbench.api import (ConfigError, Document, Example, RecordError, TEMPLATES, Task, fill, iter_jsonl, require,
                          resolve_data_file)

from .prompts import TASK_INSTRUCTIONS

INSTRUCTION_FORMATS = ("baseline", "selfrag", "baseline_with_choices")
# SMART commits Self-RAG's evaluation files as ordinary git blobs: the most durable public copy.
UPSTREAM_DATA = "https://raw.githubusercontent.com/yueshengbin/SMART/main/eval/data/"


def document_from_ctx(ctx: dict[str, Any]) -> Document:
    score = ctx.get("score")
    return Document(id=str(ctx["id"]) if ctx.get("id") is not None else None,
                    title=ctx.get("title", ""), text=ctx.get("text", ""),
                    score=float(score) if score not in (None, "") else None)


class SelfRagTask(Task):
    filename: ClassVar[str] = ""
    metrics = ("match", "match_normalized")
    gold_fields = ("answers",)

    def __init__(self, data_path=None, instruction_format: str = "baseline", template: str = "alpaca") -> None:
        if instruction_format not in INSTRUCTION_FORMATS:
            raise ConfigError(f"task {self.name}: instruction_format '{instruction_format}' is not one of "
                              f"{', '.join(INSTRUCTION_FORMATS)}")
        if template not in TEMPLATES:
            raise ConfigError(f"task {self.name}: template '{template}' is not one of {', '.join(TEMPLATES)}")
        super().__init__(data_path, instruction_format=instruction_format, template=template)
        self.instruction_format = instruction_format
        self.template = template
        self.path = None

    def prepare(self) -> None:
        self.path = resolve_data_file(self.name, self.filename, self.data_path, UPSTREAM_DATA + self.filename)

    # --- data -------------------------------------------------------------------------------
    def size_hint(self) -> int | None:
        if self.path is None:
            self.prepare()
        with open(self.path, "rb") as handle:
            return sum(1 for line in handle if line.strip())

    def examples(self) -> Iterator[Example | RecordError]:
        if self.path is None:
            self.prepare()
        path = self.path
        for index, record in iter_jsonl(path):
            if isinstance(record, RecordError):
                yield record
                continue
            try:
                example = self.parse(record, path, index)
            except RecordError as exc:
                yield exc
                continue
            example.index = index
            yield example

    def parse(self, record: dict[str, Any], path, index: int) -> Example:
        question = require(record, "question", path, index, str)
        ctxs = require(record, "ctxs", path, index, list)
        try:
            docs = [document_from_ctx(ctx) for ctx in ctxs]
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise RecordError(str(path), index + 1, f"bad passage ({exc})", "ctxs") from exc
        example_id = str(record["id"]) if record.get("id") is not None else str(index)
        return Example(id=example_id, question=question, gold=self.gold(record, path, index), docs=docs,
                       meta=self.meta(record))

    def gold(self, record: dict[str, Any], path, index: int) -> dict[str, Any]:
        if "answers" not in record and isinstance(record.get("answer"), (str, list)):
            answer = record["answer"]  # as run_short_form.py main(): a string is wrapped in a list
            return {"answers": [answer] if isinstance(answer, str) else [str(a) for a in answer]}
        answers = require(record, "answers", path, index, list)
        return {"answers": [str(a) for a in answers]}

    def meta(self, record: dict[str, Any]) -> dict[str, Any]:
        return {}

    # --- prompting --------------------------------------------------------------------------
    def instruction(self, example: Example, instruction_format: str | None = None) -> str:
        fmt = instruction_format or self.instruction_format
        if self.instruction_key is None:
            return example.question
        separator = "\n\n## Input:\n\n" if fmt == "selfrag" else "\n\n### Input:\n"
        return TASK_INSTRUCTIONS[self.instruction_key] + separator + example.question

    def query_text(self, example: Example) -> str:
        """The question as run_short_form.py poses it (task instruction, ARC's options A-D)."""
        return self.instruction(example, "selfrag")

    def task_input(self, example: Example) -> str:
        """The claim or question under the instruction; ARC adds its options (below)."""
        return example.question

    def build_prompt(self, example: Example, docs: list[Document] | None = None, question: str | None = None,
                     **options: Any) -> str:
        return fill(self.template, self.instruction(example) if question is None else question, docs)

    def postprocess(self, text: str) -> str:
        """run_baseline_lm.py: keep text before the first blank line, drop "</s>" and one leading space."""
        text = text.split("\n\n")[0].replace("</s>", "")
        return text[1:] if text.startswith(" ") else text


class PopQA(SelfRagTask):
    name = "popqa"
    filename = "popqa_longtail_w_gs.jsonl"
    # selfrag_match: run_short_form.py's per-row scoring path (PopQA is scored by both Self-RAG scripts)
    metrics = ("match", "selfrag_match", "match_normalized", "em", "f1")
    slice_fields = ("prop",)

    def meta(self, record: dict[str, Any]) -> dict[str, Any]:
        return {key: record[key] for key in ("prop", "pop", "s_wiki_title") if key in record}


class PubHealth(SelfRagTask):
    name = "pubhealth"
    filename = "health_claims_processed.jsonl"
    instruction_key = "fever"
    metrics = ("match", "selfrag_match", "label_accuracy")
    answer_format = "label"
    gold_fields = ("answers", "label")

    def gold(self, record: dict[str, Any], path, index: int) -> dict[str, Any]:
        gold = super().gold(record, path, index)
        if "label" in record:
            gold["label"] = record["label"]
        return gold


class ArcChallenge(SelfRagTask):
    name = "arc_challenge"
    filename = "arc_challenge_processed.jsonl"
    instruction_key = "arc_c"
    metrics = ("match", "selfrag_match", "choice_accuracy")
    answer_format = "choice"
    gold_fields = ("answers", "choices")

    def gold(self, record: dict[str, Any], path, index: int) -> dict[str, Any]:
        answer_key = require(record, "answerKey", path, index, str)
        choices = require(record, "choices", path, index, dict)
        labels, texts = choices.get("label"), choices.get("text")
        if not isinstance(labels, list) or not isinstance(texts, list) or len(labels) != len(texts):
            raise RecordError(str(path), index + 1, "needs equal-length 'label' and 'text' lists", "choices")
        # Both Self-RAG scripts score against [answerKey], digits unmapped.
        return {"answers": [answer_key], "answer_key": answer_key, "choices": {"label": labels, "text": texts}}

    def instruction(self, example: Example, instruction_format: str | None = None) -> str:
        fmt = instruction_format or self.instruction_format
        base = super().instruction(example, "baseline")
        choices = example.gold["choices"]
        if fmt == "selfrag":
            return base + self.selfrag_options(choices)
        if fmt == "baseline_with_choices":
            return base + "".join(f"\n{label}: {text}" for label, text in zip(choices["label"], choices["text"]))
        return base

    def task_input(self, example: Example) -> str:
        """The question and options A-D as run_short_form.py and SMART's process_arc_instruction show them."""
        return example.question + self.selfrag_options(example.gold["choices"])

    @staticmethod
    def selfrag_options(choices: dict[str, list[str]]) -> str:
        """run_short_form.py preprocess_input_data: labels 1-4 become A-D, a missing D is shown
        empty, and option E is never shown."""
        by_letter: dict[str, str] = {}
        for label, text in zip(choices["label"], choices["text"]):
            letter = {"1": "A", "2": "B", "3": "C", "4": "D"}.get(label, label)
            if letter in "ABCD":
                by_letter[letter] = text
        return "".join(f"\n{letter}: {by_letter.get(letter, '')}" for letter in "ABCD")
