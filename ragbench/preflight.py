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

import codecs
import itertools
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from .errors import ConfigError, RecordError

if TYPE_CHECKING:
    from .task import Task

PROBE_RECORDS = 5  # records read from each task's data before the run
PROBE_TIMEOUT = 3.0  # seconds an HTTP service (server endpoint, KG API) gets to answer
_COMPRESSED = (".bz2", ".gz", ".xz", ".zip", ".tar", ".zst")


class PreflightError(ConfigError):
    """Every problem the pre-flight found, one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class Preflight:
    """What the pre-flight checked (`checked`) and what it found wrong (`problems`)."""

    def __init__(self) -> None:
        self.checked: list[str] = []
        self.problems: list[str] = []

    def passed(self, what: str) -> None:
        self.checked.append(what)

    def problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    @contextmanager
    def step(self, what: str) -> Iterator[None]:
        """Run one check: a `ConfigError` raised inside becomes a problem (its lines each one),
        a step that added no problem is recorded as passed."""
        before = len(self.problems)
        try:
            yield
        except PreflightError as exc:
            for line in exc.problems:
                self.problem(line)
        except ConfigError as exc:
            self.problem(str(exc))
        if len(self.problems) == before:
            self.passed(what)

    def raise_if_failed(self) -> None:
        if self.problems:
            raise PreflightError(self.problems)


# --- data files -----------------------------------------------------------------------------------
def utf8_problem(path: Path, chunk: int = 1 << 20) -> str | None:
    """Where a plain text file stops being UTF-8 (line and byte offset), or None."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, lines = 0, 0
    with path.open("rb") as handle:
        while True:
            data = handle.read(chunk)
            try:
                decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                # positions count from the bytes the decoder still held of the previous chunk (the
                # start of a multi-byte character: never a newline)
                bad = offset - (len(exc.object) - len(data)) + exc.start
                line = lines + exc.object[:exc.start].count(b"\n") + 1
                return f"{path}: line {line} (byte offset {bad}) is not UTF-8 ({exc.reason}, byte 0x{exc.object[exc.start]:02x})"
            if not data:
                return None
            offset += len(data)
            lines += data.count(b"\n")


def probe_data(task: "Task", check: Preflight) -> None:
    """Read the first records of `task` (found by `prepare`): the file is UTF-8 when it is plain
    text, its format is recognised, and it holds at least one example."""
    name = task.name
    where = task.path or task.data_path or "its data"
    fix = f"fix the file or pass --data {name}=PATH"
    path = Path(task.path) if task.path is not None else None
    if path is not None and path.is_file() and not path.name.endswith(_COMPRESSED) and ".part" not in path.suffix:
        problem = utf8_problem(path)
        if problem:
            check.problem(f"task {name}: {problem}; {fix}")
            return
    items: list[Any] = []
    stream = task.examples()
    try:
        items = list(itertools.islice(stream, PROBE_RECORDS))
    except ConfigError as exc:
        check.problem(f"task {name}: {exc}")
        return
    except UnicodeDecodeError as exc:
        check.problem(f"task {name}: {where}: not UTF-8 at byte {exc.start} of a record ({exc.reason}); {fix}")
        return
    except Exception as exc:  # the format was not recognised: one line, never a traceback
        check.problem(f"task {name}: cannot read {where} ({type(exc).__name__}: {exc}); {fix}")
        return
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    examples = [item for item in items if not isinstance(item, RecordError)]
    if not items:
        check.problem(f"task {name}: {where} holds no record; pass --data {name}=PATH to a file with records")
    elif not examples:
        check.problem(f"task {name}: none of the first {len(items)} record(s) of {where} is usable "
                      f"(first: {items[0]}); {fix}")
    else:
        bad = len(items) - len(examples)
        check.passed(f"task {name}: {where} read ({len(examples)} of the first {len(items)} records parsed"
                     + (f", {bad} bad: counted at run time" if bad else "") + ")")


# --- services ---------------------------------------------------------------------------------------
def unreachable(url: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when an HTTP server answers at `url` (any status), else why not."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=timeout):
            return None
    except urllib.error.HTTPError:  # it answered, if only with an error status
        return None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"no answer from {url} within {timeout:g} s ({reason})"


# --- the run's own options ----------------------------------------------------------------------------
def check_run_options(config: Any, check: Preflight) -> None:
    """Numbers in range, and an output folder that can take this run (nothing is created)."""
    from .rundir import RunDir

    for flag, value, least in (("--max-inflight", config.max_inflight, 1), ("--limit", config.limit, 1),
                               ("--bootstrap-iters", config.bootstrap_iters, 0)):
        if value is not None and value < least:
            check.problem(f"{flag} {value}: give at least {least}" + (", or leave it out for all records"
                                                                      if flag == "--limit" else ""))
    if config.cache and Path(config.cache).is_dir():
        check.problem(f"--cache {config.cache}: a folder is there; give a file path for the SQLite cache")
    with check.step(f"output folder {config.run_dir()}"):
        RunDir(config.run_dir()).check_start(config.identity(), config.config_hash(), config.resume, config.overwrite)


def check_engines(config: Any, registry: Any, check: Preflight, uses_llm: bool, uses_nli: bool) -> None:
    """Every engine the run will load (--model, --role-model, --judge, --nli): a known engine, options it
    accepts, a server that answers; nothing is loaded."""
    from .engines import EMBEDDED_MODEL
    from .engines.replicas import _RAY_OPTIONS

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
    try:
        system_class = registry.load("systems", config.system)
    except ConfigError:
        system_class = None  # reported by plan
    uses_llm = system_class is not None and getattr(system_class, "uses_llm", True)
    check_engines(config, registry, check, uses_llm, needs(planned, "nli"))
    check.raise_if_failed()
    return planned, check
