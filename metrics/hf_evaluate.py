"""Any Hugging Face `evaluate` metric as a ragbench metric: `--metrics +hf:bleu`, `+hf:rouge`,
`+hf:/path/to/my_metric.py`.

The metric is loaded with `evaluate.load(NAME)`: from a local script or folder given by path, from the
local evaluate/HF cache, or from the hub when online (offline and not cached: a clear configuration
error before the run). It is computed once over the run's scored examples (corpus-level), with the
predictions' answers and the gold answers as references: `--metric-arg hf:NAME.references=first` (the
first gold answer, default) or `all` (every gold answer, for multi-reference metrics). The reported
value is the result's entry named like the metric, or its only number (`--metric-arg hf:NAME.key=K`
picks another); extra `compute` options go as `--metric-arg hf:NAME.compute.OPTION=V`.
"""
from __future__ import annotations

from typing import Any, ClassVar

from ragbench.errors import ConfigError
from ragbench.metric import Metric

from .judge import reference_text

PREFIX = "hf:"


class HfEvaluate(Metric):
    evaluate_name: ClassVar[str] = ""

    def __init__(self, references: str = "first", key: str | None = None, **compute: Any) -> None:
        if references not in ("first", "all"):
            raise ConfigError(f"metric {self.name}: references '{references}' is not first or all")
        self.references, self.key = references, key
        self.compute_args = {k.split(".", 1)[1]: v for k, v in compute.items() if k.startswith("compute.")}
        unknown = sorted(k for k in compute if not k.startswith("compute."))
        if unknown:
            raise ConfigError(f"metric {self.name}: unknown option(s) {', '.join(unknown)} (references, key, compute.X)")
        self.module = load_module(self.evaluate_name)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "evaluate": self.evaluate_name, "references": self.references, "key": self.key,
                "compute": self.compute_args}

    def corpus(self, samples: list[dict[str, Any]], seed: int) -> dict[str, float | None]:
        predictions = [s["prediction"]["answer"] for s in samples]
        references = [self.reference(s["gold"]) for s in samples]
        if not predictions:
            return {self.name: None}
        result = self.module.compute(predictions=predictions, references=references, **self.compute_args)
        return {self.name: self.pick(result)}

    def reference(self, gold: dict[str, Any]) -> Any:
        answers = [a if isinstance(a, str) else "; ".join(a) for a in gold.get("answers") or []]
        if not answers:
            answers = [reference_text(gold)]
        return answers if self.references == "all" else answers[0]

    def pick(self, result: dict[str, Any]) -> float:
        numbers = {k: v for k, v in result.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        key = self.key or (self.evaluate_name.rsplit("/", 1)[-1].removesuffix(".py")
                           if self.evaluate_name.rsplit("/", 1)[-1].removesuffix(".py") in numbers else None)
        if key is None and len(numbers) == 1:
            key = next(iter(numbers))
        if key not in numbers:
            raise ValueError(f"{self.evaluate_name} returned {sorted(result)}: choose one with --metric-arg "
                             f"{self.name}.key=NAME")
        return float(numbers[key])


def load_module(name: str) -> Any:
    try:
        import evaluate
    except ImportError as exc:
        raise ConfigError(f"metric hf:{name} needs the `evaluate` package: pip install 'ragbench[evaluate]'") from exc
    try:
        return evaluate.load(name)
    except Exception as exc:  # offline hub errors, missing scripts, bad modules
        raise ConfigError(f"metric hf:{name}: evaluate.load('{name}') failed ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:200]}); offline, give a local metric script or folder "
                          "(hf:/path/to/metric.py) or run once online to cache it") from exc


def metric_class(full_name: str) -> type[Metric]:
    """The metric class for `hf:NAME` (a subclass per name, so each keeps its own identity)."""
    name = full_name[len(PREFIX):]
    if not name:
        raise ConfigError("--metrics hf:NAME: give an evaluate metric name or path, e.g. hf:bleu")
    return type(f"HfEvaluate[{name}]", (HfEvaluate,), {"name": full_name, "evaluate_name": name,
                                                       "corpus_keys": (full_name,)})
