"""The chat the TREC 2025 RAG support judge is given for one (sentence, cited segment) pair: the organisers'
released support-evaluation script's system message and instruction, byte for byte. The instruction is written
there as an indented block, filled by str.format and stripped, so each line after the first keeps its four spaces
of indentation; `instruction` builds it the same way."""

from __future__ import annotations

SYSTEM = "You are a helpful assistant in verying whether the statement can by supported by its corresponding citation."

_LINES = (
    "",
    "In this task, you will evaluate whether each statement is supported by its corresponding citation document. ",
    "Note that the system responses may appear very fluent and well-formed, but contain slight inaccuracies that are "
    "not easy to discern at first glance. ",
    "Pay close attention to the text. Read it carefully as you would when proofreading. ",
    "",
    'It may be helpful to ask yourself whether it is accurate to say "according to the citation document" with a',
    "statement following this phrase. Be sure to check all of the information in the statement. You will be given "
    "three options:",
    "",
    '- "Full Support": All of the information in the statement is supported in the citation document.',
    '- "Partial Support": Only some of the information is supported in the citation document, but other parts of '
    "the information are missing from the citation document.",
    '- "No Support": This citation document does not support any part of the statement.',
    "",
    "Think step-by-step under the <think> </think> tokens and please provide your response based on the information "
    "in the citation document. If you are unsure, use your best judgment. ",
    'Respond as either "Full Support", "Partial Support", or "No Support" under the <support>...</support> XML tag. ',
    "Provide your reasoning under the <reasoning>...</reasoning> XML tag and highlight the most likely sentence in "
    "the citation document your decision under the <evidence>...</evidence> XML tag. ",
    'If the label is "No Support", please respond with <evidence>No evidence found</evidence>.',
    "",
    "Response (for reference): {answer}",
    "Statement (from the response): {statement}",
    "Citation document: {citation}",
    "",
    "Response:",
    "",
)
# every line indented but the blank ones, of which only the first keeps its indentation
TEMPLATE = "\n".join("    " + line if line or i == 4 else line for i, line in enumerate(_LINES))


def instruction(answer: str, statement: str, citation: str) -> str:
    return TEMPLATE.format(answer=answer, statement=statement, citation=citation).strip()


def messages(answer: str, statement: str, citation: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": instruction(answer, statement, citation)},
    ]
