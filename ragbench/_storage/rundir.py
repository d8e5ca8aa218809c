"""A run's folder: its config, the per-task sample files (also the checkpoint), results.json.

runs/<name>/
  run.json              the config, its identity and hash, every attempt's cost; "finished": false
                        until the run completes
  samples/<task>.jsonl  one line per record, appended as each finishes (the checkpoint), and
                        rewritten in data order when the run completes; a record's `trace` is the
                        one copy of its prompts and replies
  calls/                every LLM, retrieval and tool call (ragbench._replay.recording), referring to the
                        trace for what it already holds
  cache.sqlite          engine responses (unless --cache points elsewhere)
  results.json, report.md
  run.lock              held by the run using the folder (ragbench._storage.run_lock)

Files rewritten in place are replaced whole (ragbench._storage.files.replacing): a full disk leaves the
old file and no temporary one; appends stay appends.

A record's checkpoint key is its example id (a bad record's: its position), each kind in a space of its
own (ragbench._storage.checkpoint, with the digests and positions a --resume compares); its `index` is its
position in the task's stream, set by the evaluator, so a task need not number its examples. A record that moved in the data keeps its sample, which takes its new
position when the samples are rewritten (`finalize_samples`).

Sample files are read one record at a time (ragbench._records' `saved_lines`): nothing here holds a task's samples.

A folder is a run's when its run.json is one ragbench wrote (a regular file with the keys it writes):
only then does `--overwrite` delete, and only the names a run writes (`RUN_FOLDERS`, `RUN_FILES`, the
judge logs), never what a symbolic link among them points to. A folder holding such names but no run
(a user's samples/ or results.json) is refused, and so is a run folder holding a link where a run
writes: nothing outside the run folder is written through it.

While a run holds its folder, run.json is rewritten from the copy the run last wrote, and a folder moved or
removed under the run (`mv runs/x elsewhere`) stops it with `RunFolderMoved`, naming where the folder is now
and the `--resume --output` that completes it there: never a run.json written without its config.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import ConfigError, RecordError
from .earlier_runs import carrying
from .files import file_there, open_file, remove_temporaries, replacing, write_all_atomically, write_atomically
from .jsonl import Appender, dumps, open_append, parse_json, read_json, strict_json
from .run_attempts import caught_up, latest_cost, with_attempt
from .run_lock import LOCK_FILE, RunFolderMoved, RunLock
from .run_record import RUN_KEYS, AttemptCost, RunRecord, RunShapeError
from .sample_files import ATTEMPT_COST, SavedLines, line_offsets, sample_file
from .shared_turns import TurnsWriter, turns_file

if TYPE_CHECKING:  # the JSON types only: ragbench._types is a layer beside this one
    from .._values.json_values import JsonObject, JsonValue

# ... its last, as it is written (an object of numbers and the attempt's id): taken off when the samples are rewritten
_STAMP = re.compile(rb', "attempt_cost": \{"id": "[^"\\]*"(?:, "[a-z_]+": [0-9.eE+-]+)*\}\}$')


RUN_FOLDERS = ("samples", "turns", "calls")  # what a run writes in its folder (run.lock stays: see run_lock)
RUN_FILES = (
    "results.json",
    "report.md",
    "run.json",
    "nli_calls.jsonl",
    "cache.sqlite",
    "cache.sqlite-wal",
    "cache.sqlite-shm",
)
JUDGE_LOGS = "judge*_calls.jsonl"  # every judge's exchange log (ragbench._replay.exchange_log), as a glob pattern


def judge_log_name(index: int) -> str:
    return f"judge{index}_calls.jsonl"


def _differences(old: JsonValue, new: JsonValue) -> str:
    """What changed from `old` to `new`: key by key for two dicts (each value cut at 60 characters), else
    the two values whole (a model's name and digest)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return f"{json.dumps(old, default=str)} -> {json.dumps(new, default=str)}"
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return "; ".join(
        f"{k}: {json.dumps(old.get(k), default=str)[:60]} -> {json.dumps(new.get(k), default=str)[:60]}" for k in keys
    )


class RunDir:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.samples_dir = self.path / "samples"
        self._handles: dict[str, Appender] = {}
        self._turns: dict[str, TurnsWriter] = {}  # each task's turns file (shared_turns.py)
        self.lock = RunLock(self.path)
        self.unreadable: dict[str, list[RecordError]] = {}  # task -> unreadable checkpoint lines
        self._written_record: RunRecord | None = None  # the run.json this run last wrote (`_held`)
        self._recording = threading.RLock()  # run.json read, changed and written by one thread at a time

    @property
    def record(self) -> RunRecord | None:
        """The run.json ragbench wrote here, read typed, None when there is none; any other file there is a
        ConfigError (not a run ragbench made: nothing here is replaced), and so is one of another shape."""
        meta_path = self.path / "run.json"
        if not os.path.lexists(meta_path):
            return None
        kind = "a symbolic link" if meta_path.is_symlink() else "" if meta_path.is_file() else "not a file"
        meta = None if kind else read_json(meta_path, "the run.json ragbench wrote (choose another --output)")
        if not isinstance(meta, dict) or not all(key in meta for key in RUN_KEYS):
            raise ConfigError(
                f"{meta_path} is {kind + ', ' if kind else ''}not a run.json ragbench wrote; ragbench "
                "replaces only its own runs: choose another --output"
            )
        try:
            return RunRecord.of(meta)
        except RunShapeError as problem:
            raise ConfigError(
                f"{meta_path}: {problem}: not what ragbench writes (the file was changed); fix it, or "
                "--overwrite runs the run again, or choose another --output"
            ) from None

    def _written(self) -> list[str]:
        """The names a run writes that are here (a folder with something in it), run.json and caches aside."""
        names = [
            name
            for name in RUN_FOLDERS
            if (self.path / name).is_symlink() or ((self.path / name).is_dir() and any((self.path / name).iterdir()))
        ]
        names += [
            name for name in ("results.json", "report.md", "nli_calls.jsonl") if os.path.lexists(self.path / name)
        ]
        return names + sorted(p.name for p in self.path.glob(JUDGE_LOGS))

    def _holds_nothing(self) -> bool:
        """Whether the folder holds nothing but its lock (or is not there): no file a run writes, and no link, is
        in it (one listing, where `_written` and `_links` look at each name a run writes)."""
        try:
            return set(os.listdir(self.path)) <= {LOCK_FILE}
        except FileNotFoundError:
            return True
        except OSError:  # not a folder, not readable: as `_written` and `_links` find it
            return False

    def _links(self) -> list[Path]:
        """Symbolic links where a run writes: its files, its folders and what they hold."""
        places = [self.path / name for name in RUN_FOLDERS + RUN_FILES] + list(self.path.glob(JUDGE_LOGS))
        inside = [
            child
            for name in RUN_FOLDERS
            if (self.path / name).is_dir() and not (self.path / name).is_symlink()
            for child in (self.path / name).rglob("*")
        ]  # rglob does not follow links into folders
        return [path for path in places + inside if path.is_symlink()]

    def check_start(self, identity: JsonObject, config_hash: str, resume: bool, overwrite: bool = False) -> None:
        """Raise `ConfigError` when the run cannot start in this folder: it is a file; another run
        holds it; with `resume`, it holds no run of the same config; without, it holds a run and
        `overwrite` is not given, or it holds what a run writes but no run ragbench made; a link stands where
        the run writes. Writes nothing (the pre-flight calls it, `start` again)."""
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(
                f"--output {self.path}: is a file, not a folder; choose a folder "
                "(new, or a run's with --resume / --overwrite)"
            )
        refusal = self.lock.refusal()
        if refusal:
            raise ConfigError(refusal)
        previous = self.record
        empty = self._holds_nothing()
        if resume:
            if previous is None:
                raise ConfigError(
                    f"--resume: {self.path} holds no run to resume (no run.json); drop --resume to start one"
                )
            if previous.config_hash != config_hash:
                changed = _differences(previous.identity, identity) or "options of an older ragbench"
                raise ConfigError(
                    f"--resume: {self.path} was run with a different configuration ({changed}); "
                    "use the same options, or a new --output"
                )
        elif previous is None and not empty and self.path.is_dir() and (written := self._written()):
            raise ConfigError(
                f"--output {self.path}: holds {', '.join(written)} but no run of ragbench (no run.json "
                "it wrote); ragbench writes only into a new folder or a run it made: choose another "
                "--output"
            )
        elif previous is not None and not overwrite:
            raise ConfigError(
                f"{self.path} already holds a run: --resume continues it, --overwrite replaces "
                "it, or choose another --output"
            )
        links = [] if (overwrite and not resume) or empty else self._links()
        if links:
            raise ConfigError(
                f"--output {self.path}: {links[0]} is a symbolic link (to {os.readlink(links[0])}); "
                "ragbench never writes through a link in its run folder: remove the link, or "
                "--overwrite replaces the run (removing only the link)"
            )

    def start(
        self,
        config: JsonObject,
        identity: JsonObject,
        config_hash: str,
        resume: bool,
        overwrite: bool = False,
        data: JsonObject | None = None,
        attempt: AttemptCost | None = None,
    ) -> list[AttemptCost]:
        """Create and lock the folder (after `check_start`; held until the `held` block ends); with
        `overwrite`, the earlier run's files go first; `data`: each task's data fingerprint
        (`Task.data_fingerprint`, what `data_changed` compares); `attempt`: this attempt's cost so far, recorded
        in the same write (`record_attempt`). Returns the earlier attempts' costs."""
        self.check_start(identity, config_hash, resume, overwrite)
        if resume:
            self.check_same_inputs(config)
        if not self.lock.held:
            self.lock.acquire()
            self.check_start(identity, config_hash, resume, overwrite)  # a run may have ended here while we waited
        previous = self.record
        if previous is not None:
            remove_temporaries(self.path, RUN_FOLDERS)  # a `kill -9` while a file was being replaced
        if overwrite and not resume and previous is not None:
            self._remove_run()
            previous = None
        attempts = list(previous.attempts) if previous is not None else []
        self.samples_dir.mkdir(parents=True, exist_ok=True)
        self._write(
            RunRecord(
                config=config,
                identity=identity,
                config_hash=config_hash,
                data=data or {},
                finished=False,
                attempts=attempts if attempt is None else with_attempt(attempts, attempt),
            )
        )
        return attempts

    def _remove_run(self) -> None:
        """The files of the run `check_start` found here (a run ragbench made): a link among them is removed,
        never what it points to."""
        for path in [self.path / name for name in RUN_FOLDERS + RUN_FILES] + list(self.path.glob(JUDGE_LOGS)):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)  # a link inside is removed, not followed
            else:
                path.unlink(missing_ok=True)

    def data_changed(self, now: JsonObject) -> list[str]:
        """The tasks whose data fingerprint is not the one recorded when the run started (a run.json of an
        older ragbench records none: nothing to compare)."""
        recorded = self.record.data if self.record is not None else {}
        return [task for task, fingerprint in now.items() if task in recorded and recorded[task] != fingerprint]

    def check_same_inputs(self, config: JsonObject) -> None:
        """Raise `ConfigError` when a task's own configuration (`Task.config`: a YAML task's file digest,
        its options), a model's files (`model_contents`: ragbench._engines.local.content) or the retriever's index
        (`retriever_contents`: `Retriever.contents`) are not those the run was started with: the options can
        match while a file changed."""
        recorded = self.record.config if self.record is not None else {}
        for key, what in (
            ("task_configs", "a task"),
            ("model_contents", "the files of a model"),
            ("retriever_contents", "what the retriever searches (its index or recording)"),
        ):
            before = recorded.get(key)
            if before is not None and not isinstance(before, dict):
                raise ConfigError(
                    f"--resume: {self.path / 'run.json'}: its config.{key} is not what ragbench writes "
                    "(the file was changed): --overwrite runs the run again, or choose a new --output"
                )
            given = config.get(key)
            now = given if isinstance(given, dict) else {}  # a run's own config: an object, or none said
            if before is not None and before != now:
                changed = "; ".join(
                    f"{name}: {_differences(before.get(name), now.get(name))}"
                    for name in sorted(set(before) | set(now))
                    if before.get(name) != now.get(name)
                )
                raise ConfigError(
                    f"--resume: {self.path}: {what} changed since the run started ({changed}); its "
                    "saved samples would mix with new ones: --overwrite runs it again, or choose a new "
                    "--output"
                )

    def _held(self) -> RunRecord:
        """run.json as this run last wrote it, else as read; a folder with none holds no run to record in."""
        held = self._written_record or self.record
        if held is None:
            raise ValueError(f"{self.path / 'run.json'} not written: it lacks config or config_hash (no run started)")
        return held

    def sample_path(self, task: str) -> Path:
        return sample_file(self.path, task)

    def append_sample(self, task: str, text: str, attempt_cost: AttemptCost | None = None) -> None:
        """Append a sample to the task's file: `text`, the JSON text (`dumps`) of its line as a record's one layout
        makes it (ragbench._records' `sample_line`, at the current `schema_version`), with `attempt_cost`, the cost
        of the attempt that saved it, written last on the line (`ATTEMPT_COST`: the checkpoint's, taken off by
        `finalize_samples`) as `dumps` writes the line with it (`{**line, ATTEMPT_COST: attempt_cost}`)."""
        handle = self._handles.get(task)
        if handle is None:
            self.lock.check_in_place()
            handle = self._handles[task] = open_append(self.sample_path(task))
        turns = self._turns.get(task) or self._turns.setdefault(task, TurnsWriter(turns_file(self.sample_path(task))))
        text = turns.shared_text(text)  # its conversation's turns written once (before the line that names them)
        if attempt_cost is not None:
            assert text.startswith("{") and text != "{}", "a sample line is a JSON object with fields"
            text = f"{text[:-1]}, {dumps({ATTEMPT_COST: attempt_cost})[1:]}"
        handle.write_text(text)

    def finalize_samples(self, task: str, saved: SavedLines, positions: dict[str, int] | None = None) -> Path:
        """Rewrite the task's samples in data order, the latest attempt of each record, its lines read by `saved`
        (ragbench._records' `saved_lines`: the samples' one reader, a layer above); with `positions` (each key's
        position in the task's data now), only the records of those keys, each at its position
        (a resumed run whose data lost or fixed a record drops its old sample; one whose records moved
        puts them where they are now). Streamed: only each record's key, position and line offset are
        held; the lines are copied as written, but for the `index` of a record that moved, the cost of
        the attempt that saved it (`attempt_cost`: brought into run.json first, `_catch_up_attempts`) and, on the
        line kept of an example run more than once, the calls of its runs dropped (`earlier_trace`: earlier_runs).
        Returns the file, which `finalized_samples` then reads in data order, one record at a time."""
        self.close()
        self.lock.check_in_place()  # a folder moved away leaves no samples here: not a run of none
        path = self.sample_path(task)
        errors: list[RecordError] = []
        self.unreadable[task] = errors  # lines a stopped run cut short (their examples ran again): reported
        if not file_there(path):
            return path
        offsets = line_offsets(path)
        latest: dict[str, tuple[int, int, bool]] = {}  # key -> (position, line, moved)
        runs: dict[str, list[tuple[int, bool]]] = {}  # key -> its lines and whether each re-scored, where several
        costs: dict[str, dict[str, float]] = {}  # attempt id -> its latest cost a sample holds
        for line, key, index, cost, rescored in saved(path, errors):
            latest_cost(costs, cost)
            if positions is not None and key not in positions:
                continue
            if key in latest:
                runs.setdefault(key, [(latest[key][1], False)]).append((line, rescored))
            position = index if positions is None else positions[key]
            latest[key] = (position, line, position != index)
        self._catch_up_attempts(costs)  # before the lines that hold them may be dropped
        kept = sorted(latest.values(), key=lambda entry: entry[:2])
        superseded = {runs[key][-1][0]: runs[key] for key in runs}  # a kept line -> the runs of its example
        with open_file(path) as source, replacing(path) as target:

            def text_of(line: int) -> bytes:
                source.seek(offsets[line])
                text: bytes = source.read(offsets[line + 1] - offsets[line])
                return text

            def parsed(line: int) -> JsonObject:  # a line `saved` read: a sample's object, in UTF-8
                record: JsonObject = parse_json(text_of(line).decode("utf-8"))
                return record

            for position, line, moved in kept:
                text = text_of(line)
                earlier = superseded.get(line)
                if moved or earlier:
                    record = {key: value for key, value in parsed(line).items() if key != ATTEMPT_COST}
                    if earlier:  # the calls of the runs it supersedes, paid: carried on (earlier_runs)
                        record = carrying(record, [(parsed(n), again) for n, again in earlier])
                    text = dumps({**record, "index": position}).encode("utf-8")
                target.write(_STAMP.sub(b"}", text.rstrip(b"\n")) + b"\n")  # a last line a kill left unended
        return path

    def attempts(self, but: str | None = None) -> list[AttemptCost]:
        """Every attempt's cost run.json records (first run and resumes), as this run last wrote it; `but`: all
        but the attempt of that id."""
        held = self._written_record or self.record
        return [a for a in (held.attempts if held is not None else []) if but is None or a.get("id") != but]

    def _catch_up_attempts(self, costs: dict[str, dict[str, float]]) -> None:
        """Each attempt's cost in run.json brought up to the latest its samples hold (`costs`, by attempt id):
        a kill -9 loses the last second of run.json's, never that of a sample it saved. Counts only grow
        while an attempt runs, so each is the larger of the two."""
        with self._recording:
            attempts = self.attempts()
            brought_up = [caught_up(attempt, costs.get(attempt.get("id", ""), {})) for attempt in attempts]
            if brought_up != attempts:
                self._write(replace(self._held(), attempts=brought_up))

    def record_attempt(self, attempt: AttemptCost) -> None:
        """Add an attempt's cost, or replace the entry of the same `id` (its cost so far)."""
        with self._recording:  # the attempt's cost is saved from a thread as it runs (`AttemptMeter.save_every`)
            held = self._held()
            self._write(replace(held, attempts=with_attempt(held.attempts, attempt)))

    def finish(
        self, results_json: str, report: str, records: dict[str, int], attempt: AttemptCost | None = None
    ) -> None:
        """results.json (its text) and report.md, then the run marked finished with each task's record
        count (`records`: what --resume checks the samples against) and, in the same write, `attempt`, the
        final cost of the attempt that finished it (`record_attempt`)."""
        write_all_atomically({self.path / "results.json": results_json, self.path / "report.md": report})
        with self._recording:
            held = self._held()
            attempts = held.attempts if attempt is None else with_attempt(held.attempts, attempt)
            self._write(replace(held, attempts=attempts, finished=True, records=records))

    def _write(self, record: RunRecord) -> None:
        """run.json, checked as `record` reads it: a value its reader would refuse (a negative count in an
        attempt's cost) is never written, so nothing a run records makes the run unreadable by itself; the file
        keeps what it held. Only into the folder the run holds (`RunLock.check_in_place`)."""
        problem = record.problem()
        if problem is not None:
            raise ValueError(f"{self.path / 'run.json'} not written: {problem}, which its reader refuses")
        self.lock.check_in_place()
        write_atomically(self.path / "run.json", strict_json(record.to_json(), indent=2) + "\n")
        self._written_record = record

    def close(self) -> None:
        """Close the sample files (the lock stays held)."""
        handles, self._handles = list(self._handles.values()), {}
        turns, self._turns = list(self._turns.values()), {}
        for handle in handles:
            handle.close()
        for writer in turns:
            writer.close()

    @contextmanager
    def held(self, lock_now: bool) -> Iterator[None]:
        """The folder is let go when the block ends, however it ends; `lock_now`: locked at once (a
        --resume reads the folder first), else when `start` creates it."""
        try:
            if lock_now:
                self.lock.acquire()
            yield
        except Exception as exc:
            if not isinstance(exc, RunFolderMoved):
                self.lock.check_in_place()  # what failed (a file not found, a write) failed for the folder moved
            raise
        finally:
            try:
                self.close()
            finally:
                self.lock.release()
