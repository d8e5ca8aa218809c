"""What `ragbench.api` exported in 0.1.0 and moved (into a namespace, or out of the API) still imports from
`ragbench.api` until `REMOVED_IN`: the same object, with a DeprecationWarning naming where it is now and the
release that drops it. The repository itself uses none of these names: pytest turns the warning into an error
(pyproject.toml's filterwarnings)."""

from __future__ import annotations

import importlib
import re
import warnings

import pytest

import ragbench.api
from ragbench.api._deprecated import INTERNAL, MOVED, REMOVED_IN

# every name ragbench.api 0.1.0 exported (ragbench/api.py at that release)
API_0_1_0 = (
    "BGE_QUERY_INSTRUCTION",
    "ConfigError",
    "Context",
    "CorpusValue",
    "Demonstration",
    "Document",
    "Engine",
    "EngineError",
    "EngineNeeds",
    "Example",
    "FLASHRAG_RAG_TEMPLATE",
    "FLASHRAG_ZERO_SHOT_TEMPLATE",
    "FlashRagTemplate",
    "GoldKind",
    "GoldReader",
    "IndexBuilder",
    "Judger",
    "KeySpec",
    "LLM",
    "Metric",
    "PageCache",
    "PlotKeys",
    "Prediction",
    "PredictionRecords",
    "Preflight",
    "Prompt",
    "QueryStyle",
    "REFINED_TEXT",
    "ReadOnlyError",
    "Reader",
    "RecordError",
    "RecordFormat",
    "RecordPlace",
    "Refiner",
    "Request",
    "Reranker",
    "Response",
    "RetrievalError",
    "Retriever",
    "RunResources",
    "SampleRecord",
    "Sampling",
    "Score",
    "Scores",
    "StandingInstruction",
    "Step",
    "StreamBroken",
    "System",
    "SystemDefaults",
    "TEMPLATES",
    "Task",
    "TaskPrompting",
    "TaskScoring",
    "TokenLogprobs",
    "TokenSplitter",
    "UsesRunResources",
    "UsesTools",
    "Workers",
    "YamlPrompting",
    "YamlTask",
    "apply_stop",
    "cited_numbers",
    "closed_answer",
    "config_errors_exit",
    "content_key",
    "data_dir",
    "exact_presence",
    "exit_if_skipped",
    "fill",
    "find_groups",
    "flashrag_generate",
    "flashrag_reference",
    "flashrag_sampling",
    "group",
    "grouped",
    "hookimpl",
    "instruction_key",
    "iter_jsonl",
    "json_records",
    "jsonl_records",
    "judger_folder",
    "keep_separator",
    "kind",
    "list_items",
    "load_callable",
    "load_yaml",
    "local_tokenizer",
    "normalize_answer",
    "objects",
    "outline",
    "packaged_yaml",
    "parse_json",
    "parse_split",
    "passage_text",
    "probe_data",
    "read_document",
    "read_lines",
    "ready_threads",
    "recorded_extras",
    "remove_citations",
    "replacing",
    "require",
    "resampled",
    "resolve_data_file",
    "section",
    "sent_tokenize",
    "task_demonstration",
    "task_input",
    "tiktoken_counter",
    "tiktoken_encoding",
    "title_and_text",
    "token_f1",
    "trace_prompts",
    "unreachable",
    "usable_cores",
    "yaml_task_class",
)

MOVED_NAMES = sorted((name, namespace) for namespace, names in MOVED.items() for name in names)


@pytest.mark.parametrize(("name", "namespace"), MOVED_NAMES)
def test_a_moved_name_warns_with_its_new_home_and_is_the_same_object(name, namespace):
    home = f"ragbench.api.{namespace}"
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(ragbench.api, name)
    message = str(caught[0].message)
    assert message == (
        f"ragbench.api.{name} moved to {home}: import it from there; "
        f"ragbench.api stops exporting it in ragbench {REMOVED_IN}"
    )
    assert value is getattr(importlib.import_module(home), name)
    assert name in importlib.import_module(home).__all__


@pytest.mark.parametrize("name", sorted(INTERNAL))
def test_a_name_no_plugin_used_warns_that_it_is_internal_and_is_the_same_object(name):
    with pytest.warns(
        DeprecationWarning,
        match=re.escape(
            f"ragbench.api.{name} is internal now (no plugin used it); "
            f"ragbench.api stops exporting it in ragbench {REMOVED_IN}"
        ),
    ):
        value = getattr(ragbench.api, name)
    assert value is getattr(importlib.import_module(INTERNAL[name]), name)


def test_every_name_of_0_1_0_still_imports_from_ragbench_api():
    current = [name for name in API_0_1_0 if name in ragbench.api.__all__]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert all(getattr(ragbench.api, name) is not None for name in API_0_1_0)
    assert len(caught) == len(API_0_1_0) - len(current)
    assert all(issubclass(w.category, DeprecationWarning) for w in caught)


def test_no_deprecated_name_is_also_a_current_one():
    deprecated = {name for name, _ in MOVED_NAMES} | set(INTERNAL)
    assert len(deprecated) == len(MOVED_NAMES) + len(INTERNAL)
    assert deprecated.isdisjoint(ragbench.api.__all__)
    assert all(
        not hasattr(importlib.import_module(module), "__all__") or name not in ragbench.api.__all__
        for name, module in INTERNAL.items()
    )


def test_the_warning_points_at_the_line_that_imports_the_name():
    code = compile("from ragbench.api import normalize_answer\n", "plugin_module.py", "exec")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(code, {})
    assert {(w.filename, w.lineno, w.category) for w in caught} == {("plugin_module.py", 1, DeprecationWarning)}


def test_the_test_suite_fails_on_a_deprecated_name():
    with pytest.raises(DeprecationWarning, match="ragbench.api.iter_jsonl moved to ragbench.api.data"):
        ragbench.api.iter_jsonl  # noqa: B018


def test_a_name_ragbench_api_never_had_is_an_attribute_error():
    with pytest.raises(AttributeError, match="ragbench.api has no 'Evaluator'"):
        ragbench.api.Evaluator  # noqa: B018


@pytest.mark.parametrize("name, value", [("llm", None), ("retriever", None), ("tools", {}), ("models", {})])
def test_a_metric_reading_what_a_system_context_held_gets_what_it_got_then_with_a_warning(name, value):
    from ragbench.api import ScoringContext

    ctx = ScoringContext(task=None)
    with pytest.warns(DeprecationWarning, match=f"ctx.{name}.*read until ragbench"):
        assert getattr(ctx, name) == value
    with pytest.raises(AttributeError, match="no attribute 'lm'"):
        ctx.lm  # noqa: B018 - any other name is still an error
