"""Every connection to Ray has a deadline and ends in one line (issue 78): `index build --ray`, a run's shards
(`--retriever-arg ray_address=`) and its replicas (`--model-arg ray_address=`) at an address where nothing listens,
where a socket accepts and never answers, or where an HTTP server answers, are refused naming the address and what
was found there, within $RAGBENCH_RAY_TIMEOUT (small here; no assertion depends on how long anything took); a local
Ray that cannot start (a real memory limit) is one line with the fixes."""

from __future__ import annotations

import contextlib
import http.server
import os
import resource
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from conftest import needs, write_jsonl
from support.helpers import cli_here, closed_port

pytestmark = needs("ray")  # not imported while the tests are collected

QUICK = {"RAGBENCH_RAY_TIMEOUT": "0.5"}  # seconds: each refusal here waits at most this, twice


@contextlib.contextmanager
def silent_port() -> Iterator[int]:
    """A loopback port whose connections the kernel accepts (it listens) and that never answers a byte."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(8)
        yield listening.getsockname()[1]


@contextlib.contextmanager
def http_port() -> Iterator[int]:
    """A loopback port where an HTTP server answers (not Ray)."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


SERVERS = {
    "closed": (closed_port, "nothing listens there (connection refused)"),
    "silent": (silent_port, "something accepted the connection there but never answered within 0.5 s"),
    "http": (http_port, "something that is not a Ray server answers there ('"),
}


def assert_refused(done: subprocess.CompletedProcess, *parts: str) -> None:
    """Exit 2, one line holding each of `parts`."""
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]
    for part in parts:
        assert part in done.stderr, done.stderr


@pytest.mark.parametrize("server", SERVERS)
def test_index_build_at_an_address_that_is_not_ray_is_one_line_saying_what_answered(tmp_path, server):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "1", "contents": "castle"}])
    serve, found = SERVERS[server]
    with serve() as port:
        done = cli_here("index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "index"),
                        "--retriever", "bm25", "--ray", f"127.0.0.1:{port}", env=QUICK)  # fmt: skip
    assert_refused(done, f"ragbench: error: --ray 127.0.0.1:{port}: {found}", "`ray start --head`", "--ray alone")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"]


def test_ray_address_of_the_environment_is_named_as_such(tmp_path):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "1", "contents": "castle"}])
    with closed_port() as port:
        done = cli_here("index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "index"),
                        "--retriever", "bm25", "--ray", env={"RAY_ADDRESS": f"ray://127.0.0.1:{port}"})  # fmt: skip
    assert_refused(done, f"RAY_ADDRESS=ray://127.0.0.1:{port}: nothing listens there", "unset RAY_ADDRESS")


@pytest.mark.parametrize("value", ["soon", "0", "-1", "inf"])
def test_a_deadline_that_is_no_number_of_seconds_is_refused(tmp_path, value):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "1", "contents": "castle"}])
    with closed_port() as port:
        done = cli_here("index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "index"),
                        "--retriever", "bm25", "--ray", f"127.0.0.1:{port}",
                        env={"RAGBENCH_RAY_TIMEOUT": value})  # fmt: skip
    assert_refused(done, f"RAGBENCH_RAY_TIMEOUT={value}: a number of seconds above 0")


def demo_run(tmp_path, *args: str) -> subprocess.CompletedProcess:
    data = write_jsonl(tmp_path / "nq.jsonl", [{"id": "0", "question": "king castle", "golden_answers": ["castle"]}])
    return cli_here("--tasks", "nq_open_flashrag", "--data", f"nq_open_flashrag={data}", "--model", "scripted:echo",
                    "--output", str(tmp_path / "run"), "--no-progress", *args, env=QUICK)  # fmt: skip


@needs("bm25s")
def test_a_run_whose_shards_name_a_silent_address_is_one_line_not_a_wait(tmp_path):
    from ragbench.testing import build_index, installed_registry
    from support.retrieval_samples import passages, shard_index, write_dpr_tsv

    index = tmp_path / "index"
    build_index(write_dpr_tsv(tmp_path / "psgs.tsv", passages(20)), index, "bm25", {}, progress=False,
                registry=installed_registry())  # fmt: skip
    shard_index(index, 2)
    with silent_port() as port:
        done = demo_run(tmp_path, "--retriever", "bm25", "--retriever-arg", f"index={index}",
                        "--retriever-arg", "shards=2", "--retriever-arg", f"ray_address=127.0.0.1:{port}")  # fmt: skip
    assert_refused(done, f"--retriever-arg ray_address=127.0.0.1:{port}: {SERVERS['silent'][1]}",
                   "leave ray_address out")  # fmt: skip


def test_a_run_whose_replicas_name_an_http_server_is_one_line(tmp_path):
    with http_port() as port:
        done = demo_run(tmp_path, "--system", "closed_book", "--model-arg", "replicas=2",
                        "--model-arg", f"ray_address=127.0.0.1:{port}")  # fmt: skip
    assert_refused(done, f"--model-arg ray_address=127.0.0.1:{port}: {SERVERS['http'][1]}")


def test_a_local_ray_that_cannot_start_is_one_line_with_the_fixes(tmp_path):
    """A real fault: 3 GB of address space is too little for Ray's processes (its start times out, Ray's 30 s, or
    fails); this is the one test here that waits for Ray."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "1", "contents": "castle"}])

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    done = subprocess.run(
        [sys.executable, "-m", "ragbench._cli.main", "index", "build", "--corpus", str(corpus),
         "--out", str(tmp_path / "index"), "--retriever", "bm25", "--ray"],
        capture_output=True, text=True, timeout=300, preexec_fn=limited,
        env={**os.environ, "RAY_raylet_start_wait_time_s": "30"},  # Ray's own wait (tests/conftest.py raises it)
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.startswith("ragbench: ")]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert lines and lines[-1].startswith("ragbench: error: a local Ray "), done.stderr[-3000:]
    for fix in ("retry on a less loaded machine", "raise the memory limit (ulimit -v)", "`ray start --head`"):
        assert fix in lines[-1]
    assert "still running" not in done.stderr  # Ray's processes, half started, ended


STATED = """
import os, sys
from ray._raylet import AuthenticationMode, get_authentication_mode
from ragbench._ray_connect import stated_token_mode

stated_token_mode()
print(os.environ.get("RAY_AUTH_MODE"), get_authentication_mode() == AuthenticationMode.TOKEN)
"""


@pytest.mark.parametrize(("given", "stated"), [(None, "token True"), ("disabled", "disabled False")])
def test_a_local_ray_is_started_in_the_token_mode_ray_chooses_a_users_mode_kept(given, stated):
    """Ray gives a new local Ray token authentication and warns that it chose it, a timestamped line before every
    --ray command's own; ragbench states the same mode (RAY_AUTH_MODE=token, as Ray's own code states it) and Ray
    warns of nothing. A mode the user set is left alone. (A process of its own: the mode is Ray's process-wide
    configuration.)"""
    environment = {name: value for name, value in os.environ.items() if name != "RAY_AUTH_MODE"}
    if given is not None:
        environment["RAY_AUTH_MODE"] = given
    done = subprocess.run([sys.executable, "-c", STATED], capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == stated and "Token authentication" not in done.stderr
