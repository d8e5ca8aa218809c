"""FlashRAG's ReaRAG prompts, verbatim (they are data): `ReaRAGPipeline`, flashrag/pipeline/reasoning_pipeline.py
at commit 1ee5249 (:490-539), and its generation parameters (:564-573)."""

from __future__ import annotations

SYSTEM = """Your task is to solve a question answering task. To improve your solving accuracy, please conduct reasoning process interleaving Thought, Action, Observation steps. Thought can reason about the current situation, and Action are in the form of function, there are two types:

# Available functions:
(1) search
{
    "name": "search",
    "description": "It can help you find useful information through the internet or local knowledge base. You can use this tool to access external knowledge",
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "description": "what you want to search"
            }
        },
        "required": [
            "query"
        ]
    }
}

(2) finish
{
    "name": "finish",
    "description": "You can use this function to make a conclusion from the reasoning process and give the final answer. The reasoining process is completed after this `finish` function is called",
    "parameters": {
        "type": "object",
        "properties": {
            "answer": {
                "description": "the final answer"
            }
        },
        "required": [
            "answer"
        ]
    }
}

Please follow the format strictly.
"""
LONG_ANSWER = "If the Question is comparison type, do not refer the given Context, else, answer the Question based on the given Contexts.\n\nContext: {}\n\nQuestion: {}\n\nAnswer:"
SHORT_ANSWER = """The Reference Answer is the final answer to the question. It's the final deterministic answer, your task is to give concise version of it. Only give me the short answer and do not output any other words.
[Question]
{question}
[Reference answer]
{reference_ans}

Only give me the short answer and do not output any other words. For yes, or no answer, only answer it short. Give the shortest answer possible.
"""

ACTION_STOP = ("<|user|>", "<|observation|>", "<|assistant|>")  # sample_generate_params, with top_p 0.85
SHORT_ANSWER_STOP = ("<|user|>", "<|endoftext|>", "<|assistant|>")  # rag_generate_params, with top_p 0.7
