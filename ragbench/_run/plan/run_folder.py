"""Where a run writes, checked before anything is: its folder (new, or this run's to resume, over the corpus its
tasks ship as it was, or overwrite), the caches it opens, and (`ragbench check`) the free space on their file
systems."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._checks import Preflight
from ..._config.output import RunOutput
from ..._config.retrieval import RunRetrieval
from ..._config.run_config import RunConfig, identity_hash
from ..._errors import ConfigError
from ..._storage.files import write_problem
from ..._storage.rundir import RunDir
from .task_corpus import CORPUS_RETRIEVER


def check_output_folder(output: RunOutput, identity: dict[str, Any], run_dir: RunDir, check: Preflight) -> None:
    """The run's folder can take the run of `identity` (`RunConfig.identity`; nothing is created): new, or this
    run's to resume or overwrite (`output`), and writable."""
    with check.step(f"output folder {run_dir.path}"):
        run_dir.check_start(identity, identity_hash(identity), output.resume, output.overwrite)
        unwritable = write_problem(run_dir.path)
        if unwritable:
            raise ConfigError(f"--output {run_dir.path}: {unwritable}; choose a folder that can be written")


def corpus_changed_on_resume(
    output: RunOutput,
    retrieval: RunRetrieval,
    identity: dict[str, Any],
    corpus: Path | None,
    run_dir: RunDir,
    check: Preflight,
) -> bool:
    """With --resume, whether the run in `run_dir` searched its tasks' shipped `corpus` through another index of the
    cache than `use_task_corpus` names now (in the run's `identity`): the corpus file changed since the run
    started. One problem saying so (rather than options that differ, which the user did not change)."""
    if not output.resume or corpus is None or not retrieval.shipped_corpus_index:
        return False
    recorded = run_dir.record
    then = recorded.identity if recorded is not None else {}
    recorded_args = then.get("retriever_args")  # absent in a run.json of an older ragbench
    before = recorded_args.get("index") if isinstance(recorded_args, dict) else None
    now = identity["retriever_args"]["index"]
    if then.get("retriever") != CORPUS_RETRIEVER or not isinstance(before, str) or before == now:
        return False
    if not before.startswith(f"{CORPUS_RETRIEVER}-"):
        return False  # an index the run named itself (--retriever-arg index=DIR): the options differ
    check.problem(
        f"--resume: {run_dir.path}: {corpus} changed since the run started (its index then {before}, now "
        f"{now}); its saved samples would mix with new ones: restore the file, --overwrite runs it again, or "
        "choose a new --output"
    )
    return True


def cache_files(
    output: RunOutput, retrieval: RunRetrieval, folder: Path, planned: list[Any]
) -> list[tuple[str, Path, str, Any, bool]]:
    """(label, path, fix, schema, owned) of the caches the run opens: the response cache and (for tasks that
    take a `page_cache` option) the page cache; `owned`: the run folder's (`folder`) own cache.sqlite."""
    from ..._storage import cache, page_cache

    # the run's own cache.sqlite: said of --output when that cannot be written, deleted by --overwrite
    skip = output.cache is None and (output.overwrite or write_problem(folder))
    caches = (
        []
        if skip
        else [
            (
                cache.LABEL,
                Path(output.cache or folder / "cache.sqlite"),
                cache.FIX,
                cache.SCHEMA,
                output.cache is None,
            )
        ]
    )
    # the page cache a task opens: its own option, else --page-cache, else the default (as the run resolves it)
    for chosen in dict.fromkeys(
        p.task.args.get("page_cache") or retrieval.page_cache
        for p in planned
        if "page_cache" in getattr(p.task, "args", {})
    ):
        if str(chosen).strip().lower() not in page_cache.OFF:
            path = Path(chosen).expanduser() if chosen else page_cache.default_path().expanduser()
            caches.append((page_cache.LABEL, path, page_cache.FIX, page_cache.SCHEMA, False))
    return caches


def check_cache_files(
    output: RunOutput, retrieval: RunRetrieval, folder: Path, planned: list[Any], check: Preflight
) -> None:
    """The caches (`cache_files`): files a run can read and write. A file ragbench did not make is a problem
    (the run would leave it out); one that cannot serve otherwise is a warning: the run goes on without it,
    or with a fresh one in place of a damaged one (ragbench._storage.sqlite_store)."""
    from ..._storage.store_checks import file_problem

    for label, path, fix, schema, owned in cache_files(output, retrieval, folder, planned):
        if output.cache and path == Path(output.cache) and path.is_dir():  # said of --cache already
            continue
        problem = file_problem(path, schema, owned)
        if problem is None:
            check.passed(f"{label} {path}: can be read and written")
        elif problem.foreign:
            check.problem(f"{label} {path}: {problem.reason}; {problem.consequence(label, fix)}")
        else:
            check.warn(f"{label} {path}: {problem.reason}; {problem.consequence(label, fix)}")


# What `ragbench check` asks of the free space where the run writes: 64 KiB a record (a run folder of the demo
# task held 3-4 KiB a record with the prompts and replies of closed_book and vanilla; prompts of retrieved
# pages run ten times that), and never less than 100 MiB (the response cache, results, report).
SPACE_PER_RECORD = 64 * 2**10
SPACE_FLOOR = 100 * 2**20


def check_free_space(config: RunConfig, folder: Path, planned: list[Any], check: Preflight) -> None:
    """The free space of each file system the run writes to (its folder, its caches): passed with the figure,
    or a warning when below what the run may write (`SPACE_PER_RECORD` for each record it will read, counted
    as the progress bar does, at least `SPACE_FLOOR`). A warning only: the estimate is rough, and a full disk
    during the run ends in one line leaving a run that --resume completes."""
    import shutil

    from ..._storage.files import nearest_existing

    sizes = [min((x for x in (p.task.size_hint(), config.what.limit) if x is not None), default=None) for p in planned]
    records = sum(size for size in sizes if size is not None)
    need = max(SPACE_FLOOR, records * SPACE_PER_RECORD)
    estimate = f"{records} record(s) x {SPACE_PER_RECORD // 2**10} KiB"
    estimate += " and tasks of unknown size" if None in sizes else ""
    places = [("--output", folder)]
    places += [(label, path) for label, path, *_ in cache_files(config.output, config.retrieval, folder, planned)]
    seen: set[int] = set()
    for label, path in places:
        if write_problem(path):
            continue  # the write checks say so
        existing = nearest_existing(path.expanduser().absolute())
        try:
            device, free = existing.stat().st_dev, shutil.disk_usage(existing).free
        except OSError:
            continue
        if device in seen:
            continue
        seen.add(device)
        if free < need:
            check.warn(
                f"{label} {path}: {mebibytes(free)} free on its file system, less than the run may write "
                f"({mebibytes(need)}: {estimate}, at least {mebibytes(SPACE_FLOOR)}); free space there, or "
                "choose another place (a full disk stops the run, which --resume continues)"
            )
        else:
            check.passed(
                f"{label} {path}: {mebibytes(free)} free on its file system (the run may write {mebibytes(need)})"
            )


def mebibytes(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB"
