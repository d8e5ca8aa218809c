"""`ragbench reproduce NAME`: run one table row of a seed paper as the paper ran it and print ours
beside the paper's numbers.

A manifest (catalogue section `reproductions`: the built-ins in tasks/reproductions.yaml, plugins add
their own) fixes the run (task, system, model, judges, NLI, retriever, their options) and maps each
paper column to a task's metric key and unit. Whatever the user overrides (a substitute `--model`,
`--judge` or `--nli`, `--limit`) is recorded, and the comparison says plainly that it is then a
partial run or a different measurement, not a reproduction of the paper's number. A manifest whose
row cannot be reproduced (retired closed models, unreleased checkpoints, unimplemented baselines)
says why, and runs only with the substitutes the user names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..._config.run_config import RUN_OPTIONS, RunConfig
from ..._errors import ConfigError
from ..._registry import Registry, unknown_name_message
from ..results.schema import Results
from .readiness import RETRIEVER_PATHS

# Overrides that change what is measured (vs where data and indexes live, or how fast it runs).
_SUBSTITUTIONS = ("model", "role_models", "judges", "nli", "task_args", "system_args", "retriever", "retriever_args")
SYSTEM_STATS = "system_stats:"  # a cell's metric read from results.json's system_stats, not its results


@dataclass
class PaperCell:
    column: str
    task: str
    metric: str
    scale: float
    paper: float | None


@dataclass
class Reproduction:
    name: str
    paper: str
    table: str
    row: str
    status: str  # runnable | not_reproducible
    cells: list[PaperCell]
    tolerance: float
    run: dict[str, Any]
    why_not: str = ""
    caveats: tuple[str, ...] = ()
    provider: str = ""
    task_paths: tuple[str, ...] = ()  # task options naming the user's files (a qrels file): never substitutions
    retriever_paths: tuple[str, ...] = ()  # retriever options naming the user's files, beside RETRIEVER_PATHS

    def paths_of(self, key: str) -> tuple[str, ...]:
        """The options of the run option `key` (task_args, retriever_args) that name the user's files."""
        if key == "task_args":
            return self.task_paths
        return (*RETRIEVER_PATHS, *self.retriever_paths) if key == "retriever_args" else ()

    @classmethod
    def from_manifest(cls, name: str, manifest: dict[str, Any]) -> Reproduction:
        try:
            return cls(
                name=name,
                paper=manifest["paper"],
                table=manifest["table"],
                row=manifest["row"],
                status=manifest.get("status", "runnable"),
                cells=[PaperCell(**cell) for cell in manifest["cells"]],
                tolerance=float(manifest["tolerance"]),
                run=dict(manifest.get("run") or {}),
                why_not=manifest.get("why_not", ""),
                caveats=tuple(manifest.get("caveats") or ()),
                provider=manifest.get("provider", ""),
                task_paths=tuple(manifest.get("task_paths") or ()),
                retriever_paths=tuple(manifest.get("retriever_paths") or ()),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"reproduction '{name}' ({manifest.get('provider', '?')}): bad manifest ({exc}); "
                "see tasks/reproductions.yaml for the schema"
            ) from exc


def get_reproduction(registry: Registry, name: str) -> Reproduction:
    manifest = registry.reproductions.get(name)
    if manifest is None:
        raise ConfigError(
            unknown_name_message("reproduction", name, registry.reproductions, "ragbench reproduce --list")
        )
    return Reproduction.from_manifest(name, manifest)


def listing(registry: Registry) -> str:
    """One line per row: paper, table, row, and whether it runs on this machine now ("runs here"), else what it
    lacks (`needs: ...`, reproduce_readiness) or why it cannot be reproduced; a count of those that run last."""
    from .readiness import missing_for

    lines, runs_here = [], 0
    data_checks: dict[tuple[str, str], list[str]] = {}
    for name in sorted(registry.reproductions):
        item = Reproduction.from_manifest(name, registry.reproductions[name])
        if item.status != "runnable":
            state = f"not reproducible: {item.why_not}"
        elif missing := missing_for(registry, item.run, data_checks, item.retriever_paths):
            state = f"needs: {', '.join(missing)}"
        else:
            state, runs_here = "runs here", runs_here + 1
        lines.append(f"{name:<52} {item.paper} {item.table} | {item.row} | {state}")
    lines.append(
        f"{runs_here} of {len(lines)} rows run on this machine now (data and models on disk, nothing downloaded); "
        "`needs:` names what the others lack"
    )
    return "\n".join(lines)


def reproduction_config(item: Reproduction, overrides: dict[str, Any]) -> tuple[RunConfig, list[str]]:
    """The run of `item` with the user's overrides, and the names of the overrides that change what is
    measured (where the files lie does not: `--data`, the retriever's index, corpus and model and the retriever
    and task options the manifest names in `retriever_paths` and `task_paths`). A row that is not reproducible
    runs only with a substitute model."""
    if item.status != "runnable" and not overrides.get("model"):
        raise ConfigError(
            f"reproduction {item.name} cannot be reproduced: {item.why_not} "
            "(pass --model to run the same protocol with a substitute, clearly labelled)"
        )
    if not item.run:
        raise ConfigError(f"reproduction {item.name} has no run configuration: {item.why_not}")
    unknown = set(item.run) - set(RUN_OPTIONS)
    if unknown:
        raise ConfigError(f"reproduction {item.name}: unknown run option(s) {', '.join(sorted(unknown))}")
    settings = dict(item.run)
    substituted = []
    for key, value in overrides.items():
        if value in (None, [], {}, ()):
            continue
        if isinstance(value, dict) and isinstance(settings.get(key, {}), dict):
            paths = item.paths_of(key)
            given = settings.get(key, {})
            changed: Any = {k: v for k, v in value.items() if given.get(k) != v and k not in paths}
            settings[key] = {**given, **value}
        else:
            changed = value if settings.get(key) != value else None
            settings[key] = value
        if key in _SUBSTITUTIONS and changed:
            substituted.append(key)
    return RunConfig.of(**settings), sorted(substituted, key=_SUBSTITUTIONS.index)


@dataclass
class CellResult:
    cell: PaperCell
    ours: float | None

    @property
    def difference(self) -> float | None:
        return None if self.ours is None or self.cell.paper is None else self.ours - self.cell.paper


def compare_with_paper(item: Reproduction, results: Results) -> list[CellResult]:
    """Each cell's value from the run: a metric of the task (its key as it is, `hf:bleu` too), or
    `system_stats:KEY` (e.g. LLatrieval's document candidates per example), times the cell's scale."""
    out = []
    for cell in item.cells:
        key = cell.metric.removeprefix(SYSTEM_STATS)
        table = (results.system_stats or {}) if key != cell.metric else results.results
        value = table.get(cell.task, {}).get(key)
        out.append(CellResult(cell, float(value) * cell.scale if isinstance(value, (int, float)) else None))
    return out


INCOMPLETE = "INCOMPLETE run: some examples or metrics failed and are left out of these numbers; see the report"


def verdict(item: Reproduction, limit: int | None, substituted: list[str], complete: bool) -> str:
    """What the numbers are; an incomplete run says so whatever else it is (a partial run of 4 examples
    whose 2 failed is not a mean over 4)."""
    if substituted:
        label = (
            f"NOT a reproduction: {', '.join(substituted)} differ from the paper's setting, so these numbers "
            "measure something else"
        )
    elif item.status != "runnable":
        label = f"NOT a reproduction: {item.why_not}"
    elif limit is not None:
        label = f"PARTIAL reproduction: only the first {limit} examples of each task (--limit); not comparable"
    else:
        return "full reproduction run" if complete else INCOMPLETE
    return label if complete else f"{label}; {INCOMPLETE}"


def markdown(item: Reproduction, rows: list[CellResult], label: str) -> str:
    lines = [
        f"## Reproduction: {item.name}",
        "",
        f'{item.paper} {item.table}, row "{item.row}" - **{label}**',
        "",
        f"| column | task | metric | paper | ours | ours - paper | within ±{item.tolerance:g} |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        ours = "-" if row.ours is None else f"{row.ours:.2f}"
        paper = "-" if row.cell.paper is None else f"{row.cell.paper:g}"
        diff = row.difference
        within = "-" if diff is None else ("yes" if abs(diff) <= item.tolerance else "no")
        lines.append(
            f"| {row.cell.column} | {row.cell.task} | {row.cell.metric} | {paper} | {ours} | "
            f"{'-' if diff is None else f'{diff:+.2f}'} | {within} |"
        )
    if item.caveats:
        lines += ["", "Caveats:", *[f"- {c}" for c in item.caveats]]
    return "\n".join(lines) + "\n"
