"""Self-RAG's instructions and prompt templates, byte-exact.

The strings reproduce AkariAsai/self-rag retrieval_lm/utils.py (TASK_INST, PROMPT_DICT; MIT
licence) so that prompts match the paper's runs; tests compare them with prompts built by the
upstream code.
"""
from __future__ import annotations

TASK_INSTRUCTIONS = {
    "fever": "Is the following statement correct or not? Say true if it's correct; otherwise say false.",
    "arc_c": "Given four answer candidates, A, B, C and D, choose the best answer choice.",
    "asqa": ("Answer the following question. The question may be ambiguous and have multiple correct "
             "answers, and in that case, you have to provide a long-form answer including all correct answers."),
}

# name -> (template without documents, template with documents); the names are PROMPT_DICT's.
TEMPLATES = {
    "alpaca": (
        "### Instruction:\n{instruction}\n\n### Response:\n",
        "Below is an instruction that describes a task. Write a response that appropriately completes "
        "the request.\n\n### Paragraph:\n{paragraph}\n\n### Instruction:\n{instruction}\n\n### Response:",
    ),
    "llama_chat": ("[INST]{instruction}[/INST]", "[INST]{paragraph}\n{instruction}[/INST]"),
    "open_instruct": ("<user>\n{instruction}\n<assistant>\n",
                      "<user>\nReference:{paragraph}\n{instruction}\n<assistant>\n"),
}
