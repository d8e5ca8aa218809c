"""A run's engines (the system's model and role models, the judges, the NLI model): loaded after the
pre-flight, each only where something of the run calls it, and closed together. The processes they
start end with the run however it ends, kill -9 included (ragbench._run.models.reaper)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._config.judging import RunJudging
from ..._config.models import RunModels
from ..._engines import load_engine, starts_processes
from ..._engines.base import Engine
from ..._engines.batches.board import BatchBoard
from ..._registry import Registry
from ..._values.json_values import JsonObject
from ..._values.options import named_options
from ..plan.engine_checks import engine_needs
from ..plan.metric_plan import needs, unused_metric_models
from ..plan.planned_task import PlannedTask
from ..progress import loading_lines
from .reaper import Reaper

log = logging.getLogger(__name__)


@dataclass
class Engines:
    """The engines of a run, loaded after the pre-flight and before the run folder."""

    model: Any = None
    roles: dict[str, Engine] = field(default_factory=dict)
    judges: list[Any] = field(default_factory=list)
    nli: Any = None
    reaper: Reaper | None = None  # started before the first engine: ends their processes if the run is killed

    def _loaded(self) -> list[Any]:
        """Each loaded engine once (the NLI model may be the system's own engine)."""
        return [
            engine
            for engine in (
                self.model,
                *self.judges,
                *self.roles.values(),
                *([self.nli] if self.nli is not self.model else []),
            )
            if engine is not None
        ]

    async def aclose(self) -> None:
        """Close the engines' HTTP clients, inside the loop that opened them (`close` ends the engines)."""
        for engine in self._loaded():
            if hasattr(engine, "aclose"):
                await engine.aclose()

    def close(self) -> None:
        try:
            for engine in self._loaded():
                engine.close()
        finally:
            if self.reaper is not None:
                self.reaper.close()

    def keep_batches(self, folder: Path, board: BatchBoard) -> None:
        """Each engine that sends batches (`--model-arg batch=true`) records them in run folder `folder`, and
        resumes those an earlier attempt recorded there (ragbench._engines.batches.store); those out are
        shown on the run's `board` (its progress bar's)."""
        for engine in self._loaded():
            if hasattr(engine, "keep_batches"):
                engine.keep_batches(folder, board)

    def _places(self) -> dict[str, Engine | None]:
        """The engines by their place in the run (model, role NAME, judge N, nli; None where none)."""
        return {
            "model": self.model,
            **{f"role {name}": engine for name, engine in self.roles.items()},
            **{f"judge {number}": judge for number, judge in enumerate(self.judges, 1)},
            "nli": self.nli,
        }

    def loaded_places(self) -> set[str]:
        """The places (model, role NAME, judge N, nli) whose engines are loaded."""
        return {place for place, engine in self._places().items() if engine is not None}

    def other_figures(self) -> dict[str, JsonObject]:
        """The own figures (`Engine.stats`: a `batch=true` judge's batches) of the role models and judges that have
        any, by place (results.json's `cost.other_engines`; the model's are `cost.engine`, the NLI model's
        `cost.nli`)."""
        places = self._places()
        return {
            place: {figure: count for figure, count in stats.items()}
            for place, engine in places.items()
            if place not in ("model", "nli") and engine is not None and (stats := engine.stats()) is not None
        }

    def content_ids(self) -> dict[str, str]:
        """ "kind:model content_id" (a digest of the model's local files) of each engine that has one, by
        its place in the run (model, role NAME, judge N, nli)."""
        places = self._places()
        return {
            place: f"{engine.kind}:{engine.model} {engine.content_id}"
            for place, engine in places.items()
            if engine is not None and getattr(engine, "content_id", None)
        }


def judge_options(
    model: str | None, given: Mapping[str, Any], planned: Sequence[PlannedTask], registry: Registry
) -> dict[str, Any]:
    """A judge's engine options: its --judge-arg options over those the run's judged metrics declare of their upstream
    client (`MetricDeclaration.judge_client`) that its engine names; an option two metrics declare differently is
    left to the engine's default."""
    declared: dict[str, Any] = {}
    clashing: set[str] = set()
    for metric in (metric for task in planned for metric in task.metrics):
        for name, value in metric.declares.judge_client.items():
            if name in declared and declared[name] != value:
                clashing.add(name)
            declared.setdefault(name, value)
    if not declared:
        return dict(given)
    kind = (model or "").partition(":")[0]
    named = named_options(registry.load("engines", kind)) if kind else set()
    return {**{k: v for k, v in declared.items() if k in named and k not in clashing}, **given}


def load_engines(
    models: RunModels,
    judging: RunJudging,
    registry: Registry,
    planned: list[PlannedTask],
    system: bool = True,
    say: Callable[[str], None] | None = None,
) -> Engines:
    """The engines of `models` and `judging` (its judges and NLI model) a run loads after its pre-flight: with `system`, the system's model (when a
    system calls one) and role models, set up for what the systems need of them (`engine_needs`: the pre-flight
    checked it); and, when a metric needs them, the judges and the NLI model (the system's own engine when
    --nli names the same model with no engine options of its own). One that fails closes the others. `say`: where
    what is loading is said (`loading_lines`: the console's, with the progress bar)."""
    engines = Engines()

    def loaded(model: str | None, options: Mapping[str, Any], served: Sequence[Any] = ()) -> Engine:
        """The engine (set up for what the systems it serves need), the run's reaper started before the first
        engine that may start processes."""
        if engines.reaper is None and starts_processes(model, options, registry):
            engines.reaper = Reaper()
        if say is not None:
            for line in loading_lines(model):
                say(line)
        return load_engine(model, registry=registry, needs=served, **options)

    try:
        if system:
            system_needs = engine_needs(planned)
            if any(p.system is not None and p.system.declares.uses_llm for p in planned):
                engines.model = loaded(models.model, models.model_args, system_needs)
            for role, model in models.role_models.items():
                engines.roles[role] = loaded(model, models.role_model_args.get(role, {}), system_needs)
        for line in unused_metric_models(judging.judges, judging.nli, judging.judge_repeats, planned):
            log.warning("ragbench: %s", line)
        for i, model in enumerate(judging.judges if needs(planned, "judge") else []):
            engines.judges.append(
                loaded(model, judge_options(model, judging.judge_args.get(str(i), {}), planned, registry))
            )
        if judging.nli is not None and needs(planned, "nli"):
            same = engines.model is not None and judging.nli == models.model and not judging.nli_args
            engines.nli = engines.model if same else loaded(judging.nli, judging.nli_args)
    except BaseException:
        engines.close()
        raise
    return engines
