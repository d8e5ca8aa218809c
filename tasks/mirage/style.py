"""MedRAG's prompts (Teddy-XiongGZ/MedRAG src/template.py, as src/medrag.py's `medrag_answer` sends them) as
the prompt style `medrag` of MIRAGE's YAML tasks: a system and a user message, chain-of-thought
(`general_cot_system`, `general_cot`) when no document is shown, else the RAG prompt (`general_medrag_system`,
`general_medrag`) over the documents shown. Two system messages, chosen by the documents, are more than a
YAML `prompt.system` can say."""

from __future__ import annotations

from typing import Any

from ragbench.api import Document, Example
from ragbench.api.yaml_tasks import RecordPlace, YamlPrompting, YamlTask

COT_SYSTEM = (
    "You are a helpful medical expert, and your task is to answer a multi-choice medical question. "
    "Please first think step-by-step and then choose the answer from the provided options. Organize your "
    'output in a json formatted as Dict{"step_by_step_thinking": Str(explanation), "answer_choice": '
    "Str{A/B/C/...}}. Your responses will be used for research purposes only, so please have a definite "
    "answer."
)
RAG_SYSTEM = (
    "You are a helpful medical expert, and your task is to answer a multi-choice medical question using "
    "the relevant documents. Please first think step-by-step and then choose the answer from the provided "
    'options. Organize your output in a json formatted as Dict{"step_by_step_thinking": Str(explanation), '
    '"answer_choice": Str{A/B/C/...}}. Your responses will be used for research purposes only, so please '
    "have a definite answer."
)
QUESTION = (
    "Here is the question:\n{question}\n\nHere are the potential choices:\n{options}\n\n"
    "Please think step-by-step and generate your output in json:\n"
)
DOCUMENTS = "\nHere are the relevant documents:\n{context}\n\n"
ANSWER_LABELS = ("A", "B", "C", "D")  # evaluate.py's answer2idx: any other answer stops it (KeyError)


def options_text(example: Example) -> str:
    """The options as medrag_answer lists them: "A. text" lines in label order."""
    choices = example.gold.get("choices") or {"label": [], "text": []}
    return "\n".join(f"{label}. {text}" for label, text in zip(choices["label"], choices["text"]))


def context_text(docs: list[Document]) -> str:
    """The documents as medrag_answer joins them: "Document [i] (Title: t) text", i from 0, one per line.
    MedRAG then cuts the joined text to the model's context length in its tokens (e.g. 15,000 for GPT-3.5):
    here the system's top_n sets how many are shown."""
    return "\n".join(f"Document [{i}] (Title: {doc.title}) {doc.text}" for i, doc in enumerate(docs))


class MedRagPrompting(YamlPrompting):
    """MedRAG's CoT prompt in closed book, its RAG prompt over the documents a system shows; systems that
    write their own prompts get the question and options as i-MedRAG poses them."""

    renders_templates = False  # the prompts are MedRAG's, above

    def build_prompt(
        self, example: Example, docs: list[Document] | None = None, question: str | None = None, **options: Any
    ) -> list[dict[str, str]]:
        question_block = QUESTION.format(
            question=example.question if question is None else question, options=options_text(example)
        )
        if docs:
            return [
                {"role": "system", "content": RAG_SYSTEM},
                {"role": "user", "content": DOCUMENTS.format(context=context_text(docs)) + question_block},
            ]
        return [{"role": "system", "content": COT_SYSTEM}, {"role": "user", "content": "\n" + question_block}]

    def query_text(self, example: Example) -> str:
        """medrag.py `i_medrag_answer`'s QUESTION_PROMPT: the question, a blank line, the options. Retrieval
        searches the bare question (MIRAGE's question-only retrieval)."""
        return f"Here is the question:\n{example.question}\n\n{options_text(example)}"


class MedRagPrompt(YamlTask):
    """MIRAGE's records as MedRAG reads them, prompted as MedRAG prompts (`MedRagPrompting`)."""

    prompting_class = MedRagPrompting

    def parse(self, record: Any, place: RecordPlace) -> Example:
        """A record as MedRAG and evaluate.py read it: options a mapping of label -> text (medrag_answer lists
        its keys) and the answer one of A-D among them; any other record is bad, where upstream stops."""
        example = super().parse(record, place)
        if not isinstance(record.get("options"), dict):
            raise place.error(
                f"expected a mapping of option label -> text, got {type(record['options']).__name__}", "options"
            )
        labels = example.gold["choices"]["label"]
        if example.gold["answer_key"] not in ANSWER_LABELS or example.gold["answer_key"] not in labels:
            raise place.error(
                f"answer {example.gold['answer_key']!r} is not among the options "
                f"({', '.join(labels) or 'none'}) or not one of A-D, those evaluate.py reads",
                "answer",
            )
        return example
