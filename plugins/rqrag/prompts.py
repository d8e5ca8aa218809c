"""RQ-RAG's prompt strings and special tokens as FlashRAG's `RQRAGPipeline` writes them
(flashrag/pipeline/active_pipeline.py:1045-1119, commit 1ee5249), verbatim."""

from __future__ import annotations

# the tokens a path is expanded on, in FlashRAG's order; the last one asks for the answer
QUERY_TOKENS = ("[S_Rewritten_Query]", "[S_Decomposed_Query]", "[S_Disambiguated_Query]")
ANSWER_TOKEN = "[A_Response]"
END = "[EOS]"
STOP = ("[EOS]", "</s>")

SYSTEM = (
    "Given a question that requires multi-hop reasoning, you need to decompose the question and answer based "
    "on the given context. Please provide a short and concise response."
)


def first_prompt(question: str, eos_token: str) -> str:
    """`preprocess_eval_data`: the model's chat format with its tokenizer's eos token."""
    return f"<s><|system|>\n{SYSTEM}" + eos_token + "\n<|user|>\n" + question + eos_token + "\n" + "<|assistant|>\n"


def evidences(passages: list[tuple[str, str]]) -> str:
    """`format_evidences`, inside the [R_Evidences] tags a path continues with."""
    body = "".join(f"Title: {title}\nText: {text}\n" for title, text in passages)
    return f"[R_Evidences]{body}[/R_Evidences]"
