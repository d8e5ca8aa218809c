"""FlashRAG's multimodal prompt templates (flashrag/prompt/mm_prompt.py, commit 1ee5249): one user turn holding the
pictures of the retrieved documents that have one, in rank order, then the question's picture, then the text.
Each document is a line of the reference: a picture's document gives its text (GAOKAO-MM's, its gold answer too),
a text passage its FlashRAG `contents` ("title\\ntext").
"""

from __future__ import annotations

from typing import Any

from ragbench.api import Document, Example
from ragbench.api.flashrag import title_and_text

# MMPromptTemplate.BASE_USER_PROMPT
MM_USER = (
    "{reference}\nBased on the above examples, answer the following question. Only give me the final choices.\n"
    "Question: {question}\nAnswer: "
)
_MATHVISTA_HEAD = (
    "You are an AI assistant designed to solve mathematical and visual reasoning problems. "
    "Below is {kind} that requires you to analyze the given information and {task}.\n\n"
    "### Reference Information:\n{{reference}}\n\n"
    "### Question:\n{{question}}\n\n"
    "### Instructions:\n"
    "{instruction}\n\n"
    "### Answer:\n"
)
# MathVistaPromptTemplate's two prompts, by the example's `question_type`
MATHVISTA_USER = {
    "free_form": _MATHVISTA_HEAD.format(
        kind="a question", task="provide a detailed answer", instruction="Only give me the final answer."
    ),
    "multi_choice": _MATHVISTA_HEAD.format(
        kind="a multiple-choice question",
        task="select the correct choice",
        instruction="Only give me the correct option letter, e.g., A, B, C, D.",
    ),
}
_GAOKAO_HEAD = (
    "请你做一道{subject}选择题\n请你结合文字和图片一步一步思考,并将思考过程写在【解析】和<eoe>之间。{instruction}\n"
    "例如：{example}\n请你严格按照上述格式作答。\n"
)
GAOKAO_USER = _GAOKAO_HEAD + "你可以参考一些知识: {reference}。题目如下：{question}"  # GAOKAOMMPromptTemplate's
GAOKAO_ZERO_SHOT_USER = _GAOKAO_HEAD + "题目如下：{question}"  # rum_mm_exp.py's for GAOKAO-MM without retrieval
GAOKAO_INSTRUCTION = {
    "single_choice": "你将从A，B，C，D等选项中选出正确的答案，并写在【答案】和<eoa>之间。",
    "multiple_choice": "你将从A，B，C，D等选项中选出所有符合题意的答案，并写在【答案】和<eoa>之间。",
}
GAOKAO_EXAMPLE = {
    "single_choice": "【答案】: A <eoa>\n完整的题目回答的格式如下：\n【解析】 ... <eoe>\n【答案】 ... <eoa>",
    "multiple_choice": "【答案】 AB <eoa>\n完整的题目回答的格式如下：\n【解析】 ... <eoe>\n【答案】... <eoa>",
}
# How each template writes a passage and a picture's document: {idx} (1-based), {contents}, {text}, {answer}
LINES = {
    "mm": ("Example {idx}: {contents}\n", "Example {idx}: {text}\n"),
    "gaokao": ("参考内容 {idx}: {contents}\n", "参考内容 {idx}: {text}, 标准答案: {answer}\n"),
}


def reference(docs: list[Document], template: str) -> tuple[list[Any], str]:
    """The retrieved documents' pictures, in order, and the reference text naming every document."""
    passage, picture = LINES["gaokao" if template == "gaokao" else "mm"]
    pictures, lines = [], []
    for idx, doc in enumerate(docs, 1):
        if doc.image is None:
            title, text = title_and_text(doc)
            lines.append(passage.format(idx=idx, contents=f"{title}\n{text}"))
        else:
            pictures.append(doc.image)
            answer = gold_answer(doc) if "{answer}" in picture else ""
            lines.append(picture.format(idx=idx, text=doc.text, answer=answer))
    return pictures, "".join(lines)


def gold_answer(doc: Document) -> str:
    """A GAOKAO-MM picture's first gold answer (`golden_answers` of its corpus row)."""
    answers = doc.metadata.get("golden_answers")
    if not isinstance(answers, list) or not answers:
        raise ValueError(f"flashrag_mm template=gaokao: document {doc.id} has no golden_answers to show")
    return str(answers[0])


def question_type(example: Example, kinds: Any, template: str) -> str:
    """The example's `question_type`, one of `kinds`, else one line saying which the template reads."""
    kind = example.meta.get("question_type")
    if kind not in kinds:
        raise ValueError(
            f"flashrag_mm template={template}: example {example.id} has question_type {kind!r}; it prompts "
            + " or ".join(repr(k) for k in kinds)
        )
    return str(kind)


def user_text(template: str, example: Example, reference_text: str, retrieved: bool) -> str:
    """The turn's text: `template` "mm" (MMPromptTemplate), "mathvista" (MathVistaPromptTemplate, its prompt
    chosen by the example's `question_type`) or "gaokao" (GAOKAOMMPromptTemplate; without retrieval, rum_mm_exp.py's
    zero-shot prompt), GAOKAO-MM's from the example's `question_type` and `subject`."""
    if template == "mm":
        return MM_USER.format(question=example.question, reference=reference_text)
    if template == "mathvista":
        kind = question_type(example, MATHVISTA_USER, template)
        return MATHVISTA_USER[kind].format(question=example.question, reference=reference_text)
    kind = question_type(example, GAOKAO_INSTRUCTION, template)
    return (GAOKAO_USER if retrieved else GAOKAO_ZERO_SHOT_USER).format(
        subject=example.meta.get("subject", ""),
        instruction=GAOKAO_INSTRUCTION[kind],
        example=GAOKAO_EXAMPLE[kind],
        question=example.question,
        reference=reference_text,
    )


def messages(template: str, example: Example, docs: list[Document], retrieved: bool) -> list[dict[str, Any]]:
    """The one user turn FlashRAG sends: the documents' pictures, the question's picture (where the example has
    one; FlashRAG's `mm` and `gaokao` templates would send an empty image part), then the text."""
    pictures, reference_text = reference(docs, template)
    pictures.extend(example.images[:1])
    parts: list[dict[str, Any]] = [{"type": "image", "image": picture} for picture in pictures]
    parts.append({"type": "text", "text": user_text(template, example, reference_text, retrieved)})
    return [{"role": "user", "content": parts}]
