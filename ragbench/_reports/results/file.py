"""Reading and writing a run's results.json (`read_results`, `results_text`): `compare`, `rescore`,
`reproduce`, `--resume` and the viewer read it here, whatever ragbench wrote it, as a `Results`
(ragbench._reports.results.schema); sample lines of an older shape: ragbench._storage.run_shapes.

A file without `schema_version` is version 1 (written before the key was); a version this ragbench does not
know (a later ragbench's) is refused in one line (`NewerResults`).

An older ragbench left out sections later ones write (`n_none`, `cost`, `complete`, `details`), and a
file edited or damaged by hand can hold a list where an object belongs: the reader gives every
section the shape the current writer gives it, with what was there kept and what was not there
empty, so no reader meets a missing key. A number that JSON cannot hold (NaN, an infinity: written
by an older ragbench) is no value, said in the entry's "error" as a value that could not be
computed. A file that is no run's results at all (not JSON, not an object, no "results" object) is
refused in one line naming it.
"""

from __future__ import annotations

import math
from dataclasses import MISSING
from pathlib import Path
from typing import Any

from ..._config.run_config import run_options
from ..._cost.budget import QUANTITIES as BUDGET_QUANTITIES
from ..._errors import ConfigError
from ..._storage.jsonl import read_json, strict_json
from ..._values.json_values import json_object
from ..._values.names import part_problem
from .schema import SCHEMA_VERSION, VERSIONS, Results

COUNTS = ("records", "scored", "failed", "bad_records", "missing", "metric_failures")


class Each:
    """Shape of an object whose every value has the shape `of` (its keys: task names, metric names...)."""

    def __init__(self, of: Any) -> None:
        self.of = of


class Omittable:
    """Shape of a key that may be absent or null (kept so), else of the shape `of`."""

    def __init__(self, of: Any) -> None:
        self.of = of


# Shapes (`shaped`): an object with these keys (others kept as they are), [item], Each, Omittable; a number
# (its default; None: a number or null), a string (its default), true or false (its default).
STORE = {"path": "", "damaged_entries": 0, "read_errors": 0, "write_errors": 0, "notice": Omittable("")}
PAGE_CACHE = {**STORE, "hit_rate": Omittable(0.0), "hits": 0, "lookups": 0, "bytes": 0}
COST = {
    "examples": 0,
    "wall_seconds": 0.0,
    "examples_per_second": 0.0,
    "llm_calls": 0,
    "batches": 0,
    "cache_hits": 0,
    "prompt_tokens": 0,
    "completion_tokens": 0,
    "cached_prompt_tokens": Omittable(0),  # written since prompt caching was counted
    "cache_write_tokens": Omittable(0),
    "attempts": 1,
    "interrupted_attempts": 0,
    "response_cache": Omittable(STORE),
    "page_cache": Omittable({**PAGE_CACHE, "caches": Omittable([PAGE_CACHE])}),
    "rescoring": Omittable({"examples": 0, "wall_seconds": 0.0, "llm_calls": 0, "batches": 0, "cache_hits": 0}),
}
MODEL_TOKENS = {
    "model": "",
    "calls": 0,
    "prompt_tokens": 0,
    "completion_tokens": 0,
    "usd": None,
    "usd_note": Omittable(""),
    "prompt_cache": Omittable({"read_tokens": 0, "write_tokens": 0, "write_1h_tokens": 0, "usd_saved": None}),
    "price_note": Omittable(""),
}
TOKEN_COST = {  # results_schema.TokenCost
    **MODEL_TOKENS,
    "cached": 0,
    "errors": 0,
    "model": Omittable(""),
    "price_per_million": Omittable(Each(0.0)),
    "by_model": Omittable(Each(MODEL_TOKENS)),
    "billed_no_answer": Omittable({"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}),
}
JUDGE_AGREEMENT = {  # results_schema.JudgeAgreement
    "raters": [""],
    "averaged": 1,
    "examples": 0,
    **dict.fromkeys(("percent_agreement", "cohen_kappa", "krippendorff_alpha", "flipped")),
    "missing_ratings": 0,
    "failed_ratings": 0,
    "failure": Omittable(""),
    "ci95_judged": Omittable([None]),
    "measured": Omittable(True),
    "measure_with": Omittable(""),
}
EFFICIENCY = {  # cost_schema.Efficiency
    "examples": 0,
    "tokens": 0,
    "usd": None,
    "usd_note": Omittable(""),
    "llm_calls_per_example": 0.0,
    "searches_per_example": 0.0,
    "latency_seconds": Each({"calls": 0, "p50": None, "p95": None}),
    "per_correct": Each({"correct": 0.0, "tokens_per_correct": None, "usd_per_correct": Omittable(None)}),
    "graded_keys": Omittable([""]),
}
SECTIONS = {  # the sections of results.json a reader looks into, beside results, details, counts and config
    "cost": COST,
    "model_cost": Omittable(Each(TOKEN_COST)),
    "judge_cost": Omittable(Each(Each(TOKEN_COST))),
    "efficiency": Omittable(Each(EFFICIENCY)),
    "judge_agreement": Omittable(Each(Each(JUDGE_AGREEMENT))),
    "failures": Omittable(
        Each([{"cause": "?", "count": 0, "ids": [""], "example": Omittable(""), "traceback": Omittable("")}])
    ),
    "system_reports": Omittable(Each({"errors": [""]})),
    "system_stats": Omittable(Each({})),
    "infrastructure_failures": Omittable(Each({"examples": 0, "calls": 0, "causes": [{"cause": "", "count": 0}]})),
    "token_limit": Omittable(Each({"examples": 0, "calls": 0, "steps": Each(0)})),
    "counted": Omittable(Each(Each(Each({"count": 0, "examples": 0, "meaning": ""})))),
    "format_adherence": Omittable(Each([{"format": "", "of": 0, "followed": 0, "fix": ""}])),
    "budget": Omittable(Each({"examples": 0, **dict.fromkeys(BUDGET_QUANTITIES), "not_measured": Each("")})),
    "repeated_work": Omittable(
        Each(
            {
                "searches": 0,
                "repeated_searches": 0,
                "empty_queries": 0,
                "llm_calls": 0,
                "repeated_llm_calls": 0,
                "empty_results": Omittable(0),
                "tool_calls": Omittable(0),
                "malformed_tool_calls": Omittable(0),
                "invalid_tool_calls": Omittable(0),
            }
        )
    ),
    "sampling": Omittable(Each(Each([{"calls": 0}]))),
    "checkpoint_repairs": Omittable(Each([""])),
    "data_sha256": Omittable(Each("")),
    "versions": {"ragbench": "?"},
}
NOT_A_NUMBER = "not a finite number in results.json (written by an older ragbench); run `ragbench rescore` on it"


class NewerResults(ConfigError):
    """A results.json of a version this ragbench does not read."""


def read_results(path: str | Path, command: str) -> Results:
    """The results.json at `path` in the current shape (`normalized_results`); a `ConfigError` in one
    line naming the file (`command` says who read it) where it is no run's results, `NewerResults` where its
    `schema_version` is not one this ragbench reads."""
    path = Path(path)
    rebuild = (
        f"`ragbench ... --resume --output {path.parent}` (the options it was run with) rebuilds it from the samples"
    )
    data = read_json(path, f"the results.json of a ragbench run; {rebuild}")
    version = data.get("schema_version", 1) if isinstance(data, dict) else None
    if is_results(data) and isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise NewerResults(
            f"{command}: {path} has schema_version {version}, written by a later ragbench (this one "
            f"reads {', '.join(map(str, VERSIONS))}): upgrade ragbench (pip install -U ragbench) to "
            "read it"
        )
    problem = results_problem(data)
    if problem is not None:
        raise ConfigError(f"{command}: {path} {problem}; {rebuild}")
    return Results.from_dict(normalized_results(data))


def results_problem(data: Any) -> str | None:
    """Why `read_results` refuses `data` (a results.json's parsed text), or None."""
    if not is_results(data):
        return "is not the results.json of a ragbench run (no 'results' object)"
    version = data.get("schema_version", 1)
    if version not in VERSIONS or isinstance(version, bool):
        return f"has schema_version {json_value(version)}, which no ragbench writes (the file was changed)"
    odd = next(
        (
            task
            for task in [*json_object(data.get("results")), *json_object(data.get("details"))]
            if not _task_name(task)
        ),
        None,
    )
    if odd is not None:
        return f"names a task {odd!r} that no run has (a task's samples are samples/TASK.jsonl)"
    return None


def results_text(results: Results) -> str:
    """results.json's text: strict JSON (`strict_json`), indented, at the current `schema_version`; checked as
    `read_results` reads it, so that no value a run records makes its results.json one its readers refuse."""
    data = {**results.to_dict(), "schema_version": SCHEMA_VERSION}
    problem = results_problem(data)
    if problem is not None:
        raise ValueError(f"results.json not written: it {problem}")
    return strict_json(data, indent=2) + "\n"


def json_value(value: Any) -> str:
    """`value` as a line names it: its JSON text, cut at 40 characters."""
    text = strict_json(value)
    return text if len(text) <= 40 else text[:39] + "…"


def is_results(data: Any) -> bool:
    """Whether `data` is a results.json's object: its values per task ("results"), or their details alone."""
    return isinstance(data, dict) and (isinstance(data.get("results"), dict) or isinstance(data.get("details"), dict))


def _task_name(name: str) -> bool:
    """Whether `name` can be a task's (its samples file's stem): printable, one plain file name (a run of an older
    ragbench may hold a name that breaks today's rule for names, ragbench._values.names)."""
    return name.isprintable() and part_problem(name) is None


def normalized_results(data: dict[str, Any]) -> dict[str, Any]:
    """`data` (a results.json's object) with every section the readers use in the current shape."""
    out = dict(data)
    details = json_object(data.get("details"))
    results = {str(task): json_object(keys) for task, keys in json_object(data.get("results")).items()}
    out["details"] = {
        task: {
            str(key): _entry(entry, results.get(task, {}).get(key))
            for key, entry in json_object(details.get(task)).items()
        }
        for task in dict.fromkeys([*results, *details])
    }
    for task, keys in results.items():  # a key with a value and no entry (no details written)
        for key, value in keys.items():
            out["details"][task].setdefault(str(key), _entry({}, value))
    out["results"] = {
        task: {key: entry["value"] for key, entry in keys.items()} for task, keys in out["details"].items()
    }
    counts = json_object(data.get("counts"))
    out["counts"] = {
        str(task): {name: _count(json_object(counts.get(task)).get(name)) for name in COUNTS}
        for task in dict.fromkeys([*out["details"], *counts])
    }
    if not isinstance(data.get("complete"), bool):  # not written: complete only when every task says so
        out["complete"] = bool(out["counts"]) and all(
            c["records"] and not any(c[name] for name in COUNTS[2:]) for c in out["counts"].values()
        )
    for section, shape in SECTIONS.items():
        if section in data or not isinstance(shape, Omittable):
            out[section] = shaped(data.get(section), shape)
    if out.get("checkpoint_repairs"):  # a task's entry lists the lines dropped: one at least
        out["checkpoint_repairs"] = {task: lines for task, lines in out["checkpoint_repairs"].items() if lines}
    out["config"] = _config(json_object(data.get("config")), list(out["details"]))
    return out


def _config(config: dict[str, Any], tasks: list[str]) -> dict[str, Any]:
    """The run's configuration with each option of RunConfig of the type it has there (a list, an object, a
    string), and the objects the readers look into (`task_configs`, `system_config`, `like_for_like` ...) objects."""
    out = dict(config)
    for option in run_options():
        if option.name not in config:
            continue
        kind = type(option.default_factory()) if option.default_factory is not MISSING else None
        value = config[option.name]
        if kind is not None and not isinstance(value, kind):
            out[option.name] = kind()
        elif kind is None and isinstance(option.default, str) and not isinstance(value, str):
            out[option.name] = option.default
    for name in ("system", "model"):
        if name in config and config[name] is not None and not isinstance(config[name], str):
            out[name] = str(config[name])
    out["tasks"] = [str(t) for t in out["tasks"]] if isinstance(out.get("tasks"), list) else tasks
    if "retriever_metadata" in config:
        out["retriever_metadata"] = json_object(config["retriever_metadata"])
    for name in ("task_configs", "system_config", "model_contents", "metric_configs", "like_for_like"):
        if name in config:
            out[name] = {
                str(task): value
                for task, value in json_object(config[name]).items()
                if isinstance(value, list if name == "metric_configs" else str if name == "model_contents" else dict)
            }
    return out


def _entry(entry: Any, value: Any = None, cell: bool = False) -> dict[str, Any]:
    """A key's entry in the current shape: value, ci95, n, n_none, n_errors, higher_is_better, its
    slices' entries (`cell`: value, ci95 and n only); `value` the results section's where the entry holds
    none."""
    entry = json_object(entry) if isinstance(entry, dict) else {"value": entry}
    out = dict(entry)
    raw = entry.get("value", value)
    out["value"] = _number(raw)
    interval = entry.get("ci95")
    ends = [_number(end) for end in interval] if isinstance(interval, list) and len(interval) == 2 else None
    out["ci95"] = ends if ends and None not in ends else None
    if (raw is not None and out["value"] is None) or (interval is not None and out["ci95"] is None):
        out.setdefault("error", NOT_A_NUMBER)
    out["n"] = _count(entry.get("n"))
    if cell:
        return out
    for name in ("n_none", "n_errors"):
        out[name] = _count(entry.get(name))
    direction = entry.get("higher_is_better", True)
    out["higher_is_better"] = direction if direction is None or isinstance(direction, bool) else True
    if "slices" in entry:
        out["slices"] = {
            str(field): {str(label): _entry(cell, cell=True) for label, cell in json_object(labels).items()}
            for field, labels in json_object(entry["slices"]).items()
        }
    return out


def shaped(value: Any, shape: Any) -> Any:
    """`value` in `shape` (see SECTIONS): what has the shape is kept, what has not is its default (an object
    or a list of the wrong type: empty; a number or string: the shape's own)."""
    if isinstance(shape, Omittable):
        return value if value is None else shaped(value, shape.of)
    if isinstance(shape, Each):
        return {str(key): shaped(inner, shape.of) for key, inner in json_object(value).items()}
    if isinstance(shape, list):
        return [shaped(item, shape[0]) for item in value] if isinstance(value, list) else []
    if isinstance(shape, dict):
        value = json_object(value)
        return {
            **value,
            **{
                key: shaped(value.get(key), inner)
                for key, inner in shape.items()
                if key in value or not isinstance(inner, Omittable)
            },
        }
    if isinstance(shape, str):
        return value if isinstance(value, str) else shape if value is None else str(value)
    if isinstance(shape, bool):
        return value if isinstance(value, bool) else shape
    return _number(value, shape)


def _number(value: Any, default: float | None = None) -> float | None:
    """A number a float can hold, as it is (an int kept an int), else `default` (NaN, an infinity, an int
    past the largest float: tables format numbers as floats)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    finite = abs(value) < 2**1023 if isinstance(value, int) else math.isfinite(value)
    return value if finite else default


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
