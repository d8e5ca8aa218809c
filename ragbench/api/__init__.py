"""ragbench's public API: the contract a task, system or metric plugin is written against.

    from ragbench.api import Example, Prediction, System, hookimpl
    from ragbench.api.text import normalize_answer

A plugin imports ragbench only from here and the namespaces below, and its tests from `ragbench.testing`.
Every other module of the `ragbench` package is internal: it may change in any release without notice.
These names change only with a note in docs/changelog.md; docs/writing-plugins.md is the guide.

The layout:

- `ragbench.api`: the contract. `Task` (its `TaskPrompting`, the hooks systems call, the `Prompt` it
  builds, the `TaskScoring` it is scored by), `System` and `Reader` (the base of systems that send the
  task's own baseline prompt), `SystemDeclaration` (what the core reads about a system; its `RecordedExtras`
  and `OutputFormat`, what the system records per example, from which the core reports its statistics and
  format adherence), `Metric` (`MetricDeclaration`, `KeySpec` and `key_spec`, the direction and range of one
  of a metric's keys as compare and the viewer read it; `Score`, `Scores`; a corpus-level `CorpusValue`, the bootstrap
  `resampled`, `cohen_kappa` and `kendall_tau` it may use), the data they exchange (`Example`, `Document`, `Prediction`, `Step`),
  `Image` (a picture an example holds or a request sends, read by `Image.of` from a path, bytes, a `datasets`
  Image value or a PIL image), the chat turn a prompt holds (`Message`: a role and its text, or its `Part`s, texts
  and images in order; `chat_turn(parts, role)` and `user_turn(text, images)` make one),
  what a system or metric gets (`Context`), the sample record the reporting hooks read and what they return
  (`SampleRecord`, `recorded_extras`, `adherence` and its `FormatCheck`), the pre-flight's `Preflight`, `hookimpl`
  for the plugin's hook module, and the errors:
  `ConfigError` (one line: what, where, how to fix; the run does not start), `RecordError` (a bad record:
  counted, the run goes on), `EngineError` (an LLM call failed).
- `ragbench.api.protocols`: the optional protocols a task adds, and how a system reads them of any task.
- `ragbench.api.text`: answers, citations, sentences, instruction formats, token-counted chunks.
- `ragbench.api.flashrag`: FlashRAG's prompt templates, generator conventions and judgers.
- `ragbench.api.data`: data files (JSONL, YAML), where a task's data is, the built-in catalogue.
- `ragbench.api.yaml_tasks`: the bases of a YAML task's prompt style, record formats, gold kinds.
- `ragbench.api.engines`: `Engine` and the values an LLM call carries (`Request`, `Sampling`, `Response`).
- `ragbench.api.retrieval`: `Retriever`, `IndexBuilder`, query styles, `Reranker`, `Refiner`.
- `ragbench.api.run`: what a run lends its plugins (`RunResources`, `Workers`, `PageCache`), the
  pre-flight's probes, how a plugin's command ends.
- `ragbench.api.trace`: the structure of a trace (`group`, `outline`, `trace_prompts`).
- `ragbench.api.apps`: the base of the systems that call an application a user already runs (`Application`), what it
  is asked and answers (`AppRequest`, `AppReply`), its spans (docs/apps.md).

Why a module of its own and not the package root: `import ragbench.anything` runs the package's
`__init__`, so a root that exported the API would import the contract, the LLM handle and the
scheduler for every command; and the core's own modules import from each other, not from a surface
that imports them all. Names are imported on first use (PEP 562 `__getattr__`), so a plugin's hook
module that imports `hookimpl` keeps `ragbench list` from importing the API it does not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ragbench.api._lazy import lazy_names

# type checkers read each name where it is defined; it is imported on first use (below)
if TYPE_CHECKING:
    from ragbench._checks import Preflight
    from ragbench._context import Context, ScoringContext
    from ragbench._errors import ConfigError, RecordError
    from ragbench._hookspecs import hookimpl
    from ragbench._metric import CorpusValue, KeySpec, Metric, MetricDeclaration, Score, Scores, key_spec
    from ragbench._records import SampleRecord
    from ragbench._shared.reader import Reader
    from ragbench._statistics.bootstrap import resampled
    from ragbench._statistics.rater_agreement import cohen_kappa, kendall_tau
    from ragbench._system import (
        FormatCheck,
        OutputFormat,
        RecordedExtras,
        StartsForRun,
        System,
        SystemDeclaration,
        SystemRun,
        adherence,
        recorded_extras,
    )
    from ragbench._task import Task
    from ragbench._task.prompting import Prompt, TaskPrompting
    from ragbench._task.scoring import TaskScoring
    from ragbench._types import Document, Example, Prediction, Step
    from ragbench._values.chat_turns import Message, Part, chat_turn, user_turn
    from ragbench._values.conversation import Conversation, History
    from ragbench._values.engine_errors import EngineError
    from ragbench._values.images import Image

# the internal module that defines each name
_MODULES = {
    "ragbench._task": ("Task",),
    "ragbench._task.prompting": ("TaskPrompting", "Prompt"),
    "ragbench._task.scoring": ("TaskScoring",),
    "ragbench._system": (
        "System",
        "SystemDeclaration",
        "RecordedExtras",
        "OutputFormat",
        "recorded_extras",
        "adherence",
        "FormatCheck",
        "StartsForRun",
        "SystemRun",
    ),
    "ragbench._shared.reader": ("Reader",),
    "ragbench._metric": ("Metric", "MetricDeclaration", "KeySpec", "key_spec", "CorpusValue", "Score", "Scores"),
    "ragbench._statistics.bootstrap": ("resampled",),
    "ragbench._statistics.rater_agreement": ("cohen_kappa", "kendall_tau"),
    "ragbench._types": ("Example", "Document", "Prediction", "Step"),
    "ragbench._context": ("Context", "ScoringContext"),
    "ragbench._records": ("SampleRecord",),
    "ragbench._checks": ("Preflight",),
    "ragbench._hookspecs": ("hookimpl",),
    "ragbench._errors": ("ConfigError", "RecordError"),
    "ragbench._values.engine_errors": ("EngineError",),
    "ragbench._values.images": ("Image",),
    "ragbench._values.chat_turns": ("Message", "Part", "chat_turn", "user_turn"),
    "ragbench._values.conversation": ("Conversation", "History"),
}
NAMESPACES = ("apps", "data", "engines", "flashrag", "protocols", "retrieval", "run", "text", "trace", "yaml_tasks")
__all__, _contract, _listed = lazy_names(__name__, _MODULES)


def __getattr__(name: str) -> Any:
    if name in NAMESPACES:
        return importlib.import_module(f"{__name__}.{name}")
    return _contract(name)


def __dir__() -> list[str]:
    return sorted([*_listed(), *NAMESPACES])
