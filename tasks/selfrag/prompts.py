"""Self-RAG's task instructions, byte-exact (its prompt templates: ragbench._shared.instruction_templates).

The strings reproduce AkariAsai/self-rag retrieval_lm/utils.py (TASK_INST; MIT licence) so that
prompts match the paper's runs; tests compare them with prompts built by the upstream code.
"""

from __future__ import annotations

TASK_INSTRUCTIONS = {
    "fever": "Is the following statement correct or not? Say true if it's correct; otherwise say false.",
    "arc_c": "Given four answer candidates, A, B, C and D, choose the best answer choice.",
}
