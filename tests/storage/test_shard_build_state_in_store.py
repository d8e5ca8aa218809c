"""A shard build into an object store keeps its state in the store (`sharding/build/store.py`), against a real S3
server (moto's, on 127.0.0.1), its drivers in this process or one of their own (no Ray: what is promised is the
state and the lock in the store; a build lost mid-way resumed by `index build --ray` on another machine is
tests/storage/test_object_store.py's). A state object damaged in the store is refused in one line naming it and
the fix, and the build completes once the fix is applied; a resume lists, never asks a file at a time; one driver at
a time holds an --out (its lock object, a lease renewed, a stale one taken over)."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import time
from collections import Counter
from email.utils import parsedate_to_datetime

import pytest

from conftest import needs
from ragbench.api import ConfigError
from ragbench.testing import build_shards, installed_registry
from support.held_build import held_build
from support.object_store import (
    LostOnceFinished,
    cut_build,
    s3_server,
    served_requests,
    shard_files,
    store_listing,
)
from support.refusing_proxy import refusing_proxy
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s", "s3fs", "moto", "flask", "flask_cors")  # moto's server runs on flask
KIND = "lucene_bm25"
RECORD = re.compile(r"\.(analysed|finished|merged)\.json(%2F|/)?$|shard-build\.json(%2F|/)?$")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """(the s3fs file system of moto's server, a corpus, its shards built here never cut: INDEX/shards-3)."""
    folder = tmp_path_factory.mktemp("s3state")
    with s3_server(folder) as fs:
        corpus = write_dpr_tsv(folder / "psgs_w100.tsv", passages(90))
        uncut = build_shards(corpus, folder / "uncut", KIND, {}, 3, registry=installed_registry())
        yield fs, corpus, uncut.folder


@pytest.mark.parametrize(
    ("damaged", "problem", "record", "finished"),
    [
        ("001.analysed.json", "not a whole record", "001.analysed.json", 1),  # cut short
        ("001/docs.jsonl", "bytes, recorded", "001.analysed.json", 1),  # cut short
        ("002/docs.jsonl", "its content digest is", "002.analysed.json", 2),  # another content: seen once fetched
    ],
)
def test_a_damaged_state_object_is_refused_in_one_line_naming_it_and_the_fix(store, tmp_path, monkeypatch, damaged,
                                                                             problem, record, finished):  # fmt: skip
    fs, corpus, uncut = store
    url = f"s3://bench/damaged-{damaged.replace('/', '-')}"
    key, state = url.removeprefix("s3://"), f"{url}/shards-3.building"
    cut_build(corpus, url, KIND, monkeypatch, tmp_path)
    held = fs.cat_file(f"{key}/shards-3.building/{damaged}")
    fs.pipe_file(f"{key}/shards-3.building/{damaged}", held.replace(b"a", b"e") if "digest" in problem else held[:-1])
    with pytest.raises(ConfigError) as refused:
        build_shards(corpus, url, KIND, {}, 3, registry=installed_registry())
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"{state}/{damaged}: damaged state") and problem in line
    assert f"remove {state}/{record}" in line and "run the command again" in line
    fs.rm_file(f"{key}/shards-3.building/{record}")  # the fix
    done = build_shards(corpus, url, KIND, {}, 3, registry=installed_registry())
    assert done.kept == finished
    fs.get(f"{key}/shards-3", str(tmp_path / "got"), recursive=True)
    assert shard_files(tmp_path / "got") == shard_files(uncut)
    assert set(fs.find(key)) == {f"{key}/{name}" for name in store_listing(uncut)}


def test_a_resume_checks_the_recorded_files_against_one_listing_not_a_request_a_file(store):
    """A build lost once its shards were all in the store, resumed: the files its records name are checked against
    a listing of the state's prefix and one of the shards', as many listings for 4 shards as for 2, never a HEAD of
    a file it does not read (counted in moto's request log)."""
    fs, corpus, _ = store
    served = {}
    for shards in (2, 4):
        url = f"s3://bench/listed-{shards}"
        with pytest.raises(ConfigError, match="the driver's node was lost"):
            build_shards(corpus, url, KIND, {}, shards, registry=installed_registry(), runner=LostOnceFinished)
        with served_requests() as served[shards]:
            assert build_shards(corpus, url, KIND, {}, shards, registry=installed_registry()).kept == shards
    listings = {shards: sum("list-type=" in query for _, query in held) for shards, held in served.items()}
    assert listings[2] == listings[4] <= 6
    for shards, held in served.items():  # each step-2 record read once (it was 4 times)
        reads = Counter(query for method, query in held if method == "GET" and query.endswith(".finished.json"))
        assert reads == {
            f"/bench/listed-{shards}/shards-{shards}.building/{n:03d}.finished.json": 1 for n in range(shards)
        }
    for held in served.values():  # a HEAD only where the object is then read (s3fs sizes a file it opens first)
        assert {query for method, query in held if method == "HEAD"} <= {
            query for method, query in held if method == "GET"
        }
        # a record is read by one GET, never sized first nor, where there is none, looked for as a folder too
        assert not [query for method, query in held if method == "HEAD" and RECORD.search(query)]
        assert not [query for _, query in held if "max-keys=1" in query and RECORD.search(query.split("&")[1])]


def test_one_driver_at_a_time_builds_into_an_out_in_a_store(store, tmp_path, caplog):
    """A second driver is refused while a first, in its own process, holds the --out (its lock object), in one line
    naming the lock, its holder and the fix; the first then completes and removes its lock. A first killed outright
    on this host leaves its lock stale (its pid is gone): the next driver takes it over and builds."""
    fs, corpus, uncut = store
    url = "s3://bench/two-drivers"
    lock, key = f"{url}/shards-3.lock", url.removeprefix("s3://")
    with held_build(corpus, url, 3) as first:
        with pytest.raises(ConfigError) as refused:
            build_shards(corpus, url, KIND, {}, 3, registry=installed_registry())
        held_by = f"pid {first.pid} on {socket.gethostname()}, started "
        assert str(refused.value).startswith(
            f"--out {url}: another ragbench shard build is writing it ({lock} is held by {held_by}"
        )
        assert str(refused.value).endswith(
            "wait for it to end; a holder that is gone leaves it stale once not renewed for its lease (180 s), and "
            "the command run again then takes it over"
        )
        _, err = first.communicate("\n")  # let go on
        assert first.returncode == 0, err
    fs.get(f"{key}/shards-3", str(tmp_path / "got"), recursive=True)
    assert shard_files(tmp_path / "got") == shard_files(uncut)
    assert set(fs.find(key)) == {f"{key}/{name}" for name in store_listing(uncut)}  # no lock, no state left
    with held_build(corpus, f"{url}-killed", 3) as first:
        first.kill()
    with caplog.at_level(logging.WARNING):
        assert build_shards(corpus, f"{url}-killed", KIND, {}, 3, registry=installed_registry()).kept == 0
    assert f"took over the stale lock {url}-killed/shards-3.lock (pid {first.pid} on " in caplog.text
    assert "its process on this host is gone" in caplog.text
    assert set(fs.find(f"{key}-killed")) == {f"{key}-killed/{name}" for name in store_listing(uncut)}


def until(condition, what):
    """Polls until `condition()` holds: what the test waits for is an event (a renewal written, an age the store
    gives); the deadline only keeps a broken build from hanging the suite."""
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def store_age(fs, key):
    """The object's age by the store's clock: the Date of its reply less the object's Last-Modified."""
    reply = fs.call_s3("head_object", Bucket="bench", Key=key.removeprefix("bench/"))
    return (parsedate_to_datetime(reply["ResponseMetadata"]["HTTPHeaders"]["date"]) - reply["LastModified"]).seconds


def test_a_lock_not_renewed_for_its_lease_is_taken_over_and_its_holder_stops(store, tmp_path, monkeypatch, caplog):
    """A holder renews its lock while it builds (counted in the object); stopped (SIGSTOP: its process alive, as a
    holder on another node cut off is to this one), it renews it no more, and once the store gives the lock an age
    over the lease a second driver takes it over and builds. The first, let go on, finds its lock taken at its next
    step and stops in one line, having written nothing."""
    fs, corpus, uncut = store
    url, key = "s3://bench/leased", "bench/leased"
    monkeypatch.setenv("RAGBENCH_STORE_LOCK_LEASE", "1.5")  # renewed every 0.5 s
    with held_build(corpus, url, 3) as first:
        until(lambda: json.loads(fs.cat_file(f"{key}/shards-3.lock"))["renewals"] >= 2, "the holder renews")
        first.send_signal(signal.SIGSTOP)
        until(lambda: store_age(fs, f"{key}/shards-3.lock") > 1.5, "the lock's age passes its lease")
        with caplog.at_level(logging.WARNING):
            assert build_shards(corpus, url, KIND, {}, 3, registry=installed_registry()).kept == 0
        assert f"took over the stale lock {url}/shards-3.lock (pid {first.pid} on " in caplog.text
        assert "its lease 1.5 s" in caplog.text
        first.send_signal(signal.SIGCONT)
        _, err = first.communicate("\n")
    assert first.returncode != 0
    assert (
        f"--out {url}: this build lost its lock: {url}/shards-3.lock was taken over by another driver (it is now "
        "removed), not renewed within its lease of 1.5 s" in err
    )
    fs.get(f"{key}/shards-3", str(tmp_path / "got"), recursive=True)
    assert shard_files(tmp_path / "got") == shard_files(uncut)
    assert set(fs.find(key)) == {f"{key}/{name}" for name in store_listing(uncut)}


@pytest.mark.parametrize(("status", "code"), [(409, "ConditionalRequestConflict"), (412, "PreconditionFailed")])
def test_a_lock_put_the_store_refuses_names_the_holder(store, monkeypatch, status, code):
    """The store's refusal of the conditional put of the lock, as S3 answers two conditional puts racing (409
    ConditionalRequestConflict; 412 without naming the condition), is the line naming the holder, not a store
    error."""
    fs, corpus, _ = store
    url = f"s3://bench/refused-{status}"
    with held_build(corpus, url, 3) as first:
        with refusing_proxy(os.environ["AWS_ENDPOINT_URL"], ".lock", status, code, "refused") as proxy:
            monkeypatch.setenv("AWS_ENDPOINT_URL", proxy)
            with pytest.raises(ConfigError) as refused:
                build_shards(corpus, url, KIND, {}, 3, registry=installed_registry())
        assert str(refused.value).startswith(
            f"--out {url}: another ragbench shard build is writing it ({url}/shards-3.lock is held by pid {first.pid} "
            f"on {socket.gethostname()}, started "
        )


@pytest.mark.parametrize(("record", "kept"), [("000.finished.json", 0), ("002.analysed.json", 1)])
def test_a_step_record_nested_without_end_is_refused_in_one_line_and_the_fix_completes(store, tmp_path, monkeypatch,
                                                                                       record, kept):  # fmt: skip
    """A record 100,000 arrays deep (Python's JSON parser gives up on it): one line naming it and the fix, then the
    build completes once the fix is applied."""
    fs, corpus, uncut = store
    url = f"s3://bench/nested-{record}"
    key, state = url.removeprefix("s3://"), f"{url}/shards-3.building"
    cut_build(corpus, url, KIND, monkeypatch, tmp_path)
    fs.pipe_file(f"{key}/shards-3.building/{record}", b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(ConfigError) as refused:
        build_shards(corpus, url, KIND, {}, 3, registry=installed_registry())
    assert str(refused.value) == (
        f"{state}/{record}: damaged state of an interrupted shard build (not a whole record (nested too deep)); "
        f"remove {state}/{record} (that step is then done again), then run the command again"
    )
    fs.rm_file(f"{key}/shards-3.building/{record}")  # the fix
    assert build_shards(corpus, url, KIND, {}, 3, registry=installed_registry()).kept == kept


def test_more_shards_than_an_objects_lines_are_refused_before_any_task(store, tmp_path):
    fs, corpus, _ = store
    fs.put_file(str(corpus), "bench/corpus/psgs_w100.tsv")
    lines = corpus.read_bytes().count(b"\n")
    url = "s3://bench/corpus/psgs_w100.tsv"
    with pytest.raises(ConfigError) as refused:
        build_shards(url, "s3://bench/too-many", KIND, {}, lines + 1, registry=installed_registry())
    assert str(refused.value) == (
        f"--shards {lines + 1}: corpus {url} has {lines} lines and a shard is built from whole lines; choose 1 to "
        f"{lines}"
    )
    assert not fs.exists("bench/too-many")
