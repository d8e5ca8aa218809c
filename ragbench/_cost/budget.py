"""What a run spent per example, measured from its samples' traces (results.json `budget`), and the work that
bought nothing (`repeated_work`): searches whose results repeat the search before them in the example, empty or
whitespace queries, searches that found no passage (`empty_results`: a query BM25 analyses to nothing, stopwords
alone, or whose words are in no passage, returns none), LLM calls whose request repeats an earlier one of the example
(the cache answers them) and, where a model was offered tools, the tool calls it made and those whose arguments are
not read (`ToolCall.error`). A system that searches with queries of its own over the example's provided passages gets the same passages for
every query: these counts say so, as format adherence says a model ignored a format."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import groupby
from typing import Any, cast

from .._records import SampleRecord
from .._types import Prediction, Step
from .._values.json_values import MAX_DEPTH, json_list, json_object
from .._values.tool_calls import ToolCall, tools_of
from .cost_schema import Budget, CostFigures, CostSections, RepeatedWork

# The quantities of `budget`, each a mean per scored example, in the order results.json and the tables show them.
QUANTITIES = {
    "llm_calls": "LLM calls",
    "prompt_tokens": "prompt tokens",
    "output_tokens": "output tokens",
    "searches": "searches",
    "passages_retrieved": "distinct passages retrieved",
    "passages_shown": "passages shown to the reader",
}
NO_TRACE = "no scored sample carries a trace (outputs made elsewhere, e.g. the recorded system)"
NO_TOKENS = "the engine reported no token counts"
NO_IDS = "some retrieved passages have no id"
DOCS_UNKNOWN = "some predictions do not say which passages were shown (docs_unknown)"
DOCS_UNKNOWN_KEY = "docs_unknown"  # ragbench._types.Prediction.DOCS_UNKNOWN: an extras key of the prediction


class BudgetTally:
    """`budget` and `repeated_work` of a task, filled sample by sample; only scored examples count (a failed
    example's trace stops where it failed)."""

    def __init__(self) -> None:
        self.examples = 0
        self.totals = dict.fromkeys(QUANTITIES, 0)
        self.traced = 0  # scored examples with at least one step
        self.tokens_reported = False
        self.ids_missing = self.docs_unknown = False
        self.repeats = {
            "searches": 0,
            "repeated_searches": 0,
            "empty_queries": 0,
            "llm_calls": 0,
            "repeated_llm_calls": 0,
        }

    def add(self, record: SampleRecord) -> None:
        if record.error is not None or record.bad_record:
            return
        self.examples += 1
        self.traced += bool(record.trace)
        self.docs_unknown |= bool(record.extras.get(DOCS_UNKNOWN_KEY))
        read = record.extras.get(Prediction.DOCS_READ)  # fewer than it keeps: what the prompt showed
        self.totals["passages_shown"] += read if isinstance(read, int) else len(record.docs)
        requests: list[Any] = []  # compared as they are: equal requests are equal (no digest of every prompt at
        # a run's end; an example makes tens of calls, rarely hundreds)
        retrieved: set[Any] = set()
        previous: list[Any] | None = None
        for step in record.trace:
            if step.kind == "llm":
                self._llm_call(step, requests)
            elif step.kind == "retrieval":
                ids = json_list((step.response or {}).get("ids"))
                self.ids_missing |= any(i is None for i in ids)
                retrieved.update(ids)
                self.totals["searches"] += 1
                self.repeats["searches"] += 1
                self.repeats["repeated_searches"] += previous is not None and ids == previous
                self.repeats["empty_queries"] += not str(step.request.get("query") or "").strip()
                if not ids and step.request.get("k"):
                    self.repeats["empty_results"] = self.repeats.get("empty_results", 0) + 1
                previous = ids
        self.totals["passages_retrieved"] += len(retrieved)

    def _llm_call(self, step: Step, requests: list[Any]) -> None:
        self.totals["llm_calls"] += 1
        self.totals["prompt_tokens"] += step.prompt_tokens
        self.totals["output_tokens"] += step.completion_tokens
        self.tokens_reported |= bool(step.prompt_tokens or step.completion_tokens)
        calls = [
            ToolCall.from_dict(json_object(call))
            for choice in json_list((step.response or {}).get("tool_calls"))
            for call in json_list(choice)
        ]
        if calls:
            offered = tools_of([json_object(tool) for tool in json_list(step.request.get("tools"))])
            self.repeats["tool_calls"] = self.repeats.get("tool_calls", 0) + len(calls)
            self.repeats["malformed_tool_calls"] = self.repeats.get("malformed_tool_calls", 0) + sum(
                call.error is not None for call in calls
            )
            self.repeats["invalid_tool_calls"] = self.repeats.get("invalid_tool_calls", 0) + sum(
                call.problem(offered) is not None for call in calls
            )
        self.repeats["llm_calls"] += 1
        self.repeats["repeated_llm_calls"] += step.request in requests
        requests.append(step.request)

    def not_measured(self) -> dict[str, str]:
        """The quantities the traces cannot tell, each with why (never a 0 that was not measured)."""
        out: dict[str, str] = {}
        if self.examples and not self.traced:
            out.update(
                dict.fromkeys(
                    ("llm_calls", "prompt_tokens", "output_tokens", "searches", "passages_retrieved"), NO_TRACE
                )
            )
        elif self.totals["llm_calls"] and not self.tokens_reported:
            out.update(dict.fromkeys(("prompt_tokens", "output_tokens"), NO_TOKENS))
        if self.ids_missing and "passages_retrieved" not in out:
            out["passages_retrieved"] = NO_IDS
        if self.docs_unknown:
            out["passages_shown"] = DOCS_UNKNOWN
        return out

    def sections(self) -> CostSections:
        """{"budget": ..., "repeated_work": ...} of the task; nothing where no example was scored."""
        if not self.examples:
            return {}
        unknown = self.not_measured()
        means = {key: None if key in unknown else round(total / self.examples, 4) for key, total in self.totals.items()}
        budget = cast(Budget, {"examples": self.examples, **means, "not_measured": unknown})  # QUANTITIES: its keys
        return {"budget": budget, "repeated_work": cast(RepeatedWork, dict(self.repeats))}


def repeated_work_lines(results: CostFigures) -> list[str]:
    """A warning per kind of work that bought nothing (`repeated_work`), with what to do about it: the console's
    summary, report.md and the viewer's run page."""
    metadata = json_object(results.config.get("retriever_metadata"))
    retriever = metadata.get("retriever") or "?"
    if "index" in metadata:  # a corpus index answers queries apart: the queries found nothing new
        why = (
            f"over retriever {retriever}'s corpus index: the system's queries did not change between its searches "
            "(the same query again, or an empty one)"
        )
    else:
        why = (
            f"over retriever {retriever} (one that gives every query the example's own passages, or no more "
            "passages than a search asks for, answers every query alike): search a corpus index with --retriever "
            "bm25 --retriever-arg index=DIR, or use --retriever example_bm25 where examples carry more passages "
            "than a search returns"
        )
    lines = []
    for task, work in (results.repeated_work or {}).items():
        if work["repeated_searches"]:
            lines.append(
                f"{task}: warning: {work['repeated_searches']} of {work['searches']} searches returned the "
                f"same passages as the search before them in the example, {why}"
            )
        if work["empty_queries"]:
            lines.append(
                f"{task}: warning: {work['empty_queries']} of {work['searches']} searches had an empty or "
                "whitespace query (the system's query came out empty)"
            )
        if work.get("empty_results"):
            lines.append(
                f"{task}: warning: {work['empty_results']} of {work['searches']} searches found no passage (a "
                "query with no word left to search with: empty or stopwords alone; one whose words are in no "
                "passage; or an example without passages)"
            )
        if work["repeated_llm_calls"]:
            lines.append(
                f"{task}: warning: {work['repeated_llm_calls']} of {work['llm_calls']} LLM calls repeated an "
                "earlier request of the same example, answered from the cache (the same call made again "
                "adds nothing: an iteration whose input did not change)"
            )
        if work.get("malformed_tool_calls"):
            lines.append(
                f"{task}: warning: {work['malformed_tool_calls']} of {work['tool_calls']} tool calls had arguments "
                f"that are not JSON, or are nested more than {MAX_DEPTH} levels deep (kept in the trace as the model "
                "wrote them: see each call's error in the viewer)"
            )
        if work.get("invalid_tool_calls"):
            lines.append(
                f"{task}: warning: {work['invalid_tool_calls']} of {work['tool_calls']} tool calls had arguments "
                "that do not fit the tool's parameters (a wrong type, a missing or an unknown argument: see each "
                "call's answer in the viewer)"
            )
    return lines


def budget_line(task: str, budget: Mapping[str, Any]) -> str:
    """A task's budget per example in one line: each quantity's mean, or why it is not measured (said once for
    neighbouring quantities that are not measured for one reason)."""
    unknown = budget.get("not_measured") or {}
    parts = []
    for reason, quantities in groupby(QUANTITIES.items(), key=lambda item: unknown.get(item[0])):
        labelled = list(quantities)
        if reason is None:
            parts += [f"{label} {format_mean(budget.get(key))}" for key, label in labelled]
        else:
            parts.append(f"{', '.join(label for _, label in labelled)} not measured ({reason})")
    return f"{task}: per example (mean of {budget['examples']}): " + ", ".join(parts)


def format_mean(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"
