"""The names `ragbench.api` exported in 0.1.0 that moved into a namespace or became internal: each still
imports from `ragbench.api`, with a DeprecationWarning naming its new home, until the release `REMOVED_IN`."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from ragbench._class_defaults import REMOVED_IN

# namespace of ragbench.api -> the names that moved there from ragbench.api
MOVED = {
    "protocols": (
        "UsesRunResources",
        "UsesTools",
        "PredictionRecords",
        "StandingInstruction",
        "Demonstration",
        "PlotKeys",
        "SystemDefaults",
        "task_input",
        "instruction_key",
        "closed_answer",
        "task_demonstration",
    ),
    "text": (
        "normalize_answer",
        "exact_presence",
        "token_f1",
        "sent_tokenize",
        "remove_citations",
        "cited_numbers",
        "list_items",
        "TEMPLATES",
        "fill",
        "TokenSplitter",
        "parse_split",
        "tiktoken_encoding",
        "keep_separator",
    ),
    "flashrag": (
        "FlashRagTemplate",
        "flashrag_reference",
        "flashrag_sampling",
        "flashrag_generate",
        "title_and_text",
        "FLASHRAG_RAG_TEMPLATE",
        "FLASHRAG_ZERO_SHOT_TEMPLATE",
        "Judger",
        "judger_folder",
    ),
    "data": (
        "iter_jsonl",
        "read_lines",
        "require",
        "parse_json",
        "objects",
        "StreamBroken",
        "resolve_data_file",
        "data_dir",
        "replacing",
        "load_callable",
        "packaged_yaml",
        "section",
    ),
    "yaml_tasks": (
        "YamlTask",
        "yaml_task_class",
        "YamlPrompting",
        "RecordPlace",
        "RecordFormat",
        "GoldKind",
        "GoldReader",
        "jsonl_records",
        "json_records",
        "read_document",
        "kind",
    ),
    "engines": ("Engine", "EngineNeeds", "Request", "Response", "Sampling", "TokenLogprobs", "local_tokenizer"),
    "retrieval": (
        "Retriever",
        "IndexBuilder",
        "RetrievalError",
        "QueryStyle",
        "BGE_QUERY_INSTRUCTION",
        "passage_text",
        "Reranker",
        "Refiner",
        "REFINED_TEXT",
    ),
    "run": (
        "RunResources",
        "Workers",
        "usable_cores",
        "ready_threads",
        "PageCache",
        "content_key",
        "probe_data",
        "unreachable",
        "config_errors_exit",
        "exit_if_skipped",
    ),
    "trace": ("group", "grouped", "outline", "find_groups", "trace_prompts"),
}
# the internal module that defines each name no plugin used, internal now
_MODULES = {
    "ragbench._llm": ("LLM",),
    "ragbench._read_only": ("ReadOnlyError",),
    "ragbench._values.llm_calls": ("apply_stop",),
    "ragbench._builtin": ("load_yaml",),
    "ragbench._retrieval.chunking": ("tiktoken_counter",),
}
INTERNAL = {name: module for module, names in _MODULES.items() for name in names}
_HOMES = {name: f"ragbench.api.{namespace}" for namespace, names in MOVED.items() for name in names}


def deprecated(name: str) -> Any:
    """A name `ragbench.api` no longer lists, from its new home, with a DeprecationWarning saying where that
    is; AttributeError for a name it never had."""
    home = _HOMES.get(name)
    if home is not None:
        where = f"moved to {home}: import it from there"
    elif name in INTERNAL:
        home = INTERNAL[name]
        where = "is internal now (no plugin used it)"
    else:
        raise AttributeError(
            f"ragbench.api has no {name!r}: the public API is listed in ragbench.api.__all__ "
            "and its namespaces (docs/writing-plugins.md)"
        )
    # stacklevel 3: the module that imports the name (through ragbench.api's __getattr__)
    warnings.warn(
        f"ragbench.api.{name} {where}; ragbench.api stops exporting it in ragbench {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(home), name)
