"""The SQLite caches (responses, pages) work off the event loop: a locked shared file stalls nothing."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import numpy as np

from ragbench._engines.scripted import ScriptedEngine
from ragbench._scheduler import Scheduler
from ragbench._storage.cache import ResponseCache
from ragbench._storage.page_cache import PageCache, console_line, content_key
from ragbench.api.engines import Request, Response, Sampling

LOCK_SECONDS = 2.0


def hold_write_lock(path, seconds: float, locked: threading.Event) -> threading.Thread:
    """Another run holding the file's write lock for `seconds`."""

    def hold():
        db = sqlite3.connect(str(path), timeout=10)
        db.execute("BEGIN IMMEDIATE")
        locked.set()
        time.sleep(seconds)
        db.rollback()
        db.close()

    thread = threading.Thread(target=hold)
    thread.start()
    return thread


async def test_a_locked_shared_cache_does_not_stall_the_examples(tmp_path):
    cache = ResponseCache(tmp_path / "shared.sqlite")
    locked = threading.Event()
    holder = hold_write_lock(tmp_path / "shared.sqlite", LOCK_SECONDS, locked)
    await asyncio.to_thread(locked.wait)
    scheduler = Scheduler(cache)
    engine = ScriptedEngine("echo", batch_size=4)
    started = time.perf_counter()
    answers = await asyncio.gather(
        *(scheduler.submit(engine, Request(prompt=f"p{i}", sampling=Sampling())) for i in range(12))
    )
    answered_after = time.perf_counter() - started
    assert [a.text for a in answers] == [f"p{i}" for i in range(12)]
    assert answered_after < LOCK_SECONDS / 2, "answers waited for the other run's lock"
    # answers queued for the locked file are already served from memory
    assert cache.get(Request(prompt="p3", sampling=Sampling()).cache_key(engine.engine_id)).text == "p3"
    await asyncio.to_thread(holder.join)
    await scheduler.close()  # waits for the writer, which got the lock after the other run let go
    assert scheduler.stats.cache_errors == 0 and len(cache) == 12
    cache.close()


async def test_cache_reads_run_in_the_cache_thread(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    request = Request(prompt="p")
    cache.put_many([(request.cache_key("e"), "e", Response(texts=["kept"]))])
    cache.flush()
    loop_thread = threading.get_ident()
    seen = []
    original = cache._store.lookup
    cache._store.lookup = lambda keys: (seen.append(threading.get_ident()), original(keys))[1]
    assert (await cache.aget(request.cache_key("e"))).text == "kept"
    assert seen and seen[0] != loop_thread
    cache.close()


async def test_page_cache_keys_cover_every_part_and_values_round_trip(tmp_path):
    cache = PageCache(tmp_path / "pages.sqlite")
    vectors = np.arange(12, dtype=np.float32).reshape(3, 4)
    key = content_key("embedding", "model-a", "one", "two")
    assert key != content_key("embedding", "model-b", "one", "two") != content_key("embedding", "model-a", "onetwo")
    cache.put_many([(key, vectors), (content_key("page", "opts", "<p>x</p>"), {"sentences": ["x"]})])
    cache._store.flush()
    reopened = PageCache(tmp_path / "pages.sqlite")
    got, page, missing = await reopened.get_many(
        [key, content_key("page", "opts", "<p>x</p>"), content_key("page", "other opts", "<p>x</p>")]
    )
    assert np.array_equal(got, vectors) and got.dtype == np.float32
    assert page == {"sentences": ["x"]} and missing is None
    stats = reopened.stats()
    assert (stats["hits"], stats["lookups"], stats["hit_rate"]) == (2, 3, 0.6667) and stats["bytes"] > 0
    assert stats["by_kind"] == {"embedding": {"hits": 1, "misses": 0}, "page": {"hits": 1, "misses": 1}}
    assert "2/3 hits (67%)" in console_line(stats)
    cache.close()
    reopened.close()
