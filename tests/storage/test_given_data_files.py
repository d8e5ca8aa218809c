"""Every registered task's data reader opens the user's files the safe way (ragbench._storage.given_files): each
file of a task's test data (the data file, or every file of the data folder) replaced by a real FIFO, a character
device or a folder is either never read by the task's examples (they are the valid data's) or refused in one
ConfigError naming that file as what it is, never waited on, never read as an empty file, never a traceback. A FIFO
the code opens anyway is given a writer that closes at once (a regression reads it as empty and fails; it never
hangs). A line of bytes that are not UTF-8 is named by its file and line; /dev/zero in a task's folder is one line
of the command (run in a child whose memory is bounded: a regression fails there, it never fills the machine)."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragbench.api import ConfigError, RecordError
from ragbench.testing import installed_registry
from support import paths
from support.matrix_fixtures import TASK_DATA
from support.special_files import fifo_writer  # noqa: F401  (a fixture)

pytestmark = pytest.mark.timeout(120)

# one task of each family of tasks sharing a reader (the KILT, RGB, MIRAGE and FlashRAG sets read alike)
SHARED_READER = ("kilt_", "rgb_", "mirage_")
NAMES = sorted(TASK_DATA)  # the same order in every xdist worker, whatever order the table was built in
TASKS = [
    task
    for task in NAMES
    if not (
        task.startswith(SHARED_READER) and task.split("_")[0] in {t.split("_")[0] for t in NAMES[: NAMES.index(task)]}
    )
    and not (task.endswith("_flashrag") and task != "nq_open_flashrag")
]


def examples(task: str, data: Path, args: dict) -> list[str]:
    """The ids of the task's examples (a bad record by its message) read from `data`."""
    built = installed_registry().load("tasks", task)(data_path=str(data), **args)
    return [str(item) if isinstance(item, RecordError) else item.id for item in built.examples()]


def copied(task: str, folder: Path) -> tuple[Path, dict, list[Path]]:
    """The task's test data copied under `folder` (the fixtures may name files of the repository), its task
    arguments and its files."""
    (folder / "built").mkdir()
    built, args = TASK_DATA[task](folder / "built")
    data = folder / "data" / Path(built).name
    data.parent.mkdir()
    (shutil.copytree if Path(built).is_dir() else shutil.copy)(built, data)
    files = [data] if data.is_file() else sorted(path for path in data.rglob("*") if path.is_file())
    # DRAGUN's runs are the files its runs/ folders list: what is no file there is no run (said so as the topics'
    # bad records); the files it names, its topics, rubrics and assessments, are read as every other task's
    return data, args, [path for path in files if "runs" not in path.relative_to(data).parts[:1]]


@pytest.mark.parametrize("task", TASKS)
def test_a_fifo_device_or_folder_among_a_tasks_data_is_refused_naming_it_or_never_read(tmp_path, task, fifo_writer):
    """Each file as each kind in turn; the task's data is copied and its valid examples read once for the three
    kinds (a case a kind repeated that set-up: a tenth of tests/storage's CPU went to these cases)."""
    data, args, files = copied(task, tmp_path)
    valid = examples(task, data, args)
    for kind, file in ((kind, file) for kind in ("fifo", "device", "folder") for file in files):
        saved = file.read_bytes()
        file.unlink()
        if kind == "fifo":
            os.mkfifo(file)
            fifo_writer.append(file)
        elif kind == "device":
            file.symlink_to("/dev/null")  # a character device (ends at once: a regression never runs away)
        else:
            file.mkdir()
            (file / "x.jsonl").write_text("{}\n")
        try:
            assert examples(task, data, args) == valid, f"{file} was read as {kind}"
        except ConfigError as exc:
            assert str(file) in str(exc), f"{kind}: {exc}"
            assert "\n" not in str(exc).strip(), f"{kind}: {exc}"
            # refused as what it is, never opened and complained of as empty (the writer above hides that hang)
            assert kind == "folder" or "is there, not a file" in str(exc), f"{kind}: {exc}"
        finally:
            if kind == "fifo":
                fifo_writer.remove(file)
            shutil.rmtree(file) if kind == "folder" else file.unlink()
            file.write_bytes(saved)


TEXT = (".jsonl", ".json", ".csv", ".tsv", ".txt")


def not_utf8(data: bytes) -> tuple[bytes, int]:
    """`data` with one letter of its middle line (of those holding one) made a byte that is no UTF-8 (0xe9: é in
    Latin-1), and that line's number."""
    lines = data.split(b"\n")
    lettered = [n for n, line in enumerate(lines) if any(chr(c).isalpha() for c in line if c < 128)]
    number = lettered[len(lettered) // 2]
    line = lines[number]
    at = next(i for i, c in enumerate(line) if c < 128 and chr(c).isalpha())
    lines[number] = line[:at] + b"\xe9" + line[at + 1 :]
    return b"\n".join(lines), number + 1


@pytest.mark.parametrize("task", TASKS)
def test_bytes_that_are_not_utf8_in_a_tasks_data_are_named_by_file_and_line(tmp_path, task):
    data, args, files = copied(task, tmp_path)
    valid = examples(task, data, args)
    for file in (path for path in files if path.suffix in TEXT):
        saved = file.read_bytes()
        damaged, line = not_utf8(saved)
        file.write_bytes(damaged)
        try:
            read = examples(task, data, args)
        except ConfigError as exc:
            said = [str(exc)]
        else:
            said = [item for item in read if item not in valid]
            assert read == valid or said, f"{file}: a line that is not UTF-8 changed the examples unsaid"
        finally:
            file.write_bytes(saved)
        # the cause said where it is (what follows from it, a task left without its criteria, may be said too)
        named = (f"{file}:{line}: ", f"{file}: line {line} ")
        assert not said or any("not UTF-8" in m and any(n in m for n in named) for m in said), said  # or unread


def no_more_than_4_gib() -> None:
    """The child's memory bounded: a regression reading /dev/zero fails in it, never fills the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize(
    ("task", "zero"),
    [("beir", "qrels/test.tsv"), ("crag_t3", "crag_task_3_dev_v5.tar.bz2.part1")],
    ids=["a BEIR folder's qrels", "a part of CRAG's Task 3 archive"],
)
def test_dev_zero_where_a_task_reads_a_file_of_its_folder_is_one_line_of_the_command(tmp_path, task, zero):
    data, args, _ = copied(task, tmp_path)
    folder = data if data.is_dir() else data.parent
    (folder / zero).unlink(missing_ok=True)
    (folder / zero).symlink_to("/dev/zero")  # never ends
    options = [arg for name, value in args.items() for arg in ("--task-arg", f"{task}.{name}={value}")]
    command = ["--tasks", task, "--data", f"{task}={data}", "--system", "closed_book", "--model", "scripted:echo"]
    done = subprocess.run(
        [sys.executable, "-m", "ragbench", *command, *options, "--output", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=100,
        preexec_fn=no_more_than_4_gib,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(paths.TESTS), os.environ.get("PYTHONPATH", "")]),
        },
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    [line] = [line for line in done.stderr.splitlines() if str(folder / zero) in line]
    assert line.startswith("ragbench: error: ") and "a character device is there, not a file" in line, line


def test_a_fifo_as_the_replay_retrievers_file_is_refused_as_what_it_is(tmp_path):
    os.mkfifo(tmp_path / "retrieval.jsonl")  # refused before any open: a regression calls it missing, never waits
    with pytest.raises(ConfigError, match="retrieval.jsonl: a FIFO \\(named pipe\\) is there, not a file"):
        installed_registry().load("retrievers", "replay")(file=str(tmp_path / "retrieval.jsonl"))
