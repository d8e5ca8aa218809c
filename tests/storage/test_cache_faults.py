"""Caches that cannot lie and cannot stop a run: a stored answer whose bytes changed, a row that is not
JSON or not a response, a cache file that is not a database, cut short, unwritable or of an older
ragbench; the page cache the same; engines that answer from a file are keyed by its content. The response cache's
store opened on a user's file where no pre-flight ran stands aside (what a run does with a --cache naming one:
tests/storage/test_user_files.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from test_user_files import CACHE_FAULTS, store_stands_aside

from conftest import write_jsonl
from ragbench._engines.replay import ReplayEngine
from ragbench._engines.scripted import ScriptedEngine
from ragbench._scheduler import Scheduler
from ragbench._storage.cache import ResponseCache
from ragbench.api.engines import Request, Response, Sampling
from ragbench.api.run import PageCache, content_key
from ragbench.tasks.crag.synthetic import PageSizes, write_task3_archive
from support.crag_helpers import tokenizer_dir
from support.helpers import cli_here, comparable, popqa_args, run, samples, tmpfs


def berlin_run(tmp_path, name: str, n: int = 12, **options) -> dict:
    """popqa with gold 'Berlin', answered 'Berlin' by a scripted rules file: every example scores 1."""
    data = write_jsonl(
        tmp_path / "popqa.jsonl",
        [
            {
                "id": f"q{i}",
                "question": f"What is the capital number {i}?",
                "answers": ["Berlin"],
                "ctxs": [{"id": "d", "title": "T", "text": "x"}],
            }
            for i in range(n)
        ],
    )
    rules = tmp_path / "berlin.json"
    rules.write_text(json.dumps([{"response": "Berlin"}]))
    return run(
        tmp_path,
        name,
        tasks=["popqa"],
        system="vanilla",
        model=f"scripted:{rules}",
        data={"popqa": str(data)},
        **options,
    )


def change_bytes(path, old: bytes, new: bytes, count: int) -> None:
    """Change `count` occurrences of `old` inside the file's rows (a closed SQLite file holds them all)."""
    data = path.read_bytes()
    assert data.count(old) >= count and not path.with_name(path.name + "-wal").exists()
    path.write_bytes(data.replace(old, new, count))


# --- rows -----------------------------------------------------------------------------------------


def test_changed_bytes_inside_stored_answers_are_counted_misses_never_answers(tmp_path):
    cache = tmp_path / "shared.sqlite"
    first = berlin_run(tmp_path, "first", cache=str(cache))
    assert first["results"]["popqa"]["match"] == 1.0
    change_bytes(cache, b"Berlin", b"63rlin", 5)
    second = berlin_run(tmp_path, "second", cache=str(cache))
    assert comparable(second) == comparable(first)  # no example scored on a changed answer
    assert second["cost"]["cache_hits"] == 12 - 5 and second["cost"]["llm_calls"] == 5
    assert second["cost"]["response_cache"]["damaged_entries"] == 5
    assert f"response cache {cache}: 5 damaged entries were misses" in (tmp_path / "second" / "report.md").read_text()
    third = berlin_run(tmp_path, "third", cache=str(cache))  # the answers made again replaced the damaged rows
    assert third["cost"]["cache_hits"] == 12 and third["cost"]["response_cache"]["damaged_entries"] == 0


def test_rows_that_are_not_json_are_counted_misses_not_failed_examples(tmp_path):
    cache = tmp_path / "shared.sqlite"
    first = berlin_run(tmp_path, "first", cache=str(cache))
    with sqlite3.connect(cache) as db:
        db.execute(
            'UPDATE responses SET response = \'{"texts": ["Ber\' WHERE rowid IN (SELECT rowid FROM responses LIMIT 4)'
        )
    db.close()
    second = berlin_run(tmp_path, "second", cache=str(cache))
    assert comparable(second) == comparable(first) and second["complete"]
    assert second["cost"]["response_cache"]["damaged_entries"] == 4 and second["cost"]["llm_calls"] == 4


def test_a_row_of_another_shape_with_a_valid_checksum_is_a_miss(tmp_path):
    from ragbench._storage.store_checks import row_checksum

    cache = ResponseCache(tmp_path / "c.sqlite")
    key = Request(prompt="p").cache_key("e")
    cache.put_many([(key, "e", Response(texts=["kept"]))])
    cache.close()
    for value in ('["a list"]', '{"texts": "not a list"}', '{"texts": [1]}'):
        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            db.execute("UPDATE responses SET response = ?, checksum = ?", (value, row_checksum(key, value)))
        db.close()
        reopened = ResponseCache(tmp_path / "c.sqlite")
        assert reopened.get(key) is None and reopened.stats()["damaged_entries"] == 1, value
        reopened.close()


# --- files ----------------------------------------------------------------------------------------


def damage(path, how: str) -> None:
    if how == "not_a_database":
        path.write_bytes(b"this is not a SQLite file\n" * 400)
    else:  # cut short, as a disk that filled up or a copy that stopped
        size = path.stat().st_size
        assert size > 4096, "needs more than one page to cut"
        with path.open("r+b") as handle:
            handle.truncate(size // 2)


def kill_after(run_dir, kept: int) -> None:
    """The run folder as a kill leaves it: `kept` samples saved, the run not finished."""
    sample_file = run_dir / "samples" / "popqa.jsonl"
    sample_file.write_text("".join(sample_file.read_text().splitlines(keepends=True)[:kept]))
    meta = json.loads((run_dir / "run.json").read_text())
    meta["finished"] = False
    (run_dir / "run.json").write_text(json.dumps(meta))
    (run_dir / "results.json").unlink()


@pytest.mark.parametrize("how", ["not_a_database", "truncated"])
def test_a_killed_run_whose_cache_was_damaged_resumes_beside_a_fresh_one_with_one_warning(tmp_path, how):
    berlin_run(tmp_path, "run", n=40)
    run_dir = tmp_path / "run"
    kill_after(run_dir, 15)
    damage(run_dir / "cache.sqlite", how)
    resumed = cli_here(
        *popqa_args(
            tmp_path / "popqa.jsonl",
            run_dir,
            "--no-progress",
            "--resume",
            "--bootstrap-iters",
            "200",
            model=f"scripted:{tmp_path / 'berlin.json'}",
        )
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr
    [warning] = [line for line in resumed.stderr.splitlines() if line.startswith("ragbench: warning:")]
    assert f"response cache {run_dir / 'cache.sqlite'}: damaged" in warning and "a fresh response cache" in warning
    [aside] = [p for p in run_dir.glob("cache.sqlite.damaged-*") if not p.name.endswith(("-wal", "-shm"))]
    assert aside.name in warning
    results = json.loads((run_dir / "results.json").read_text())
    assert results["complete"] and results["results"]["popqa"]["match"] == 1.0
    assert sorted(s["id"] for s in samples(run_dir, "popqa")) == sorted(f"q{i}" for i in range(40))
    notice = warning.removeprefix("ragbench: warning: ")
    assert results["cost"]["response_cache"]["notice"] == notice
    assert (resumed.stdout + resumed.stderr).count(notice) == 1  # warned once, not again in the cost line
    assert (run_dir / "report.md").read_text(encoding="utf-8").count(notice) == 1


def test_the_console_summary_leaves_out_the_notices_its_caches_warned_of_and_keeps_their_counts():
    from ragbench._reports.run_summary import cost_line

    stored = {"path": "c.sqlite", "damaged_entries": 2, "notice": "response cache c.sqlite: damaged; moved aside"}
    pages = {
        "path": "p.sqlite",
        "hits": 1,
        "lookups": 2,
        "hit_rate": 0.5,
        "bytes": 0,
        "notice": "page cache p.sqlite: damaged; moved aside",
    }
    cost = {
        "examples": 1,
        "wall_seconds": 1.0,
        "examples_per_second": 1.0,
        "llm_calls": 1,
        "batches": 1,
        "cache_hits": 0,
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "response_cache": stored,
        "page_cache": pages,
    }
    console, report = cost_line(cost, notices=False), cost_line(cost)
    assert "moved aside" not in console and "response cache c.sqlite: 2 damaged entries were misses" in console
    assert "page cache p.sqlite: 1/2 hits" in console
    assert report.count(stored["notice"]) == 1 and report.count(pages["notice"]) == 1


def older_cache(path) -> str:
    """A cache of a ragbench before checksums (and before the mark): one entry. Returns its key."""
    key = Request(prompt="p").cache_key("e")
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, engine TEXT, request TEXT, response TEXT, created REAL)"
        )
        db.execute("INSERT INTO responses VALUES (?, 'e', NULL, ?, 0)", (key, json.dumps({"texts": ["stale"]})))
    db.close()
    return key


def test_a_cache_of_an_older_ragbench_in_a_run_folder_is_moved_aside_and_made_fresh(tmp_path):
    path = tmp_path / "cache.sqlite"
    key = older_cache(path)
    old = path.read_bytes()
    cache = ResponseCache(path, owned=True)  # the run folder's own cache.sqlite
    assert cache.get(key) is None and len(cache) == 0
    notice = cache.stats()["notice"]
    assert notice.startswith(
        f"response cache {path}: damaged (its responses table is not the one this ragbench "
        "makes (an older ragbench's file, or a changed one)); moved to cache.sqlite.damaged-"
    )
    cache.put_many([(key, "e", Response(texts=["new"]))])
    assert cache.get(key).text == "new"
    cache.close()
    [aside] = tmp_path.glob("cache.sqlite.damaged-*")
    assert aside.read_bytes() == old  # kept, not dropped


def test_a_cache_file_ragbench_did_not_make_is_left_as_it_is(tmp_path):
    path = tmp_path / "old.sqlite"
    key = older_cache(path)
    old, mtime = path.read_bytes(), path.stat().st_mtime_ns
    cache = ResponseCache(path)  # a --cache: not known to be ragbench's
    assert cache.get(key) is None and len(cache) == 0
    assert cache.stats()["notice"] == (
        f"response cache {path}: a SQLite file ragbench did not make (its tables: "
        "responses); the run goes on without it and leaves the file as it is (--cache "
        "PATH names a file that can be written)"
    )
    cache.put_many([(key, "e", Response(texts=["new"]))])
    cache.close()
    assert (path.read_bytes(), path.stat().st_mtime_ns) == (old, mtime)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.sqlite"]


def test_a_cache_of_the_ragbench_before_the_mark_is_kept_and_marked(tmp_path):
    from ragbench._storage.store_checks import APPLICATION_ID

    path = tmp_path / "c.sqlite"
    key = Request(prompt="p").cache_key("e")
    with sqlite3.connect(path) as db:  # what the ragbench before the mark made: its one table, with checksums
        db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, engine TEXT, request TEXT, "
            "response TEXT, created REAL, checksum TEXT)"
        )
    db.close()
    cache = ResponseCache(path)
    cache.put_many([(key, "e", Response(texts=["kept"]))])
    cache.close()
    again = ResponseCache(path)
    assert again.get(key).text == "kept" and again.stats()["notice"] is None
    again.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()


@pytest.fixture(params=["read_only_mount", "below_a_file"])
def cache_that_cannot_be_written(tmp_path, request):
    """A cache file on a read-only tmpfs (where mounting is not allowed: skipped, the other case stays),
    or below a regular file (no folder can be made there)."""
    if request.param == "below_a_file":
        (tmp_path / "a_file").write_text("")
        yield tmp_path / "a_file" / "cache.sqlite"
        return
    with tmpfs(tmp_path / "ro", read_only=True) as mounted:
        if mounted is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        yield mounted / "cache.sqlite"


def test_an_unwritable_cache_is_left_out_with_one_warning_and_check_says_so(tmp_path, cache_that_cannot_be_written):
    data = write_jsonl(tmp_path / "popqa.jsonl", [{"id": "q", "question": "Q?", "answers": ["Q?"], "ctxs": []}])
    args = popqa_args(data, tmp_path / "run", "--cache", str(cache_that_cannot_be_written), "--no-progress")
    checked = cli_here("check", *args)
    assert checked.returncode == 0, checked.stderr
    [warned] = [line for line in checked.stdout.splitlines() if line.startswith("warning  ")]
    assert warned.startswith(f"warning  response cache {cache_that_cannot_be_written}: ")
    assert warned.endswith("a run goes on without it (--cache PATH names a file that can be written)")
    assert "ready to run" not in checked.stdout and "can run, with 1 warning(s) above" in checked.stdout
    ran = cli_here(*args)
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    [warning] = [line for line in ran.stderr.splitlines() if line.startswith("ragbench: warning:")]
    assert warning.startswith(f"ragbench: warning: response cache {cache_that_cannot_be_written}: ")
    assert "the run goes on without it" in warning


def test_check_warns_of_a_damaged_cache_without_touching_it(tmp_path):
    cache = tmp_path / "c.sqlite"
    ResponseCache(cache).close()
    damage(cache, "truncated") if cache.stat().st_size > 4096 else cache.write_bytes(cache.read_bytes()[:100])
    before = cache.read_bytes()
    data = write_jsonl(tmp_path / "popqa.jsonl", [{"id": "q", "question": "Q?", "answers": ["Q?"], "ctxs": []}])
    checked = cli_here("check", *popqa_args(data, tmp_path / "run", "--cache", str(cache), "--no-model"))
    assert checked.returncode == 0, checked.stderr
    [warned] = [line for line in checked.stdout.splitlines() if line.startswith("warning  ")]
    assert warned.startswith(f"warning  response cache {cache}: ") and warned.endswith(
        "a run moves it aside and uses a fresh response cache in its place"
    )
    assert "ready to run" not in checked.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite", "popqa.jsonl"]  # nothing written
    assert cache.read_bytes() == before


# --- the page cache -------------------------------------------------------------------------------


async def test_changed_bytes_inside_a_page_cache_entry_are_a_counted_miss(tmp_path):
    cache = PageCache(tmp_path / "pages.sqlite")
    keys = [content_key("page", "opts", f"<p>{i}</p>") for i in range(3)]
    cache.put_many(
        [(key, {"sentences": [f"Berlin {i}"]}) for i, key in enumerate(keys)]
        + [(content_key("embedding", "m"), np.ones((2, 4), dtype=np.float32))]
    )
    cache.close()
    change_bytes(tmp_path / "pages.sqlite", b"Berlin 1", b"63rlin 1", 1)
    reopened = PageCache(tmp_path / "pages.sqlite")
    values = await reopened.get_many([*keys, content_key("embedding", "m")])
    assert [v and v["sentences"] for v in values[:3]] == [["Berlin 0"], None, ["Berlin 2"]]
    assert values[3].shape == (2, 4)
    assert reopened.stats()["damaged_entries"] == 1
    reopened.close()


@pytest.fixture(scope="module")
def crag_archive(tmp_path_factory):
    return write_task3_archive(tmp_path_factory.mktemp("crag_t3"), questions=2, pages=3, sizes=PageSizes.small(5_000))


@pytest.mark.parametrize("fault", ["truncated", "unwritable"])
def test_a_damaged_or_unwritable_page_cache_fails_no_crag_example(tmp_path, crag_archive, fault):
    if fault == "truncated":
        path = tmp_path / "pages.sqlite"
        made = PageCache(path)
        made.put_many([(f"k{i}", "x" * 200) for i in range(50)])
        made.close()
        damage(path, "truncated")
    else:
        (tmp_path / "a_file").write_text("")
        path = tmp_path / "a_file" / "pages.sqlite"
    for attempt in ("run", "again"):  # and again: nothing left broken for the next run
        results = run(
            tmp_path,
            attempt,
            tasks=["crag_t3"],
            system="vanilla",
            model="scripted:echo",
            data={"crag_t3": str(crag_archive)},
            page_cache=str(path),
            bootstrap_iters=20,
            task_args={
                "tokenizer": tokenizer_dir(),
                "kg": False,
                "judge_protocol": "none",
                "embedder": "support.crag_helpers:KeywordEmbedder",
                "page_executor": "thread",
            },
        )
        assert results["counts"]["crag_t3"]["failed"] == 0 and results["complete"]
    stats = results["cost"]["page_cache"]
    if fault == "truncated":
        assert stats["notice"] is None and stats["hits"] > 0  # the fresh file served the second run
        assert list(tmp_path.glob("pages.sqlite.damaged-*"))
    else:
        assert stats["notice"].startswith(f"page cache {path}: ") and "the run goes on without it" in stats["notice"]


# --- engines that answer from a file --------------------------------------------------------------


def answering_engine(kind: str, folder, answer: str):
    """An engine answering every request with `answer` from `rules.json` or `calls.jsonl` in `folder`,
    named relative to it (the model string is the same in every folder)."""
    folder.mkdir(exist_ok=True)
    os.chdir(folder)
    if kind == "scripted":
        Path("rules.json").write_text(json.dumps([{"response": answer}]))
        return ScriptedEngine("rules.json")
    Path("calls.jsonl").write_text(json.dumps({"prompt": "question", "response": answer}) + "\n")
    return ReplayEngine("calls.jsonl", cacheable=True)


@pytest.mark.parametrize("kind", ["scripted", "replay"])
def test_an_engine_reading_a_file_is_keyed_by_its_content_in_a_shared_cache(tmp_path, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    cache = ResponseCache(tmp_path / "shared.sqlite")

    def ask(engine) -> str:
        async def one() -> str:
            scheduler = Scheduler(cache)
            try:
                return (await scheduler.submit(engine, Request(prompt="question", sampling=Sampling()))).text
            finally:
                await scheduler.close()

        return asyncio.run(one())

    assert ask(answering_engine(kind, tmp_path / "a", "Berlin")) == "Berlin"
    assert ask(answering_engine(kind, tmp_path / "b", "Paris")) == "Paris"  # another folder's file of that name
    assert ask(answering_engine(kind, tmp_path / "a", "Rome")) == "Rome"  # the first file, edited
    assert ask(answering_engine(kind, tmp_path / "c", "Berlin")) == "Berlin"
    assert cache.stats()["path"] and len(cache) == 3  # the same content is one entry, whatever folder holds it
    cache.close()


def test_failed_reads_and_writes_are_each_counted_and_warned_of_once(tmp_path, caplog):
    path = tmp_path / "shared.sqlite"
    cache = ResponseCache(path)
    other = sqlite3.connect(path)  # another program takes the table away under the run: every read and write fails
    other.execute("DROP TABLE responses")
    other.commit()
    other.close()
    answer = Response(texts=["Berlin"], prompt_tokens=1, completion_tokens=1)
    with caplog.at_level("WARNING", logger="ragbench._storage.sqlite_store"):
        for n in range(3):
            assert cache.get(f"key{n}") is None
            cache.put_many([(f"key{n}", "scripted:x", answer)])
            cache.flush()
        stats = cache.stats()
    cache.close()
    assert (stats["read_errors"], stats["write_errors"]) == (3, 3)
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith(f"ragbench: warning: response cache {path}: a read failed (no such table: responses)")
    assert warnings[1].startswith(f"ragbench: warning: response cache {path}: a write of 1 entries failed (Operational")
    assert all("\n" not in warning and "reported when the run ends" in warning for warning in warnings)


@pytest.mark.parametrize("kind", CACHE_FAULTS)
def test_a_response_cache_opened_on_a_users_file_is_not_used_and_leaves_it_as_it_is(tmp_path, kind):
    store_stands_aside(tmp_path, kind, ResponseCache, "response")
