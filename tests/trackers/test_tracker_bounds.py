"""Logging a finished run to a tracker is bounded and says what it does: a line names where it logs, MLflow's
requests wait a short time and are tried few times where the user has not set MLflow's own settings (the user's
stand), and a server that never answers or answers 500 ends in one line naming the server, what happened and the
command that logs the run again (exit 75). What W&B and MLflow would write in the home folder goes where
docs/outputs.md says. Real servers on 127.0.0.1; the bounds are checked by the requests the servers receive."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import needs
from support.helpers import cli, cli_here

pytestmark = needs("wandb", "mlflow")

RUN = ("--tasks", "demo", "--system", "closed_book", "--model", "scripted:echo", "--limit", "3", "--no-progress")
# the variables that would have MLflow or W&B change what they do under a test (CI detection, the user's settings)
CLEARED = ("PYTEST_CURRENT_TEST", "CI", "GITHUB_ACTIONS", "WANDB_", "MLFLOW_", "XDG_", "RAGBENCH_CACHE_DIR")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("finished") / "run"
    done = cli_here(*RUN, "--output", str(folder))
    assert done.returncode == 0, done.stderr
    return folder


class NeverAnswers:
    """A server on 127.0.0.1 that accepts every connection and never answers; `accepted` counts them, `asked`
    holds each one's request line (as far as it came)."""

    def __enter__(self) -> NeverAnswers:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.connections: list[socket.socket] = []
        self.asked: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:  # closed
                return
            self.connections.append(connection)  # held open, never answered
            threading.Thread(target=self._request_line, args=(connection,), daemon=True).start()

    def _request_line(self, connection: socket.socket) -> None:
        head = b""
        try:
            while b"\r\n" not in head and (piece := connection.recv(4096)):
                head += piece
        except OSError:  # closed
            pass
        self.asked.append(head.split(b"\r\n")[0].decode("latin-1"))

    @property
    def accepted(self) -> int:
        return len(self.connections)

    def __exit__(self, *exc: object) -> None:
        self.server.close()
        for connection in self.connections:
            connection.close()


class Answers500(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:
        Answers500.requests.append(self.path)
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def answers_500():
    Answers500.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answers500)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def log_to(finished: Path, url: str, **settings: str):
    """`ragbench log RUN --mlflow URL` with the user's MLflow `settings` (no backing off: the test takes seconds), in
    this process (MLflow reads them at each request)."""
    env = {"MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "0", **settings}
    return cli_here("log", str(finished), "--mlflow", url, env=env)


def failure_line(done, finished: Path, url: str) -> str:
    assert done.returncode == 75, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"ragbench log: logging the run to MLflow at {url} ..."
    [failed] = [line for line in lines if "error:" in line]
    assert failed.startswith(f"ragbench log: error: logging to MLflow at {url} failed (MlflowException: ")
    assert failed.endswith(
        f"the run in {finished} is saved and unchanged: log it with `ragbench log {finished} --mlflow {url}`"
    )
    return failed


def test_a_server_that_never_answers_is_waited_for_the_timeout_set_and_tried_three_times(finished):
    with NeverAnswers() as server:
        done = log_to(finished, server.url, MLFLOW_HTTP_REQUEST_TIMEOUT="1")  # the user's timeout, for a short test
        accepted = server.accepted
    assert accepted == 3  # ragbench's retries (2) where the user sets none: MLflow's own would try 8 times
    assert "Read timed out. (read timeout=1)" in failure_line(done, finished, server.url)


def test_a_server_answering_500_is_tried_three_times_and_the_user_s_retries_stand(finished, answers_500):
    done = log_to(finished, answers_500)
    assert len(Answers500.requests) == 3
    assert "too many 500 error responses" in failure_line(done, finished, answers_500)
    Answers500.requests.clear()
    failure_line(log_to(finished, answers_500, MLFLOW_HTTP_REQUEST_MAX_RETRIES="1"), finished, answers_500)
    assert len(Answers500.requests) == 2


def test_logging_writes_in_the_home_folder_only_what_the_docs_list(finished, tmp_path):
    """W&B (offline) and MLflow (a folder) with HOME a fresh folder and none of their settings: what lands in HOME
    is under ~/.cache/ragbench/wandb (docs/outputs.md), nothing under ~/.cache/wandb, ~/.local/share/wandb or
    ~/.config/mlflow."""
    home = tmp_path / "home"
    home.mkdir()
    env = {name: value for name, value in os.environ.items() if not name.startswith(CLEARED)}
    env.update({"HOME": str(home), "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DIR": str(tmp_path)})
    command = ["log", str(finished), "--wandb", "--mlflow", str(tmp_path / "mlruns")]
    done = subprocess.run(
        [sys.executable, "-m", "ragbench._cli.main", *command], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    written = sorted(str(path.relative_to(home)) for path in home.rglob("*") if path.is_file())
    assert written and all(path.startswith(".cache/ragbench/wandb/") for path in written), written


def test_wandb_online_with_a_server_that_never_answers_ends_at_its_init_timeout_in_one_line(finished, tmp_path):
    with NeverAnswers() as server:
        env = {
            "WANDB_MODE": "online",
            "WANDB_BASE_URL": server.url,
            "WANDB_API_KEY": "a" * 40,
            "WANDB_INIT_TIMEOUT": "3",  # W&B's own bound (90 s by default), short for the test
            "WANDB_DIR": str(tmp_path),
            "WANDB_SILENT": "true",
        }
        done = cli("log", str(finished), "--wandb", env=env, timeout=300)
        accepted, asked = server.accepted, list(server.asked)
    assert done.returncode == 75, done.stderr
    # W&B's own usage metrics, which waited 10 s more for this server after the error line: not sent
    assert not [line for line in asked if "/otel/" in line], asked
    lines = done.stderr.splitlines()
    assert f"ragbench log: logging the run to W&B at {server.url} ..." in lines
    [failed] = [line for line in lines if "error:" in line]
    assert failed.startswith(f"ragbench log: error: logging to W&B at {server.url} failed (CommError: ")
    assert failed.endswith(f"log it with `ragbench log {finished} --wandb`") and accepted >= 1
