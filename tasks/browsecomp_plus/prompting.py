"""The reader's prompt of the `browsecomp_plus` task, for systems that read retrieved documents once (vanilla,
closed_book and the other non-agent systems): BrowseComp-Plus's QUERY_TEMPLATE_ORACLE (search_agent/prompts.py),
the one prompt of the benchmark that shows documents instead of offering tools. The benchmark does not say how
its `{EvidenceDocuments}` are laid out; here each document is its docid in brackets, then its text (the docids
the agent prompts ask answers to cite). Without documents the question is asked with the list empty.
The whole reply is the response the judge reads (evaluate_run.py extracts the exact answer itself).
"""

from __future__ import annotations

from typing import Any

from ragbench.api import Document, Example, Prompt, TaskPrompting

ORACLE_TEMPLATE = """
I will give you a question and a set of evidence documents, which contains all the necessary information to answer the question. You need to reason and answer the question based on these evidence documents, step by step.

Question: {Question}

Evidence documents:
{EvidenceDocuments}

Your final answer should be in the following format:
Exact Answer: {{your succinct, final answer}}
"""


def evidence_documents(docs: list[Document]) -> str:
    """The documents as the template's `{EvidenceDocuments}`: `[docid] text`, one blank line between."""
    return "\n\n".join(f"[{doc.id}] {doc.text}" for doc in docs)


class BrowseCompPlusPrompting(TaskPrompting):
    """QUERY_TEMPLATE_ORACLE over the documents a system shows (none: closed book)."""

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        question = options.get("question") or example.question
        return ORACLE_TEMPLATE.format(Question=question, EvidenceDocuments=evidence_documents(list(docs or [])))
