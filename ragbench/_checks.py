"""The pre-flight's problem collector (`Preflight`) and the probes plugin hooks use (a task's first
records, UTF-8, an HTTP service answering): part of the contract, beside Task, System and Metric, whose
`preflight` hooks receive it; ragbench._run.plan.preflight runs the whole pre-flight.
"""

from __future__ import annotations

import codecs
import errno
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ._errors import ConfigError, RecordError
from ._plugin_calls import exception_line, is_plugin_fault
from ._values.urls import Credentials, redact_urls

MACHINE_SHORT = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)  # too many open files, no memory
PROBE_RECORDS = 5  # at most, read from each task's data before the run, until one is usable
PROBE_TIMEOUT = 3.0  # seconds an HTTP service (server endpoint, KG API) gets to answer
_COMPRESSED = (".bz2", ".gz", ".xz", ".zip", ".tar", ".zst")


class PreflightError(ConfigError):
    """Every problem the pre-flight found, one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class Preflight:
    """What the pre-flight checked (`checked`), what it found wrong (`problems`: the run cannot start)
    and what a run will work around (`warnings`: a damaged or unwritable cache; a run says it again
    when it meets it, `ragbench check` lists them)."""

    def __init__(self) -> None:
        self.checked: list[str] = []
        self.problems: list[str] = []
        self.warnings: list[str] = []
        self._leading = 0  # how many of `problems` were given with first=True

    def passed(self, what: str) -> None:
        self.checked.append(what)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def problem(self, message: str, first: bool = False) -> None:
        """`first`: a problem that makes others moot (the model cannot do what the system is for, whatever
        the options), listed before them, so the first line a user reads is the one to act on."""
        if message in self.problems:
            return
        if first:
            self.problems.insert(self._leading, message)
            self._leading += 1
        else:
            self.problems.append(message)

    @contextmanager
    def step(self, what: str) -> Iterator[None]:
        """Run one check: a `ConfigError` raised inside becomes a problem (its lines each one), an OSError naming a
        file (a FIFO where a file is read, NotAFileError) one naming that file, never a plugin's bug, and so does
        whatever else a plugin's check raises (its class and message: ragbench._plugin_calls; a stop signal
        still stops the command, and an out-of-memory ends it in its own line: ragbench._cli.outcomes); a step
        that added no problem is recorded as passed."""
        before = len(self.problems)
        try:
            yield
        except PreflightError as exc:
            for line in exc.problems:
                self.problem(line)
        except ConfigError as exc:
            self.problem(str(exc))
        except BaseException as exc:
            if isinstance(exc, OSError) and exc.filename is not None and exc.errno not in MACHINE_SHORT:
                fix = getattr(exc, "fix", None) or "fix or give the file it names"  # NotAFileError says its own
                self.problem(f"{what}: {exc.filename}: {exc.strerror or type(exc).__name__}; {fix}")
                return
            if isinstance(exc, MemoryError) or not is_plugin_fault(exc):  # the machine's: one line, the run not begun
                raise
            self.problem(
                f"{what}: the check raised {exception_line(exc)} (a bug of the plugin checked: "
                "tell its author; `ragbench check` shows every problem)"
            )
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
                line = lines + exc.object[: exc.start].count(b"\n") + 1
                return f"{path}: line {line} (byte offset {bad}) is not UTF-8 ({exc.reason}, byte 0x{exc.object[exc.start]:02x})"
            if not data:
                return None
            offset += len(data)
            lines += data.count(b"\n")


def probe_data(task: Any, check: Preflight) -> None:
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
    try:  # up to the first usable record: a CRAG Task 3 record is megabytes of bz2 and JSON, slow to read
        for item in itertools.islice(stream, PROBE_RECORDS):
            items.append(item)
            if not isinstance(item, RecordError):
                break
    except ConfigError as exc:
        check.problem(f"task {name}: {exc}")
        return
    except UnicodeDecodeError as exc:
        check.problem(f"task {name}: {where}: not UTF-8 at byte {exc.start} of a record ({exc.reason}); {fix}")
        return
    except BaseException as exc:  # the format was not recognised, or the loader's bug: one line, never a traceback
        if not is_plugin_fault(exc):  # the command's stop signal
            raise
        check.problem(f"task {name}: cannot read {where} ({exception_line(exc)}); {fix}")
        return
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    examples = [item for item in items if not isinstance(item, RecordError)]
    if not items:
        check.problem(f"task {name}: {where} holds no record; pass --data {name}=PATH to a file with records")
    elif not examples:
        check.problem(
            f"task {name}: none of the first {len(items)} record(s) of {where} is usable (first: {items[0]}); {fix}"
        )
    else:
        bad = len(items) - len(examples)
        check.passed(
            f"task {name}: {where} read (a record parsed"
            + (f" after {bad} bad: counted at run time" if bad else "")
            + ")"
        )


# --- services ---------------------------------------------------------------------------------------
def unreachable(url: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when an HTTP server answers at `url` (any status), else why not (the URL's credentials redacted).
    The request leaves out its user info (urllib would take it for the host) and query: any answer will do."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(Credentials.of(url).url, method="GET"), timeout=timeout):
            return None
    except urllib.error.HTTPError:  # it answered, if only with an error status
        return None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return redact_urls(f"no answer from {url} within {timeout:g} s ({reason})")


HUB_FLAGS = threading.RLock()
"""Held by a load that reads huggingface_hub's process-wide offline flag to decide whether to ask the hub (a hub
dataset's load, which sets the flag for itself where the hub does not answer: `_yaml_tasks.hf`; a hub model's check
and fetch: `hub_fetch_problem`'s callers), so that no load reads the flag another thread's load set for itself."""


def hub_fetch_problem(model: str) -> str | None:
    """Why `model` cannot be had: a name that is neither a folder on disk nor in the local Hugging Face cache, when
    the hub does not answer (transformers would spend a minute retrying before it says so); else None. A caller
    fetching what this allows holds HUB_FLAGS over both."""
    if Path(model).expanduser().exists():
        return None
    from huggingface_hub import constants, try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(model, "config.json")
    except Exception:  # not a valid hub name: the loader says so
        return None
    with HUB_FLAGS:
        if isinstance(cached, str) or constants.HF_HUB_OFFLINE:  # offline, the loaders fail at once themselves
            return None
        why = unreachable(constants.ENDPOINT)
    return (
        None
        if why is None
        else f"model '{model}' is neither a folder on disk nor in the Hugging Face cache "
        f"({constants.HF_HUB_CACHE}), and the hub cannot be reached: {why}"
    )
