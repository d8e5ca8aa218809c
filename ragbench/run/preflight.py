"""The pre-flight: everything a run can check before anything heavy loads or anything is written.

The core checks the run's own options (limits, output folder, engine strings and options) and asks
every plugin for its own checks through one hook each, so a third-party task, system, metric or
engine adds checks without the core knowing it:

  Task.preflight(check)                  data found, its first records read (the default), plus a
                                         task's prerequisites (tokenizers, services ...)
  System.preflight(check, task)          the system on that task (default: `System.check`)
  Metric.preflight(check, task)          the metric on that task (default: nothing)
  Engine.preflight(model, options)       an engine string and its options, without loading it
                                         (default: the options `__init__` accepts)

A hook reports through `check.problem("one line: what, where; the option that fixes it")`, or by
raising `ConfigError` inside `with check.step(...)`. Every problem is collected; the run stops with
all of them at once (`PreflightError`, exit 2) before its folder exists.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .checks import Preflight


# --- the run's own options ----------------------------------------------------------------------------
def check_run_options(config: Any, check: Preflight) -> None:
    """Numbers in range, and an output folder that can take this run (nothing is created)."""
    from ..storage.files import write_problem
    from ..storage.rundir import RunDir

    for flag, value, least in (("--max-inflight", config.max_inflight, 1), ("--limit", config.limit, 1),
                               ("--bootstrap-iters", config.bootstrap_iters, 0)):
        if value is not None and value < least:
            check.problem(f"{flag} {value}: give at least {least}" + (", or leave it out for all records"
                                                                      if flag == "--limit" else ""))
    if config.cache and Path(config.cache).is_dir():
        check.problem(f"--cache {config.cache}: a folder is there; give a file path for the SQLite cache")
    with check.step(f"output folder {config.run_dir()}"):
        RunDir(config.run_dir()).check_start(config.identity(), config.config_hash(), config.resume, config.overwrite)
        unwritable = write_problem(config.run_dir())
        if unwritable:
            raise ConfigError(f"--output {config.run_dir()}: {unwritable}; choose a folder that can be written")


def check_cache_files(config: Any, planned: list[Any], check: Preflight) -> None:
    """The response cache and (for tasks that take a `page_cache` option) the page cache: files a run
    can read and write. One that cannot serve is a warning: the run goes on without it, or with a
    fresh one in place of a damaged one (ragbench.storage.sqlite_store)."""
    from ..storage import cache, page_cache
    from ..storage.files import write_problem
    from ..storage.store_checks import file_problem

    # the run's own cache.sqlite: said of --output when that cannot be written, deleted by --overwrite
    skip = config.cache is None and (config.overwrite or write_problem(config.run_dir()))
    caches = [] if skip else [(cache.LABEL, Path(config.cache or Path(config.run_dir()) / "cache.sqlite"), cache.FIX)]
    # the page cache a task opens: its own option, else --page-cache, else the default (as the run resolves it)
    for chosen in dict.fromkeys(p.task.args.get("page_cache") or config.page_cache for p in planned
                                if "page_cache" in getattr(p.task, "args", {})):
        if str(chosen).strip().lower() not in page_cache.OFF:
            path = Path(chosen).expanduser() if chosen else page_cache.default_path().expanduser()
            caches.append((page_cache.LABEL, path, page_cache.FIX))
    for label, path, fix in caches:
        if path.is_dir():  # said of --cache already
            continue
        problem = file_problem(path)
        if problem is None:
            check.passed(f"{label} {path}: can be read and written")
        else:
            check.warn(f"{label} {path}: {problem.reason}; {problem.consequence(label, fix)}")


def check_engines(config: Any, registry: Any, check: Preflight, uses_llm: bool, uses_nli: bool) -> None:
    """Every engine the run will load (--model, --role-model, --judge, --nli): a known engine, options it
    accepts, a server that answers; nothing is loaded."""
    from ..engines import EMBEDDED_MODEL
    from ..engines.replicas import _RAY_OPTIONS

    # (option, how its engine options are written, engine:model, options); an engine's messages name
    # --model-arg and --base-url, rewritten here for the engine they are about
    engines = [("--model", "--model-arg ", config.model or EMBEDDED_MODEL, config.model_args)] if uses_llm else []
    engines += [(f"--role-model {role}=", f"--role-model-arg {role}.", model, config.role_model_args.get(role, {}))
                for role, model in config.role_models.items()]
    engines += [("--judge", f"--judge-arg {i}.", model, config.judge_args.get(str(i), {}))
                for i, model in enumerate(config.judges)]
    if config.nli and uses_nli:
        engines.append(("--nli", "--nli-arg ", config.nli, config.nli_args))
    for flag, args_flag, spec, options in engines:
        where = f"{flag}{'' if flag.endswith('=') else ' '}{spec}"
        with check.step(where):
            kind, sep, name = spec.partition(":")
            if not sep or not name:
                raise ConfigError(f"{where}: is not of the form engine:model (e.g. hf:Qwen/Qwen2.5-0.5B-Instruct, "
                                  "openai:gpt-4o-mini, replay:calls.jsonl); `ragbench list engines` names the engines")
            try:
                engine_class = registry.load("engines", kind)
            except ConfigError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            plain = {k: v for k, v in options.items() if k not in _RAY_OPTIONS}
            urls = plain.get("base_url")
            for url in urls if isinstance(urls, (list, tuple)) else [urls]:
                for problem in engine_class.preflight(name, {**plain, **({"base_url": url} if url else {})}):
                    if flag != "--model":
                        problem = problem.replace("--model-arg ", args_flag).replace("--base-url", f"{args_flag}base_url")
                    check.problem(f"{where}: {problem}")


def preflight(config: Any, registry: Any, check: Preflight | None = None) -> tuple[list[Any], Preflight]:
    """The whole pre-flight of a run: its options, every plugin's hooks, its engines. Returns the planned
    tasks and what was checked; raises `PreflightError` listing every problem."""
    from .planning import needs, plan

    check = check if check is not None else Preflight()
    check_run_options(config, check)
    planned = plan(config, registry, check)
    check_cache_files(config, planned, check)
    try:
        system_class = registry.load("systems", config.system)
    except ConfigError:
        system_class = None  # reported by plan
    uses_llm = system_class is not None and getattr(system_class, "uses_llm", True)
    check_engines(config, registry, check, uses_llm, needs(planned, "nli"))
    check.raise_if_failed()
    return planned, check
