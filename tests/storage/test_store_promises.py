"""What an object store location keeps (ragbench/_storage/locations.py, block_digests.py, sharding/build/store.py),
against moto's real S3 server on 127.0.0.1, without Ray (what shard actors serve from a store is
tests/storage/test_object_store.py's): `--overwrite` replaces only shards a ragbench build wrote; a ranged read is
the file's bytes and a changed block is refused; a credential in a URL is shown nowhere; a store that accepts and
never answers ends within about twice $RAGBENCH_STORAGE_TIMEOUT; a missing bucket and an `index=s3://...` without
`shards=` are said as what they are."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import needs
from ragbench._errors import ConfigError
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._storage.block_digests import BlockMismatch, CheckedRanges, block_digests
from ragbench._storage.locations import TIMEOUT_VARIABLE, read_range
from ragbench.testing import installed_registry, load_retriever
from support.helpers import cli_here
from support.object_store import s3_server
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s", "s3fs", "moto", "flask", "flask_cors")  # moto's server runs on flask
QUERIES = ["king queen castle", "running river", "Moses the prophet", "music song", "senate election"]
TASK = "nq_open_flashrag"
AWS_KEY = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=8, max_size=20)
AWS_SECRET = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+", min_size=12, max_size=40)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """(moto's s3fs file system, the folder of its corpus and caches), this module's environment pointed at it."""
    folder = tmp_path_factory.mktemp("s3")
    with s3_server(folder) as fs:
        write_dpr_tsv(folder / "psgs_w100.tsv", passages(90))
        yield fs, folder


def test_overwrite_in_a_store_replaces_only_shards_a_ragbench_build_wrote(store):
    fs, folder = store
    corpus, registry = folder / "psgs_w100.tsv", installed_registry()
    mine = {
        "bench/mine/shards-2/000/docs.jsonl": b"mine\n",
        "bench/mine/shards-2/manifest.json": b"{}\n",
        "bench/mine/shards-2/shards.json": b'{"mine": true}\n',
    }
    for key, data in mine.items():
        fs.pipe_file(key, data)
    for overwrite in (False, True):
        with pytest.raises(ConfigError) as refused:
            build_shards(corpus, "s3://bench/mine", "bm25", {}, 2, registry=registry, overwrite=overwrite)
        line = str(refused.value)
        assert "\n" not in line
    assert "s3://bench/mine/shards-2/ is not shards a ragbench build wrote (its shards.json" in line
    assert "move its objects away, or choose another --out" in line
    assert {key: fs.cat_file(key) for key in mine} == mine and fs.find("bench/mine") == sorted(mine)
    del mine["bench/mine/shards-2/manifest.json"]
    fs.rm_file("bench/mine/shards-2/manifest.json")
    with pytest.raises(ConfigError, match=r"\(it holds no manifest.json beside its shards.json\)"):
        build_shards(corpus, "s3://bench/mine", "bm25", {}, 2, registry=registry, overwrite=True)
    fs.rm_file("bench/mine/shards-2/shards.json")  # the user's objects, no shards.json: never written over either
    with pytest.raises(ConfigError, match=r"it holds 000/docs.jsonl but no shards.json or build state"):
        build_shards(corpus, "s3://bench/mine", "bm25", {}, 2, registry=registry)
    assert fs.cat_file("bench/mine/shards-2/000/docs.jsonl") == b"mine\n"
    build_shards(corpus, "s3://bench/ours", "bm25", {}, 2, registry=registry)  # a build of ragbench's ...
    fs.pipe_file("bench/ours/shards-2/001/notes.txt", b"the user's\n")  # ... beside an object of the user's
    with pytest.raises(ConfigError, match=r"it holds 001/notes.txt, which its shards.json does not name"):
        build_shards(corpus, "s3://bench/ours", "bm25", {}, 2, registry=registry, overwrite=True)
    with pytest.raises(ConfigError, match=r"holds 2 'bm25' shards, not 2 lucene_bm25"):
        build_shards(corpus, "s3://bench/ours", "lucene_bm25", {}, 2, registry=registry, overwrite=True)
    fs.rm_file("bench/ours/shards-2/001/notes.txt")
    assert build_shards(corpus, "s3://bench/ours", "bm25", {}, 2, registry=registry, overwrite=True).kept == 0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(min_size=1, max_size=300_000), st.data())
def test_a_ranged_read_is_the_files_bytes_and_a_changed_block_is_refused(store, tmp_path, data, draw):
    fs, _ = store
    path = tmp_path / "file"
    path.write_bytes(data)
    fs.pipe_file("bench/ranges/file", data)
    ranges = CheckedRanges("s3://bench/ranges/file", len(data), 4096, block_digests(path, 4096))
    start = draw.draw(st.integers(0, len(data) - 1))
    stop = draw.draw(st.integers(start, len(data) + 10))
    assert ranges.read(start, stop) == data[start:stop] == read_range("s3://bench/ranges/file", start, stop)
    changed = draw.draw(st.integers(0, len(data) - 1))
    fs.pipe_file("bench/ranges/file", data[:changed] + bytes([data[changed] ^ 1]) + data[changed + 1 :])
    fresh = CheckedRanges("s3://bench/ranges/file", len(data), 4096, block_digests(path, 4096))
    with pytest.raises(BlockMismatch, match=f"bytes {changed // 4096 * 4096}\\.\\."):
        fresh.read(changed, changed + 1)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(AWS_KEY, AWS_SECRET)
@example("AKIAEXAMPLE0", "a/b+c/d+e/f+g")  # the characters of a secret that a URL's parts could take for theirs
@example("AKIA2222", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
def test_a_credential_in_a_url_is_never_shown_nor_stored(store, tmp_path, key, secret):
    """Given as `index=` (with and without `shards=`) or as a build's --out: refused in one line that shows the URL
    as `s3://***@bench/...`; no object, file or line holds the key or the secret."""
    fs, folder = store
    url = f"s3://{key}:{secret}@bench/idx"
    before = set(fs.find("bench"))
    lines = []
    for args in ({"index": url, "shards": 2}, {"index": url}):
        with pytest.raises(ConfigError) as refused:
            load_retriever("bm25", args, registry=installed_registry())
        lines.append(str(refused.value))
    with pytest.raises(ConfigError) as refused:
        build_shards(folder / "psgs_w100.tsv", url, "bm25", {}, 2, registry=installed_registry())
    lines.append(str(refused.value))
    for line in lines:
        assert "s3://***@bench/idx" in line and key not in line and secret not in line, line
    assert set(fs.find("bench")) == before
    assert not any(secret.encode() in path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(AWS_KEY, AWS_SECRET)
def test_a_credential_in_a_url_reaches_no_output_or_file_of_the_command_line(store, tmp_path_factory, key, secret):
    fs, folder = store
    where = tmp_path_factory.mktemp("run")
    url = f"s3://{key}:{secret}@bench/idx"
    commands = [
        ("index", "build", "--corpus", str(folder / "psgs_w100.tsv"), "--retriever", "bm25", "--out", url,
         "--shards", "2", "--no-progress"),
        ("--tasks", "demo", "--model", "scripted:echo", "--limit", "2", "--retriever", "bm25", "--retriever-arg",
         f"index={url}", "--retriever-arg", "shards=2", "--output", str(where / "run")),
    ]  # fmt: skip
    for command in commands:
        result = cli_here(*command)
        assert result.returncode != 0 and "s3://***@bench/idx" in result.stderr
        assert secret not in result.stdout + result.stderr and key not in result.stdout + result.stderr
    assert not any(secret.encode() in path.read_bytes() for path in where.rglob("*") if path.is_file())
    assert not any(secret.encode() in path.read_bytes() for path in (folder / "cache").rglob("*") if path.is_file())


class NeverAnswers:
    """A server on 127.0.0.1 that accepts every connection and reads from it until it closes, never answering."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.connections: list[socket.socket] = []
        threading.Thread(target=self.accepting, daemon=True).start()

    def accepting(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections.append(connection)
            threading.Thread(target=self.reading, args=(connection,), daemon=True).start()

    @staticmethod
    def reading(connection: socket.socket) -> None:
        try:
            while connection.recv(65536):
                pass
        except OSError:
            pass

    def close(self) -> None:
        self.socket.close()
        for connection in self.connections:
            connection.close()


def test_a_store_that_never_answers_ends_within_about_twice_its_deadline(store, monkeypatch):
    """Not the deadline times botocore's attempts times s3fs's retries (21 s at a deadline of 1 s before)."""
    server = NeverAnswers()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.port}")
    monkeypatch.setenv(TIMEOUT_VARIABLE, "1")
    try:
        for call in (
            lambda: read_range("s3://bench/silent/docs.jsonl", 0, 10),
            lambda: load_retriever("bm25", {"index": "s3://bench/silent", "shards": 2}, registry=installed_registry()),
        ):
            started = time.monotonic()
            with pytest.raises(ConfigError) as refused:
                call()
            assert time.monotonic() - started < 10  # about 2 s: two tries of 1 s
            assert "\n" not in str(refused.value) and "s3://bench/silent" in str(refused.value)
            assert server.connections  # it was asked, and answered nothing
    finally:
        server.close()


def test_a_missing_bucket_and_an_index_url_without_shards_are_said_as_they_are(store):
    fs, folder = store
    with pytest.raises(ConfigError) as refused:
        build_shards(folder / "psgs_w100.tsv", "s3://no-such-bucket/idx", "bm25", {}, 2, registry=installed_registry())
    line = str(refused.value)
    assert "the bucket no-such-bucket does not exist in the store; make it" in line and "run the command" not in line
    with pytest.raises(ConfigError) as refused:
        load_retriever("bm25", {"index": "s3://bench/idx"}, registry=installed_registry())
    line = str(refused.value)
    assert "index=s3://bench/idx: an index in an object store is served through its shards" in line
    assert "add --retriever-arg shards=S" in line and "s3:/bench" not in line and "\n" not in line
    assert Path("s3:").exists() is False
