"""ragbench's public API: everything a task, system, metric, engine or retriever plugin may use.

    from ragbench.api import Example, Prediction, System, hookimpl

A plugin imports ragbench only from here, and its tests from `ragbench.testing`. Every other module
of the `ragbench` package is internal: it may change in any release without notice. The names below
change only with a note in docs/changelog.md. docs/writing-plugins.md is the guide.

Why a module of its own and not the package root: `import ragbench.anything` runs the package's
`__init__`, so a root that exported the API would import the contract, the LLM handle and the
scheduler for every command; and the core's own modules import from each other, not from a surface
that imports them all. Names are imported on first use (PEP 562 `__getattr__`), so a plugin's hook
module that imports `hookimpl` keeps `ragbench list` as fast as before.

What is here, by what it is for:

- The contract: `Task` (its `TaskPrompting`, the hooks systems call and the `Prompt` it builds, and the
  `TaskScoring` it is scored by), the optional protocols one benchmark's task adds
  (`UsesRunResources`, `UsesTools`, `PredictionRecords`, `StandingInstruction`, `Demonstration`, `PlotKeys`, `SystemDefaults`,
  `OwnCorpus`)
  and how a system reads them of any task (`task_input`, `instruction_key`, `closed_answer`,
  `task_demonstration`), `System`, `Metric` (`Score`, `Scores`, `CorpusValue`), the data
  they exchange (`Example`, `Document`, `Prediction`, `Step`), what a system or metric gets
  (`Context`, whose `llm` is an `LLM`), the finished example the reporting hooks read
  (`SampleRecord`, `recorded_extras`) and `hookimpl` for the plugin's hook module.
- Errors: `ConfigError` (one line: what, where, how to fix; the run does not start), `RecordError`
  (a bad record: counted, the run goes on), `EngineError` (an LLM call failed), `RetrievalError`, `ReadOnlyError`
  (a plugin changed a value it was handed read-only, docs/writing-plugins.md "What a plugin may change").
- Engines and retrievers: `Engine`, `Request`, `Sampling`, `Response`, `TokenLogprobs`, `apply_stop`,
  `EngineNeeds` (what a system needs of its engine, `System.engine_needs`), `local_tokenizer` (a model's
  tokenizer on disk, without its weights); `Retriever`, `IndexBuilder`, `QueryStyle`, `BGE_QUERY_INSTRUCTION`;
  `Reranker`, `Refiner` (the `--reranker`/`--refiner` components) and `REFINED_TEXT` (the metadata key of
  the one document holding a refiner's text, which a prompt shows as it is).
- Pre-flight (checks before anything loads): `Preflight`, `probe_data`, `unreachable`.
- Trace structure for the viewer: `group`, `grouped`, `outline`, `find_groups`; `trace_prompts` (the
  prompt or chat messages of each LLM call of a trace).
- Data files: `iter_jsonl`, `read_lines`, `require`, `resolve_data_file`, `data_dir`, `parse_json`
  (json.loads where JSON nested too deeply is a ValueError, not a RecursionError), `objects` (only the
  JSON objects of a stream of lines pass) and `StreamBroken` (the record error where a stream broke off),
  `replacing` (a file written whole or not at all: a corpus a command builds), `load_callable` for an
  option naming "module:function", `load_yaml` (yaml.safe_load, through libyaml where PyYAML has it) and
  `packaged_yaml` (a YAML file a package ships, parsed once per process, each caller given its own copy).
- The built-in catalogue: `section` (parts of ragbench's own registry.yaml, which the built-in packages'
  `ragbench_catalog` hooks serve; each caller's own copy).
- Text helpers benchmarks share: `normalize_answer`, `exact_presence`, `sent_tokenize`,
  `remove_citations`, `cited_numbers`, `list_items`, `TEMPLATES` and `fill` (instruction-tuned
  prompt formats), `FlashRagTemplate`, `FLASHRAG_RAG_TEMPLATE`, `FLASHRAG_ZERO_SHOT_TEMPLATE`, `flashrag_reference`,
  `flashrag_sampling`, `flashrag_generate` and `title_and_text` (FlashRAG's prompt templates and generator conventions, which its methods and QA prompt style share), `Reader` (the base of systems that send the task's own baseline prompt),
  `YamlTask` (the base of a YAML task's prompt style) and `YamlPrompting` (the base of a style's prompting),
  `RecordPlace` (where the record a style's `parse` gets is, for its bad-record errors) and `yaml_task_class`
  (the Task class of a YAML task file, docs/yaml-tasks.md), `RecordFormat` (a benchmark's own layout of data
  files, registered through the `ragbench_record_formats` hook) and the readers it builds on (`jsonl_records`,
  `json_records`, `read_document`; `kind`: a value's kind in words, for a bad record's message), `GoldKind` (a
  benchmark's own kind of gold, registered through the `ragbench_gold_kinds` hook) and the `GoldReader`
  it reads a record's paths with,
  `TokenSplitter`, `parse_split`, `tiktoken_counter` and `keep_separator` (token-counted chunking), `tiktoken_encoding`
  (a tiktoken encoding, cl100k_base offline), `resampled` (bootstrap resamples).
- Judgers of conditional methods (SKR, Adaptive-RAG): `Judger` (a judger model loaded once from a local
  folder, `judger_folder`, or a file of judgements by example id).
- Commands a plugin adds to the command line: `config_errors_exit`, `exit_if_skipped`.
- What a run owns and lends its plugins (docs/internals.md, "Who owns what"): `RunResources` (what
  `UsesRunResources.bind` receives and `ctx.resources` is), its `Workers` for CPU-bound work (`await
  ctx.resources.workers.run(fn, *args)`; `usable_cores` counts the cores this process may use,
  `ready_threads` makes a thread pool with its threads started), the `PageCache` it opens (`await ctx.resources.page_cache()`)
  and `content_key` for its entries.
"""
from __future__ import annotations

import importlib
from typing import Any

# the internal module that defines each name
_MODULES = {
    # the contract
    "ragbench._task": ("Task",),
    "ragbench._task.prompting": ("TaskPrompting", "Prompt"),
    "ragbench._task.scoring": ("TaskScoring",),
    "ragbench._task.protocols": ("UsesRunResources", "UsesTools", "PredictionRecords", "StandingInstruction", "Demonstration", "PlotKeys",
                                 "SystemDefaults", "OwnCorpus", "task_input", "instruction_key", "closed_answer",
                                 "task_demonstration"),
    "ragbench._system": ("System", "recorded_extras"),
    "ragbench._metric": ("Metric", "KeySpec", "CorpusValue", "Score", "Scores"),
    "ragbench._types": ("Example", "Document", "Prediction", "Step", "trace_prompts"),
    "ragbench._context": ("Context",),
    "ragbench._llm": ("LLM",),
    "ragbench._records": ("SampleRecord",),
    "ragbench._hookspecs": ("hookimpl",),
    # errors
    "ragbench._errors": ("ConfigError", "RecordError"),
    "ragbench._read_only": ("ReadOnlyError",),
    # engines and retrievers
    "ragbench._engines.base": ("Engine",),
    "ragbench._values.llm_calls": ("EngineError", "EngineNeeds", "Request", "Response", "Sampling", "TokenLogprobs",
                                   "apply_stop"),
    "ragbench._engines.tokenizers": ("local_tokenizer",),
    "ragbench._retrieval.base": ("Retriever", "IndexBuilder", "RetrievalError"),
    "ragbench._retrieval.query_style": ("QueryStyle", "BGE_QUERY_INSTRUCTION"),
    "ragbench._retrieval.corpus": ("passage_text",),
    "ragbench._components.base": ("Reranker", "Refiner"),
    "ragbench._shared.refined_text": ("REFINED_TEXT",),
    # pre-flight
    "ragbench._checks": ("Preflight", "probe_data", "unreachable"),
    # trace structure
    "ragbench._trace_groups": ("group", "grouped", "outline", "find_groups"),
    # data files
    "ragbench._storage.jsonl": ("iter_jsonl", "read_lines", "require", "parse_json", "objects", "StreamBroken"),
    "ragbench._storage.datafiles": ("resolve_data_file", "data_dir"),
    "ragbench._storage.files": ("replacing",),
    "ragbench._imports": ("load_callable",),
    "ragbench._builtin": ("load_yaml", "packaged_yaml", "section"),
    # text helpers
    "ragbench._shared.answers": ("normalize_answer", "exact_presence", "token_f1"),
    "ragbench._shared.sentences": ("sent_tokenize",),
    "ragbench._shared.citations": ("remove_citations", "cited_numbers", "list_items"),
    "ragbench._shared.instruction_templates": ("TEMPLATES", "fill"),
    "ragbench._shared.reader": ("Reader",),
    "ragbench._shared.flashrag": ("FlashRagTemplate", "flashrag_reference", "flashrag_sampling", "flashrag_generate",
                                  "title_and_text", "FLASHRAG_RAG_TEMPLATE", "FLASHRAG_ZERO_SHOT_TEMPLATE"),
    "ragbench._shared.yaml_tasks.task": ("YamlTask", "yaml_task_class"),
    "ragbench._shared.yaml_tasks.prompting": ("YamlPrompting",),
    "ragbench._shared.yaml_tasks.places": ("RecordPlace",),
    "ragbench._shared.yaml_tasks.formats": ("RecordFormat",),
    "ragbench._shared.yaml_tasks.gold_kinds": ("GoldKind",),
    "ragbench._shared.yaml_tasks.fields": ("GoldReader",),
    "ragbench._shared.yaml_tasks.sources": ("jsonl_records", "json_records", "read_document"),
    "ragbench._shared.yaml_tasks.values": ("kind",),
    "ragbench._retrieval.chunking": ("TokenSplitter", "parse_split", "tiktoken_counter", "tiktoken_encoding",
                                     "keep_separator"),
    "ragbench._reports.bootstrap": ("resampled",),
    # the judgers of conditional methods
    "ragbench._shared.judgers": ("Judger", "judger_folder"),
    # command-line commands
    "ragbench._cli.plugin_commands": ("config_errors_exit", "exit_if_skipped"),
    # what a run owns and lends its plugins
    "ragbench._run.resources": ("RunResources",),
    "ragbench._run.workers": ("Workers", "usable_cores", "ready_threads"),
    "ragbench._storage.page_cache": ("PageCache", "content_key"),
}
_SOURCES = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_SOURCES)


def __getattr__(name: str) -> Any:
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"ragbench.api has no {name!r}: the public API is listed in ragbench.api.__all__ "
                             "(docs/writing-plugins.md)")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # imported once
    return value


def __dir__() -> list[str]:
    return __all__
