"""ASQA as the Self-RAG and SMART papers evaluate it: ALCE's `asqa_eval_gtr_top100.json` (948 questions),
the top-5 GTR documents, Self-RAG's prompt format instead of ALCE's, and ALCE eval.py's scoring (str_em,
ROUGE-Lsum, citation recall/precision with an NLI model, MAUVE opt-in).

Prompts (AkariAsai/self-rag): the instruction is TASK_INST["asqa"] + "## Input:\\n\\n" + question (no
blank line before "## Input", as run_long_form_static.py builds it); generic systems wrap it in the
baseline templates (run_baseline_lm.py: "[i] title\\ntext" paragraphs); Self-RAG's own long-form
prompt is `query_text` inside its "### Instruction:" template. Outputs are scored as eval.py scores
Self-RAG's result file: first line only, citations removed for correctness.

Data loading, gold and metrics are ALCE's (`alce_asqa`); only the prompting differs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ragbench.api import Document, Example
from ragbench.api.text import TEMPLATES, fill

from ..shared.task_options import check_choices
from .tasks import AlceAsqa, AlceAsqaPrompting, eval_py_truncation

# Self-RAG's TASK_INST["asqa"] (retrieval_lm/utils.py), byte-exact.
INSTRUCTION = (
    "Answer the following question. The question may be ambiguous and have multiple correct "
    "answers, and in that case, you have to provide a long-form answer including all correct answers."
)


@dataclass(frozen=True)
class SelfRagAsqaPrompting(AlceAsqaPrompting):
    """Self-RAG's instruction in run_baseline_lm.py's `template`; ALCE's citations, no chat system message."""

    template: str = "alpaca"

    def query_text(self, example: Example) -> str:
        """run_long_form_static.py's instruction (TASK_INST + "## Input:\\n\\n" + question)."""
        return INSTRUCTION + "## Input:\n\n" + example.question

    def prompt_question(self, example: Example) -> str:
        return self.query_text(example)

    def compose(self, question: str, docs: list[Document], shot: int) -> str:
        """run_baseline_lm.py's template around the instruction, with "[i] title\\ntext" paragraphs (no
        demonstrations: `shot` is ALCE's, taken in its place so that arguments mean what they mean there)."""
        return fill(self.template, question, docs, self.ndoc)

    def chat_messages(self, prompt: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": prompt}]

    def postprocess(self, text: str) -> str:
        """eval.py on Self-RAG's outputs: the first line, "<|im_end|>" removed (no run.py cleanup)."""
        return eval_py_truncation(text.replace("</s>", ""))


class Asqa(AlceAsqa):
    name = "asqa"
    instruction_key = "asqa"
    prompting_class = SelfRagAsqaPrompting
    prompting: SelfRagAsqaPrompting

    def __init__(
        self,
        data_path: str | Path | None = None,
        template: str = "alpaca",
        ndoc: int = 5,
        citations: bool = True,
        mauve: bool = False,
        retrieval: str | None = None,
    ) -> None:
        super().__init__(data_path, ndoc=ndoc, citations=citations, mauve=mauve, retrieval=retrieval)
        check_choices(self.name, {"template": TEMPLATES}, template=template)
        self.args["template"] = template
        self.prompting = replace(self.prompting, template=template)
        for alce_only in ("variant", "use_shorter", "shot", "seed", "run_py_cleanup", "use_sub_questions"):
            self.args.pop(alce_only, None)

    def task_input(self, example: Example) -> str:
        return example.question

    def demonstration(self) -> None:
        return None  # Self-RAG's prompt shows no worked example
