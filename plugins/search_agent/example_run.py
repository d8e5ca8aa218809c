"""What one example's loop of `search_agent` accumulates: BrowseComp-Plus's run-file record of it (its `result`
items, tool-call counts, retrieved documents) and the prediction's extras made of it."""

from __future__ import annotations

import json
from collections import Counter

from ragbench.api import Document

from .shapes import AgentExtras, RunItem
from .tools import Client


class SearchAgentRun:
    """What one example's loop accumulates, recorded as BrowseComp-Plus's run file records it (`result`: a
    tool_call item per call with its arguments text and output, an output_text item per assistant text)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.result: list[RunItem] = []
        self.calls: Counter[str] = Counter()
        self.retrieved: set[str] = set()
        self.docs: list[Document] = []
        self.output_tokens = 0
        self.invalid_calls = 0  # calls whose arguments did not fit their tool's parameters

    def reasoned(self, items: str | None) -> None:
        """The reasoning items of a Responses-API answer, recorded before its text and calls (the order a
        reasoning model answers in)."""
        for item in json.loads(items) if items is not None else ():
            if item.get("type") == "reasoning":
                output = self.client.reasoning_output(item)
                self.result.append({"type": "reasoning", "tool_name": None, "arguments": None, "output": output})

    def said(self, text: str) -> None:
        if text.strip():
            self.result.append({"type": "output_text", "tool_name": None, "arguments": None, "output": text.strip()})

    def called(
        self, name: str, arguments: str, output: str, failed: bool, docs: tuple[Document, ...], invalid: bool = False
    ) -> None:
        self.invalid_calls += invalid
        if self.client.counts_failed_calls or not failed:
            self.calls[self.client.counted_name(name)] += 1
        recorded = None if failed and self.client.counts_failed_calls else output
        self.result.append({"type": "tool_call", "tool_name": name, "arguments": arguments, "output": recorded})
        if docs:
            self.docs.extend(docs)
            self.retrieved.update(str(doc.id) for doc in docs)

    def extras(self, status: str, turns: int) -> AgentExtras:
        return {
            "status": status,
            "tool_call_counts": dict(self.calls),
            "retrieved_docids": sorted(self.retrieved),
            "turns": turns,
            "output_tokens": self.output_tokens,
            "invalid_tool_calls": self.invalid_calls,
            "result": self.result,
        }
