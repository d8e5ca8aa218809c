"""The user's files are never deleted, truncated or altered: every path through which ragbench deletes or
rewrites (the run lock, --overwrite, the response cache, the page cache, the temporaries a killed run left)
met with a real symbolic link to a user's file or folder, a user's SQLite file with a table of the same
name, a FIFO, a folder where a file is expected, a folder of the user's own samples/ and calls/. Each ends
in one line naming the file, and the user's files keep their bytes and times."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_jsonl
from ragbench.api.run import PageCache
from ragbench.testing import PreflightError, installed_registry, run_eval
from support.helpers import cli_here, popqa_args

QUESTION = {"id": "q", "question": "Q?", "answers": ["Q?"], "ctxs": []}


def run_args(data: Path, out: Path, *extra: str) -> list[str]:
    return popqa_args(data, out, "--no-progress", "--bootstrap-iters", "20", *extra)


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry below `folder` (not following links): a file's bytes and mtime, a link's target."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        key = str(path.relative_to(folder))
        if path.is_symlink():
            entries[key] = ("link", os.readlink(path))
        elif path.is_file():
            entries[key] = ("file", path.read_bytes(), info.st_mtime_ns)
        elif path.is_dir():
            entries[key] = ("folder",)
        else:
            entries[key] = ("other", info.st_mode, info.st_mtime_ns)
    return entries


def refused_in_one_line(args: list[str], *needles: str) -> str:
    """`ragbench check` and the run itself end with exit 2 and the same one line holding each needle."""
    lines = []
    for command in (["check"], []):
        result = cli_here(*command, *args)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        [line] = [line for line in result.stderr.splitlines() if line.startswith("ragbench: error: ")]
        assert all(needle in line for needle in needles), line
        lines.append(line)
    assert lines[0] == lines[1]
    return lines[0]


def user_sqlite(path: Path, table: str = "responses") -> Path:
    """Another application's SQLite file, with a table named as ragbench's and 500 rows in it."""
    db = sqlite3.connect(path)
    db.execute(f"CREATE TABLE {table} (key TEXT PRIMARY KEY, engine TEXT, request TEXT, response TEXT, created REAL)")
    db.executemany(f"INSERT INTO {table} VALUES (?, 'e', NULL, 'theirs', 0)", [(str(i),) for i in range(500)])
    db.execute("CREATE TABLE users (name TEXT)")
    db.commit()
    db.close()
    return path


def user_path(home: Path, kind: str) -> Path:
    """A path of the user's holding `kind`: a SQLite file, a text file, an empty file, a symlink to a
    text file, a FIFO, a folder."""
    path = home / f"mine.{kind}"
    if kind == "sqlite":
        user_sqlite(path)
    elif kind in ("text", "symlink"):
        (home / "notes.txt").write_text("the user's notes\n")
        path.symlink_to(home / "notes.txt") if kind == "symlink" else path.write_text("the user's notes\n")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        (path / "inside").mkdir(parents=True)
    return path


CACHE_FAULTS = ["sqlite", "text", "empty", "symlink", "fifo", "folder"]


# --- the response cache and the page cache ------------------------------------------------------------


@pytest.mark.parametrize("kind", CACHE_FAULTS)
def test_a_cache_path_naming_a_users_file_is_refused_and_left_as_it_is(tmp_path, kind):
    home = tmp_path / "home"
    home.mkdir()
    cache = user_path(home, kind)
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    before = snapshot(home)
    line = refused_in_one_line(run_args(data, tmp_path / "run", "--cache", str(cache)), str(cache))
    assert snapshot(home) == before
    if kind != "folder":  # a folder is said by the --cache check of the options
        assert "ragbench never writes into a file it did not make: give a new path" in line
    assert not (tmp_path / "run").exists()


def test_a_users_sqlite_file_says_whose_it_is_and_keeps_its_rows_and_journal_mode(tmp_path):
    cache = user_sqlite(tmp_path / "app.db")
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    line = refused_in_one_line(run_args(data, tmp_path / "run", "--cache", str(cache)))
    assert line == (
        f"ragbench: error: response cache {cache}: a SQLite file ragbench did not make (its tables: "
        "responses, users); ragbench never writes into a file it did not make: give a new path (--cache "
        "PATH names a file that can be written)"
    )
    db = sqlite3.connect(f"{cache.as_uri()}?mode=ro", uri=True)
    assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 500
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    db.close()


def store_stands_aside(tmp_path: Path, kind: str, store: type, what: str) -> None:
    """`store` (a cache's class) opened on a user's file of `kind`, written to and closed: it said it was not used
    (its stats' notice, which the run shows) and left the user's file as it was."""
    home = tmp_path / "home"
    home.mkdir()
    path = user_path(home, kind)
    before = snapshot(home)
    opened = store(path)
    opened.put_many([("k", "value")] if store is PageCache else [])
    stats = opened.stats()
    opened.close()
    assert stats["notice"].startswith(f"{what} cache {path}: ")
    assert "the run goes on without it and leaves the file as it is" in stats["notice"]
    assert snapshot(home) == before


@pytest.mark.parametrize("kind", CACHE_FAULTS)
def test_a_page_cache_opened_on_a_users_file_is_not_used_and_leaves_it_as_it_is(tmp_path, kind):
    """Where no pre-flight ran (a page cache a task opens mid-run): the store stands aside. The response cache's
    store: tests/storage/test_cache_faults.py."""
    store_stands_aside(tmp_path, kind, PageCache, "page")


def test_a_page_cache_option_naming_a_users_sqlite_file_is_refused_before_the_run(tmp_path):
    from ragbench.tasks.crag.synthetic import PageSizes, write_task3_archive
    from support.crag_helpers import tokenizer_dir

    archive = write_task3_archive(tmp_path / "crag", questions=1, pages=1, sizes=PageSizes.small(1_000))
    pages = user_sqlite(tmp_path / "pages.db", table="entries")
    before = snapshot(tmp_path)
    with pytest.raises(PreflightError) as refused:
        run_eval(
            "crag_t3",
            "vanilla",
            "scripted:echo",
            data=archive,
            output=tmp_path / "run",
            bootstrap_iters=200,
            page_cache=str(pages),
            task_args={"tokenizer": tokenizer_dir(), "kg": False, "judge_protocol": "none"},
        )
    assert refused.value.problems == [
        f"page cache {pages}: a SQLite file ragbench did not make (its tables: entries, users); ragbench never writes "
        "into a file it did not make: give a new path (--page-cache PATH names a file that can be written, "
        "--page-cache off turns it off)"
    ]
    assert snapshot(tmp_path) == before


def test_a_ragbench_cache_whose_response_column_was_renamed_is_moved_aside_and_counted(tmp_path):
    path = tmp_path / "c.sqlite"
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    assert cli_here(*run_args(data, tmp_path / "first", "--cache", str(path))).returncode == 0  # a cache ragbench made
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE responses RENAME COLUMN response TO reply")
    db.commit()
    db.close()
    renamed = path.read_bytes()
    ran = cli_here(*run_args(data, tmp_path / "run", "--cache", str(path)))
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    [warning] = [line for line in ran.stderr.splitlines() if line.startswith("ragbench: warning:")]
    assert warning.startswith(
        f"ragbench: warning: response cache {path}: damaged (its responses table is not the "
        "one this ragbench makes (an older ragbench's file, or a changed one)); moved to "
    )
    [aside] = tmp_path.glob("c.sqlite.damaged-*")
    assert aside.read_bytes() == renamed
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 1  # the fresh cache serves: it kept the answer
    db.close()


# --- the run lock ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo", "folder"])
def test_a_run_lock_that_is_not_a_lock_file_is_refused_in_one_line_and_never_written(tmp_path, kind):
    home, out = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    out.mkdir()
    (home / "notes.txt").write_text("the user's notes\n")
    lock = out / "run.lock"
    if kind == "symlink":
        lock.symlink_to(home / "notes.txt")
    elif kind == "hardlink":
        os.link(home / "notes.txt", lock)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    before = snapshot(home)
    what = {
        "symlink": "is a symbolic link",
        "hardlink": "is a hard link",
        "fifo": "is a FIFO",
        "folder": "is a folder",
    }[kind]
    line = refused_in_one_line(run_args(data, out), f"{lock} {what}", "remove it")
    assert line.startswith(f"ragbench: error: --output {out}: {lock} {what}")
    assert snapshot(home) == before
    assert sorted(p.name for p in out.iterdir()) == ["run.lock"]


def test_a_users_own_file_named_run_lock_is_never_emptied(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "run.lock").write_text("my notes on locks\n")
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    before = snapshot(out)
    refused_in_one_line(run_args(data, out), f"{out / 'run.lock'} holds no ragbench run's record", "remove it")
    assert snapshot(out) == before


# --- --overwrite and the run folder ---------------------------------------------------------------


def users_samples_and_calls(folder: Path) -> None:
    (folder / "samples").mkdir(parents=True)
    (folder / "calls").mkdir()
    (folder / "samples" / "popqa.jsonl").write_text('{"mine": 1}\n')
    (folder / "calls" / "llm.jsonl").write_text('{"mine": 2}\n')
    (folder / "results.json").write_text('{"mine": 3}\n')


@pytest.mark.parametrize("extra", [["--overwrite"], []])
def test_a_folder_of_the_users_own_samples_and_calls_is_not_a_run_and_is_never_replaced(tmp_path, extra):
    out = tmp_path / "mine"
    users_samples_and_calls(out)
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    before = snapshot(out)
    line = refused_in_one_line(
        run_args(data, out, *extra),
        f"--output {out}: holds samples, calls, results.json but no run of ragbench (no run.json it wrote)",
        "choose another --output",
    )
    assert "--overwrite" not in line
    assert snapshot(out) == before


def test_a_run_json_ragbench_did_not_write_is_not_a_run_to_overwrite(tmp_path):
    out = tmp_path / "mine"
    users_samples_and_calls(out)
    (out / "run.json").write_text('{"name": "my experiment"}\n')
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    before = snapshot(out)
    refused_in_one_line(run_args(data, out, "--overwrite"), f"{out / 'run.json'} is not a run.json ragbench wrote")
    assert snapshot(out) == before


def test_overwrite_removes_the_links_in_a_run_folder_never_what_they_point_to(tmp_path):
    home, out = tmp_path / "home", tmp_path / "run"
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    assert cli_here(*run_args(data, out)).returncode == 0
    users_samples_and_calls(home)
    (home / "notes.txt").write_text("the user's notes\n")
    for name in ("samples", "calls"):  # the run's folders, now links to the user's
        os.rename(out / name, tmp_path / f"old-{name}")
        (out / name).symlink_to(home / name)
    (out / "results.json").unlink()
    (out / "results.json").symlink_to(home / "results.json")
    (out / "report.md").unlink()
    (out / "report.md").symlink_to(home / "notes.txt")
    before = snapshot(home)
    resumed = cli_here(*run_args(data, out, "--resume"))  # a resume would write through them: refused
    assert resumed.returncode == 2 and "is a symbolic link" in resumed.stderr and "remove the link" in resumed.stderr
    assert len(resumed.stderr.splitlines()) == 1
    overwritten = cli_here(*run_args(data, out, "--overwrite"))
    assert overwritten.returncode == 0, overwritten.stderr
    assert snapshot(home) == before
    assert not any(p.is_symlink() for p in out.rglob("*"))
    assert (out / "samples" / "popqa.jsonl").is_file() and (out / "results.json").is_file()


def test_a_link_inside_a_runs_samples_is_removed_by_overwrite_and_its_target_kept(tmp_path):
    home, out = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    (home / "mine.jsonl").write_text('{"mine": 1}\n')
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    assert cli_here(*run_args(data, out)).returncode == 0
    (out / "samples" / "other.jsonl").symlink_to(home / "mine.jsonl")
    before = snapshot(home)
    assert cli_here(*run_args(data, out, "--overwrite")).returncode == 0
    assert snapshot(home) == before and not (out / "samples" / "other.jsonl").exists()


def test_a_killed_runs_temporary_files_are_removed_only_in_the_run_folder(tmp_path):
    """A file named like a temporary one, in a folder of the user's below --output or linked from the run
    folder, is the user's."""
    home, out = tmp_path / "home", tmp_path / "run"
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    assert cli_here(*run_args(data, out)).returncode == 0
    home.mkdir()
    (home / ".draft.0123abcd.tmp").write_text("mine")
    (out / "mine").mkdir()
    (out / "mine" / ".notes.0123abcd.tmp").write_text("mine too")
    (out / "linked").symlink_to(home)
    (out / ".run.json.0123abcd.tmp").write_text("what a killed run left")
    before, inside = snapshot(home), snapshot(out / "mine")
    assert cli_here(*run_args(data, out, "--overwrite")).returncode == 0
    assert snapshot(home) == before and snapshot(out / "mine") == inside
    assert not (out / ".run.json.0123abcd.tmp").exists()


# --- the viewer's export ----------------------------------------------------------------------------


def test_an_export_into_a_users_folder_with_a_data_folder_is_refused_and_leaves_it(tmp_path):
    data, out, site = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION]), tmp_path / "run", tmp_path / "site"
    assert cli_here(*run_args(data, out)).returncode == 0
    (site / "data").mkdir(parents=True)
    (site / "data" / "measurements.csv").write_text("1,2,3\n")
    (site / "index.html").write_text("<html>my page</html>\n")
    before = snapshot(site)
    refused = cli_here("view", str(out), "--export", str(site))
    assert refused.returncode == 2 and refused.stderr.splitlines() == [
        f"ragbench: error: view --export: {site} is a non-empty folder that is not an earlier export (no index.html "
        "the viewer wrote, or a symbolic link where an export writes); choose a new folder"
    ]
    assert snapshot(site) == before


def test_an_earlier_export_is_replaced_but_a_link_in_it_to_a_users_folder_is_refused(tmp_path):
    data, out, site, home = (
        write_jsonl(tmp_path / "popqa.jsonl", [QUESTION]),
        tmp_path / "run",
        tmp_path / "site",
        tmp_path / "home",
    )
    assert cli_here(*run_args(data, out)).returncode == 0
    assert cli_here("view", str(out), "--export", str(site)).returncode == 0
    assert cli_here("view", str(out), "--export", str(site)).returncode == 0  # an earlier export: replaced
    home.mkdir()
    (home / "mine.js").write_text("mine\n")
    os.rename(site / "data", tmp_path / "old-data")
    (site / "data").symlink_to(home)
    before = snapshot(home)
    refused = cli_here("view", str(out), "--export", str(site))
    assert refused.returncode == 2 and "is a non-empty folder that is not an earlier export" in refused.stderr
    assert snapshot(home) == before


# --- index build ----------------------------------------------------------------------------------


def build_bm25(tmp_path: Path, out: Path, overwrite: bool = False) -> None:
    from ragbench.testing import build_index
    from support.retrieval_samples import passages, write_dpr_tsv

    pytest.importorskip("bm25s")
    corpus = write_dpr_tsv(tmp_path / "corpus.tsv", passages(20, 0))
    build_index(corpus, out, "bm25", chunk_size=8, progress=False, overwrite=overwrite, registry=installed_registry())


def test_index_build_overwrite_replaces_only_an_index_it_built(tmp_path):
    from ragbench.api import ConfigError

    mine = tmp_path / "mine"
    users_samples_and_calls(mine)
    (mine / "manifest.json").write_text('{"name": "my web app"}\n')
    before = snapshot(mine)
    with pytest.raises(ConfigError, match=f"--out {mine} holds files but no index ragbench built "):
        build_bm25(tmp_path, mine, overwrite=True)
    assert snapshot(mine) == before and not (tmp_path / "mine.partial").exists()
    build_bm25(tmp_path, tmp_path / "index")
    build_bm25(tmp_path, tmp_path / "index", overwrite=True)  # an index it built: replaced
    assert not (tmp_path / "index" / ".ragbench-build").exists()


@pytest.mark.parametrize("kind", ["folder", "symlink"])
def test_a_partial_folder_of_the_users_is_never_emptied_by_a_build(tmp_path, kind):
    from ragbench.api import ConfigError

    home, staging = tmp_path / "home", tmp_path / "index.partial"
    users_samples_and_calls(home)
    if kind == "symlink":
        staging.symlink_to(home)
    else:
        users_samples_and_calls(staging)
    before, inside = snapshot(home), snapshot(staging) if kind == "folder" else None
    with pytest.raises(
        ConfigError, match=f"--out {tmp_path / 'index'}: {staging} is not a folder a ragbench index build made"
    ):
        build_bm25(tmp_path, tmp_path / "index")
    assert snapshot(home) == before
    assert kind == "symlink" or snapshot(staging) == inside


def test_a_killed_builds_partial_folder_is_taken_over(tmp_path):
    staging = tmp_path / "index.partial"
    staging.mkdir()
    (staging / ".ragbench-build").touch()
    (staging / "docs.jsonl").write_text("what a killed build left")
    build_bm25(tmp_path, tmp_path / "index")
    assert (tmp_path / "index" / "manifest.json").is_file() and not staging.exists()


# --- every path at once: a property ----------------------------------------------------------------

NAMES = [
    "samples",
    "calls",
    "results.json",
    "report.md",
    "run.json",
    "run.lock",
    "cache.sqlite",
    "cache.sqlite-wal",
    "nli_calls.jsonl",
    "judge_calls.jsonl",
    ".run.json.0123abcd.tmp",
    "popqa.jsonl",
    "notes.txt",
    "run",
]
ENTRY = st.tuples(
    st.lists(st.sampled_from(["run", *NAMES]), min_size=1, max_size=3),  # often in the run folder
    st.sampled_from(["file", "folder", "link", "sqlite", "fifo"]),
    st.binary(max_size=48),
    st.integers(0, 30),
)


@pytest.fixture(scope="module")
def template_run(tmp_path_factory) -> tuple[Path, Path]:
    """A finished run of one example (copied into each example's folder) and its data."""
    folder = tmp_path_factory.mktemp("template")
    data = write_jsonl(folder / "popqa.jsonl", [QUESTION])
    run_eval("popqa", "vanilla", "scripted:echo", data=data, output=folder / "run", bootstrap_iters=200)
    return folder / "run", data


def make_entries(home: Path, outside: Path, entries: list) -> None:
    """The user's files below `home` as `entries` say (what is already there is left), and links among them
    (or to `outside`); inside home/run (a run ragbench made) too."""
    made: list[Path] = [outside]
    for parts, kind, data, target in entries:
        path = home.joinpath(*parts)
        if os.path.lexists(path) or any(
            p.exists() and not p.is_dir() or p.is_symlink() for p in path.parents if home in p.parents
        ):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "file":
            path.write_bytes(data)
        elif kind == "folder":
            path.mkdir()
        elif kind == "link":
            path.symlink_to(made[target % len(made)])
        elif kind == "sqlite":  # made elsewhere and moved in (SQLite cannot make one beside a folder `NAME-wal`)
            os.replace(user_sqlite(outside.with_name("made.sqlite")), path)
        else:
            os.mkfifo(path)
        made.append(path)


def users(home: Path, outside: Path) -> dict[str, tuple]:
    """Everything of the user's: below `home` but outside the run folder ragbench made (home/run), and `outside`."""
    return {key: value for key, value in snapshot(home).items() if key != "run" and not key.startswith("run/")} | {
        "outside": (outside.read_bytes(), outside.stat().st_mtime_ns)
    }


@given(
    entries=st.lists(ENTRY, max_size=12),
    output=st.sampled_from(["run", "run", "new", *NAMES]),
    cache=st.sampled_from([None, "new.sqlite", *NAMES]),
    mode=st.sampled_from(["", "overwrite", "resume"]),
)
@settings(max_examples=30)
def test_no_run_changes_a_users_file_outside_the_run_folder_ragbench_made(
    template_run, tmp_path_factory, entries, output, cache, mode, shared_registry
):
    import shutil

    from ragbench.api import ConfigError

    template, data = template_run
    top = tmp_path_factory.mktemp("user")
    home, outside = top / "home", top / "outside.txt"
    outside.write_text("the user's file outside\n")
    shutil.copytree(template, home / "run", symlinks=True)
    make_entries(home, outside, entries)
    before = users(home, outside)
    try:
        run_eval(
            "popqa",
            "vanilla",
            "scripted:echo",
            data=data,
            output=home / output,
            cache=str(home / cache) if cache else None,
            page_cache=None,
            bootstrap_iters=20,
            overwrite=mode == "overwrite",
            resume=mode == "resume",
            registry=shared_registry,
        )
    except ConfigError as refused:
        assert str(refused).strip(), "a refusal says why"
    after = users(home, outside)
    assert {key: after.get(key) for key in before} == before  # a new run folder or cache may be added
