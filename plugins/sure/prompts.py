"""SuRe's four prompts as FlashRAG writes them (flashrag/pipeline/branching_pipeline.py:79-122 at commit
1ee5249), verbatim: adjacent string literals there join without a space ("After readingthe passages");
`FIXED` has the spaces put back (the `sure_fixed` system)."""

from __future__ import annotations

from types import MappingProxyType

CANDIDATES = (
    "Below are {N} passages related to the question at the end. After reading"
    "the passages, provide two correct candidates for the answer to the"
    "question at the end. Each answer should be in the form: (a) xx, (b)"
    "yy, and should not exceed 3 words for each candidate.\n\n"
    "{reference}"
    "Question: {question}\n"
    "Answer:"
)

SUMMARY = (
    "Reference:\n{reference}\n"
    "Your job is to act as a professional writer. You need to write a"
    "good-quality passage that can support the given prediction about the"
    "question only based on the information in the provided supporting passages.\n"
    "Now, let's start. After you write, please write [DONE] to indicate you"
    "are done. Do not write a prefix (e.g., 'Response:') while writing a passage.\n"
    "Question: {question}\n"
    "Prediction: {pred}\n"
    "Passage:"
)

VALIDATION = (
    "Question: {question}\n"
    "Prediction: {pred}\n"
    "Passage: {summary}\n"
    "Does the passage correctly support the prediction? Choices: [True,False].\n"
    "Answer:"
)

RANKING = (
    "Question: Given the following passages, determine which one provides a"
    "more informative answer to the subsequent question.\n"
    "Passage 1: {summary1}\n"
    "Passage 2: {summary2}\n"
    "Target Question: {question}\n"
    "Your Task:\n"
    "Identify which passage (Passage 1 or Passage 2) is more relevant and"
    "informative to answer the question at hand. Choices: [Passage 1,Passage 2].\n"
    "Answer:"
)

# Where FlashRAG's literals join words: the text as written, and the text with the space.
JOINED_WORDS = {
    "After readingthe": "After reading the",
    "to thequestion": "to the question",
    "(b)yy": "(b) yy",
    "write agood-quality": "write a good-quality",
    "about thequestion": "about the question",
    "youare done": "you are done",
    "provides amore": "provides a more",
    "relevant andinformative": "relevant and informative",
}


def with_spaces(prompt: str) -> str:
    """`prompt` with the missing spaces put back."""
    for joined, spaced in JOINED_WORDS.items():
        prompt = prompt.replace(joined, spaced)
    return prompt


REFERENCE = "Passage #{idx} Title: {title}\nPassage #{idx} Text: {text}\n\n"  # SuRePipeline.format_ref
PROMPTS = MappingProxyType({"candidates": CANDIDATES, "summary": SUMMARY, "validation": VALIDATION, "ranking": RANKING})
FIXED = MappingProxyType({name: with_spaces(prompt) for name, prompt in PROMPTS.items()})
