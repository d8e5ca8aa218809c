"""Any Hugging Face `evaluate` metric as a ragbench metric: `--metrics +hf:bleu`, `+hf:rouge`,
`+hf:/path/to/my_metric.py`.

The metric is loaded with `evaluate.load(NAME)`: from a local script or folder given by path, from the
local evaluate/HF cache, or from the hub when online (offline and not cached: a clear configuration
error before the run). It is computed once over the run's scored examples (corpus-level), with the
predictions' answers as predictions and the gold answers as references, as the task reads them
(`Task.gold_references`: long answers for ASQA and ELI5, the short answers, QAMPARI's answer list as one
text, CRAG's answer and alternatives). `--metric-arg hf:NAME.references=auto` (default) gives every gold answer to a metric
that takes a list of references per prediction (its `features`, as bleu or rouge) and the first to one
that takes a single reference; `first` or `all` force either. The reported value is the result's entry
named like the metric, or its only number (`--metric-arg hf:NAME.key=K` picks another); extra `compute`
options go as `--metric-arg hf:NAME.compute.OPTION=V`. Higher is better unless the metric is one of
LOWER_IS_BETTER (error rates and losses) or `--metric-arg hf:NAME.higher_is_better=false` says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from ragbench.api import ConfigError, KeySpec, Metric, Preflight, SampleRecord, Task
from ragbench.api.data import JsonObject

PREFIX = "hf:"
# evaluate's metrics where a lower value is better (`evaluate` itself does not say which way is better)
LOWER_IS_BETTER = frozenset({"wer", "cer", "ter", "character", "perplexity", "mae", "mse"})


class HfEvaluate(Metric):
    evaluate_name: ClassVar[str] = ""
    task: Task | None = None

    def __init__(
        self, references: str = "auto", key: str | None = None, higher_is_better: bool | None = None, **compute: Any
    ) -> None:
        if references not in ("auto", "first", "all"):
            raise ConfigError(f"metric {self.name}: references '{references}' is not auto, first or all")
        self.key = key
        self.compute_args = {k.split(".", 1)[1]: v for k, v in compute.items() if k.startswith("compute.")}
        unknown = sorted(k for k in compute if not k.startswith("compute."))
        if unknown:
            raise ConfigError(
                f"metric {self.name}: unknown option(s) {', '.join(unknown)} (references, key, "
                "higher_is_better, compute.X)"
            )
        self.module = load_module(self.evaluate_name)
        self.takes_lists = takes_reference_lists(self.module)
        if references == "all" and not self.takes_lists:
            raise ConfigError(
                f"metric {self.name}: references=all, but {self.evaluate_name} takes one reference "
                "per prediction; use references=first"
            )
        self.references = ("all" if self.takes_lists else "first") if references == "auto" else references
        if higher_is_better is None:
            higher_is_better = self.stem() not in LOWER_IS_BETTER
        self.declares = dataclasses.replace(self.declares, key_specs={self.name: KeySpec(bool(higher_is_better))})

    def preflight(self, check: Preflight, task: Task) -> None:
        self.task = task  # planning builds a metric per task and hands it here: the task whose gold `corpus` reads

    def config(self) -> JsonObject:
        return {
            "name": self.name,
            "evaluate": self.evaluate_name,
            "references": self.references,
            "key": self.key,
            "compute": self.compute_args,
            "higher_is_better": self.declares.key_specs[self.name].higher_is_better,
        }

    def corpus(self, samples: list[SampleRecord], seed: int) -> dict[str, float | None]:
        if not samples:
            return {self.name: None}
        predictions = [s.answer for s in samples]
        references = [self.reference(s) for s in samples]
        result = self.module.compute(predictions=predictions, references=references, **self.compute_args)
        return {self.name: self.pick(result)}

    def reference(self, sample: SampleRecord) -> str | list[str]:
        if self.task is None:
            raise ValueError(f"metric {self.name} was given no task (Metric.preflight): it cannot read the gold")
        answers = self.task.gold_references(sample.gold)
        if not answers:
            raise ValueError(f"example {sample.id} has no gold answer to use as a reference")
        if self.references == "first":
            answers = answers[:1]
        return answers if self.takes_lists else answers[0]  # in the shape the metric's features take

    def pick(self, result: Mapping[str, object]) -> float:
        numbers = {k: v for k, v in result.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        stem = self.stem()
        key = self.key or (stem if stem in numbers else next(iter(numbers)) if len(numbers) == 1 else None)
        if key not in numbers:
            raise ValueError(
                f"{self.evaluate_name} returned {sorted(result)}: choose one with --metric-arg {self.name}.key=NAME"
            )
        return float(numbers[key])

    def stem(self) -> str:
        """bleu, or a script's name."""
        return self.evaluate_name.rstrip("/").rsplit("/", 1)[-1].removesuffix(".py")


def takes_reference_lists(module: Any) -> bool:
    """Whether the metric's input features (one set, or several as bleu's) accept a list of references."""
    import datasets

    formats = module.features if isinstance(module.features, list) else [module.features]
    return any(not isinstance(features["references"], datasets.Value) for features in formats)


def load_module(name: str) -> Any:
    try:
        import evaluate
    except ImportError as exc:
        raise ConfigError(f"metric hf:{name} needs the `evaluate` package: pip install 'ragbench[evaluate]'") from exc
    try:
        return evaluate.load(name)
    except Exception as exc:  # offline hub errors, missing scripts, bad modules
        raise ConfigError(
            f"metric hf:{name}: evaluate.load('{name}') failed ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200]}); offline, give a local metric script or folder "
            "(hf:/path/to/metric.py) or run once online to cache it"
        ) from exc


def metric_class(full_name: str) -> type[Metric]:
    """The metric class for `hf:NAME` (a subclass per name, so each keeps its own identity)."""
    name = full_name[len(PREFIX) :]
    if not name:
        raise ConfigError("--metrics hf:NAME: give an evaluate metric name or path, e.g. hf:bleu")
    declares = dataclasses.replace(HfEvaluate.declares, corpus_keys=(full_name,))
    return type(f"HfEvaluate[{name}]", (HfEvaluate,), {"name": full_name, "evaluate_name": name, "declares": declares})
