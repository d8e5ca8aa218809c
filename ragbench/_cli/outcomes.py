"""How a command of the command line ends: one line per problem and the exit code, never a traceback."""

from __future__ import annotations

import errno
import resource
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from .._config.run_config import RunConfig
from .._errors import EXIT_CONFIG, EXIT_INCOMPLETE, ConfigError
from .._run.lifetime.interrupted import RunInterrupted, exit_interrupted, interrupt_message
from .._stop_signals import exit_if_stopped, exit_when_stuck, stopped_starting
from .._values.urls import redact_urls
from .install_hints import for_this_install
from .registry import command_registry


def config_error(exc: ConfigError) -> None:
    """Every problem on its own line, any credential a URL in it holds redacted, then exit 2 (nothing was
    written)."""
    for line in for_this_install(redact_urls(str(exc))).splitlines() or [""]:
        click.echo(f"ragbench: error: {line}", err=True)
    sys.exit(EXIT_CONFIG)


def stopped_at_failure(exc: Any) -> None:
    """--fail-fast: the traceback of the failed record's system or metric (its error, for a bad record or
    a value that is not a score), then one line saying where the run stands; exit 1."""
    click.echo(exc.traceback.rstrip("\n"), err=True)
    click.echo(
        f"ragbench: --fail-fast: {exc}; the run stopped there (its sample and every finished one are saved "
        f"in {exc.run_dir}; --resume tries it again)",
        err=True,
    )
    sys.exit(EXIT_INCOMPLETE)


_ENVIRONMENT_FIXES = {
    errno.ENOSPC: "free space on that disk",
    errno.EDQUOT: "free space within your disk quota",
    errno.EROFS: "make it writable, or point {options} elsewhere",
    errno.EACCES: "make it writable, or point {options} elsewhere",
    errno.EPERM: "make it writable, or point {options} elsewhere",
}
RUN_OPTIONS = "--output / --cache / --page-cache"  # what points a run's writing elsewhere


# the dynamic loader's words for a shared library it had no memory to map (ulimit -v): an import that fails so
LOADER_OUT_OF_MEMORY = ("failed to map segment from shared object", "cannot allocate memory")


def exhausted(exc: BaseException) -> str | None:
    """What `exc` says the machine ran out of (memory, threads, open files) and the fix; None for another error."""
    if (
        isinstance(exc, MemoryError)
        or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM)
        or (isinstance(exc, RuntimeError) and str(exc).startswith("can't allocate"))  # io's and thread's locks
        or import_out_of_memory(exc)
    ):
        return "out of memory; free memory, or raise the memory limit (ulimit -v, the container's)"
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return (
            "cannot start a thread (out of memory or of threads); free memory, or raise the limits (ulimit -v, "
            "ulimit -u; each thread takes ulimit -s of memory)"
        )
    if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return f"too many open files (the limit is {soft}); raise it (ulimit -n 4096)"
    return None


def import_out_of_memory(exc: BaseException) -> bool:
    """An ImportError of a shared library the loader could not map for want of memory, or one raised from such an
    error (numpy's import wraps the loader's in its own)."""
    link: BaseException | None = exc
    while isinstance(link, ImportError):
        if any(words in str(link).lower() for words in LOADER_OUT_OF_MEMORY):
            return True
        link = link.__cause__ or link.__context__
    return False


def exit_if_exhausted(exc: BaseException, run_dir: Any = None) -> None:
    """When `exc` says the machine ran out of memory, threads or open files: one line naming it and the fix,
    then exit 1. Otherwise it returns, for the caller to raise `exc` again."""
    problem = exhausted(exc)
    if problem is None:
        return
    click.echo(f"ragbench: error: {problem}, {then_line(run_dir)}", err=True)
    sys.unraisablehook = lambda _unraisable: None  # what the interpreter's clean-up then fails at, short of
    sys.exit(EXIT_INCOMPLETE)  # the same resource (a half-made event loop), is no news


def then_line(run_dir: Any) -> str:
    """How to go on once the fault is fixed: `--resume` where the run folder has its run.json."""
    if run_dir is not None and (Path(run_dir) / "run.json").is_file():
        return "then run the same command with --resume (what finished is saved)"
    return "then run it again"


def environment_error(
    exc: OSError | sqlite3.Error, run_dir: Any = None, options: str = RUN_OPTIONS, then: str | None = None
) -> None:
    """An OS or SQLite error (a full disk, a read-only path, a failing device): one line naming what,
    where and the fix, then exit 1. What a run finished is saved, so `--resume` goes on from there. Of
    errors raised while cleaning up after one (a full disk fails every write), the first is named; an error
    raised `from None` is the first (what it was raised during follows from it: a run folder moved away).
    `options`: the command's options that point its writing elsewhere; `then`: how to go on once fixed
    (default: `--resume` where the run folder has its run.json, else running the command again; an error
    may say its own, as it may its `fix`). Too many open files, or no memory, is said as such
    (`exit_if_exhausted`)."""
    exit_if_exhausted(exc, run_dir)
    chain: list[BaseException] = [exc]
    while (earlier := _earlier(chain[-1])) is not None and earlier not in chain:
        chain.append(earlier)
    exc = next((e for e in reversed(chain) if isinstance(e, OSError) and e.filename), exc)
    if isinstance(exc, OSError):
        what = exc.strerror or type(exc).__name__
        where = exc.filename or "a file ragbench was writing"
        fix = getattr(exc, "fix", None) or _ENVIRONMENT_FIXES.get(exc.errno or 0, "fix what the error names")
        fix = fix.format(options=options)  # an error may say its own fix (NotAFileError)
    else:
        what, where, fix = f"SQLite error ({exc})", "a SQLite file", "fix or remove the file it names"
    then = getattr(exc, "then", None) or then or then_line(run_dir)
    click.echo(f"ragbench: error: {what}: {where}; {fix}, {then}", err=True)
    sys.exit(EXIT_INCOMPLETE)


def _earlier(exc: BaseException) -> BaseException | None:
    """The error `exc` was raised from or during, unless it was raised `from None`."""
    return exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)


@contextmanager
def run_starting() -> Iterator[None]:
    """Around all a run does before it begins (its options read, its RunConfig made): a problem ends in one
    line and its exit code; Ctrl-C, SIGTERM or SIGHUP in the line of a command stopped while starting."""
    try:
        yield
    except ConfigError as exc:
        config_error(exc)
    except (OSError, sqlite3.Error) as exc:
        environment_error(exc)
    except (KeyboardInterrupt, RuntimeError, MemoryError, ImportError) as exc:
        exit_if_stopped(exc, stopped_starting)
        exit_if_exhausted(exc)
        raise


def evaluated(config: RunConfig) -> Any:
    """`Evaluator(config).run()`'s outcome; every other way a run ends on the command line ends here, in one
    line and its exit code: a configuration problem (2), a fault of the disk or a file (1), --fail-fast (1),
    Ctrl-C, SIGTERM or SIGHUP (128 + the signal, with the command that continues the run)."""
    evaluator: Any = None

    def folder() -> Path:
        """The run's folder: as the pre-flight settled it (a task's own corpus names the retriever, and so the
        folder), else as the options name it."""
        return Path(evaluator.run_dir.path if evaluator is not None else config.run_dir())

    try:
        with exit_when_stuck(lambda signum: interrupt_message(folder(), signum=signum)):
            from .._run.evaluator import Evaluator  # a visible part of the start, under the handlers: a stop says so
            from .._run.plan.planning import run_registry

            evaluator = Evaluator(config, run_registry(config.what, command_registry()))
            return evaluator.run()
    except ConfigError as exc:
        config_error(exc)
    except (OSError, sqlite3.Error) as exc:
        environment_error(exc, folder())
    except RunInterrupted as exc:
        exit_interrupted(exc)
    except (KeyboardInterrupt, RuntimeError, MemoryError, ImportError) as exc:  # Ctrl-C, SIGTERM or SIGHUP: before
        exit_if_stopped(exc, lambda signum: interrupt_message(folder(), signum=signum))  # or after the examples
        exit_if_exhausted(exc, folder())  # ran; memory, threads or files short (an import that could not map)
        raise
    except Exception as exc:
        from .._run.example import StoppedAtFailure

        if not isinstance(exc, StoppedAtFailure):
            stopped_at_cap(exc)
            raise
        stopped_at_failure(exc)


def stopped_at_cap(exc: Exception) -> None:
    """A run stopped at its --max-cost (`SpendingCapReached`): one line, what it spent and the command that
    continues it; exit 1. Anything else returns."""
    import shlex

    from .._cost.spending_cap import SpendingCapReached

    if isinstance(exc, SpendingCapReached):
        args = [a for a in sys.argv[1:] if a not in ("--resume", "--overwrite")]
        click.echo(f"ragbench: {exc}; continue with: {shlex.join(['ragbench', *args, '--resume'])}", err=True)
        sys.exit(EXIT_INCOMPLETE)


def report_outcome(outcome: Any) -> None:
    """A finished run's summary on the console; exit 1 when it is incomplete."""
    show_outcome(outcome)
    if not outcome.complete:
        sys.exit(EXIT_INCOMPLETE)


def show_outcome(outcome: Any) -> None:
    """A finished run's summary on the console, and why it is incomplete where it is."""
    from .._reports.judging.human_agreement_lines import agreement_lines
    from .._reports.judging.judge_agreement import judge_agreement_lines
    from .._reports.judging.judge_swap import judge_swap_lines
    from .._reports.results.config_diff import described, retriever
    from .._reports.results.failures import incomplete_reason
    from .._reports.run_summary import budget_lines, cost_line, examples_run, failure_lines, results_table

    results = outcome.typed_results
    click.echo(f"run: {described(results.config)}, {retriever(results.config)}")
    click.echo(results_table(results))
    # each cache's notice was warned when it opened
    click.echo(cost_line(results.cost, notices=False, examples=examples_run(results)))
    for line in budget_lines(results) + agreement_lines(results):
        click.echo(line)
    for line in judge_agreement_lines(results, outcome.run_dir):
        click.echo(f"judge agreement: {line}")
    for line in judge_swap_lines(results):
        click.echo(f"judge swap: {line}")
    for line in failure_lines(results):
        click.echo(f"ragbench: {line}", err=True)
    click.echo(f"results: {outcome.run_dir / 'results.json'}")
    if not outcome.complete:
        click.echo(f"ragbench: incomplete run ({incomplete_reason(results)})", err=True)
