"""What a run is asked to do (`RunConfig`, a composition of the groups of ragbench._config) and its
identity (the hash that names its folder)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import Field, dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .._values.names import checked_name, inside
from .._values.urls import redacted
from .judging import RunJudging
from .limits import RunLimits
from .models import RunModels
from .output import RunOutput
from .retrieval import RunRetrieval
from .run_option import group_options
from .what import RunWhat


def index_by_key(retriever_args: dict[str, Any], shipped_corpus_index: bool) -> dict[str, Any]:
    """`retriever_args` with the index cache's index of a task's own corpus named by its key (its folder's name:
    kind and corpus sha256) rather than by where the cache is."""
    if not shipped_corpus_index or not isinstance(retriever_args.get("index"), str):
        return retriever_args
    return {**retriever_args, "index": Path(retriever_args["index"]).name}


# The groups of a RunConfig, and each flat option (as the command line, ragbench.testing and run.json name it) in
# the order run.json records them: the order it has always had (`_RECORDED`), then any option declared since, in
# its group's order (adding an option is its field, in its group's module of ragbench._config, and nothing here).
_GROUPS = {
    "what": RunWhat,
    "models": RunModels,
    "retrieval": RunRetrieval,
    "judging": RunJudging,
    "output": RunOutput,
    "limits": RunLimits,
}
_RECORDED = (
    "tasks",
    "system",
    "model",
    "model_args",
    "role_models",
    "role_model_args",
    "judges",
    "judge_args",
    "judge_repeats",
    "nli",
    "nli_format",
    "nli_args",
    "metric_args",
    "metrics",
    "system_args",
    "top_k",
    "retriever",
    "retriever_args",
    "shipped_corpus_index",
    "reranker",
    "reranker_args",
    "refiner",
    "refiner_args",
    "task_args",
    "data",
    "limit",
    "seed",
    "bootstrap_iters",
    "output",
    "resume",
    "overwrite",
    "strict_infra",
    "fail_fast",
    "max_inflight",
    "max_steps_per_example",
    "max_prompt_chars_per_example",
    "cache",
    "page_cache",
    "progress",
    "replay_tools",
    "replay_apps",
    "human_labels",
    "price_table",
    "max_cost",
)
_OPTIONS_BY_NAME = {option.name: option for group in _GROUPS.values() for option in group_options(group)}
RUN_OPTIONS = (*_RECORDED, *(name for name in _OPTIONS_BY_NAME if name not in _RECORDED))
# Options that do not change results, left out of the run's identity; options in it only when given
_NOT_IDENTITY = {name for name, option in _OPTIONS_BY_NAME.items() if option.option.identity == "never"}
_IDENTITY_WHEN_GIVEN = {name for name, option in _OPTIONS_BY_NAME.items() if option.option.identity == "when_given"}
_GROUP_OF = {name: group for group, kind in _GROUPS.items() for name in (f.name for f in fields(kind))}


@runtime_checkable
class _Checked(Protocol):
    """A group with checks of its own options."""

    def problems(self) -> list[str]: ...


def run_options() -> tuple[Field[Any], ...]:
    """Each flat option's dataclass field (its name, default, type), in run.json's order."""
    by_name = {f.name: f for kind in _GROUPS.values() for f in fields(kind)}
    return tuple(by_name[name] for name in RUN_OPTIONS)


@dataclass(frozen=True)
class RunConfig:
    """What a run is asked to do, as its command line (or ragbench.testing's keywords) gave it, in groups each read
    by the part of the run that uses it (each a module of ragbench._config). `RunConfig.of(**options)` makes one from the
    flat options; `flat()` gives them back as run.json records them; a changed run is a new one (`changed`)."""

    what: RunWhat
    models: RunModels = field(default_factory=RunModels)
    retrieval: RunRetrieval = field(default_factory=RunRetrieval)
    judging: RunJudging = field(default_factory=RunJudging)
    output: RunOutput = field(default_factory=RunOutput)
    limits: RunLimits = field(default_factory=RunLimits)

    @classmethod
    def of(cls, **options: Any) -> RunConfig:
        """The RunConfig of flat options (`tasks`, `model`, `output` ...; those left out take their defaults)."""
        unknown = sorted(set(options) - set(_GROUP_OF))
        if unknown:
            raise TypeError(f"RunConfig.of: no option {', '.join(unknown)}")
        grouped: dict[str, dict[str, Any]] = {group: {} for group in _GROUPS}
        for name, value in options.items():
            grouped[_GROUP_OF[name]][name] = value
        return cls(**{group: kind(**grouped[group]) for group, kind in _GROUPS.items()})

    def flat(self) -> dict[str, Any]:
        """Every option by its flat name, in run.json's order: a new dict of the config's own values, not copied (a
        --metric-arg of megabytes is not walked again each time: nothing changes a config's values)."""
        return {name: getattr(getattr(self, _GROUP_OF[name]), name) for name in RUN_OPTIONS}

    def problems(self) -> list[str]:
        """What each group with checks of its own finds wrong with its options (its `problems()`), group after
        group."""
        groups = (getattr(self, group) for group in _GROUPS)
        return [problem for group in groups if isinstance(group, _Checked) for problem in group.problems()]

    def changed(self, **options: Any) -> RunConfig:
        """This run with some flat options changed."""
        return RunConfig.of(**{**self.flat(), **options})

    def identity(self) -> dict[str, Any]:
        """What names the run (its folder's hash) and what a --resume must repeat, as run.json records it: the
        credentials of a URL among the options redacted (a changed key is the same run). The index cache's
        index of a task's own corpus is named by its key (its kind and the corpus's sha256), not where the
        cache is: a cache moved ($RAGBENCH_INDEX_CACHE) or another machine's is the same run. Made once per
        config (its values walked once), and not to be changed."""
        return self._identity

    @cached_property
    def _identity(self) -> dict[str, Any]:
        identity = {
            k: v for k, v in self.flat().items() if k not in _NOT_IDENTITY and not (k in _IDENTITY_WHEN_GIVEN and not v)
        }
        identity["retriever_args"] = index_by_key(self.retrieval.retriever_args, self.retrieval.shipped_corpus_index)
        recorded: dict[str, Any] = redacted(identity)  # a dict stays one
        return recorded

    @cached_property
    def _hash(self) -> str:
        return identity_hash(self.identity())

    def config_hash(self) -> str:
        return self._hash

    def run_dir(self) -> Path:
        if self.output.output:
            return Path(self.output.output)
        model = re.sub(r"[^A-Za-z0-9._-]+", "-", self.models.model or "embedded").strip("-")[-40:]
        system = checked_name(
            self.what.system, "--system", "the command line", "`ragbench list systems` shows the installed ones"
        )
        return inside("runs", f"{system}__{model}__{self.config_hash()}")  # `model`: letters, digits, `._-`


def identity_hash(identity: dict[str, Any]) -> str:
    """The hash that names a run's folder, of its `RunConfig.identity()`."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:10]
