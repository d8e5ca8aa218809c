"""`ragbench view` while runs go on: a request the browser aborts leaves no traceback, runs made or finished
after the viewer started are seen on reload, and the viewer answers only its own host names; each viewer is the
command in a process of its own (support/viewer_pages.viewer_server). That an unchanged run is not read again, and
that the sample index's lock holds whatever the file does: test_view_sample_lines.py."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import urllib.request
from pathlib import Path

import pytest

from support.viewer_pages import viewer_server


def write_run(folder: Path, records: list[dict], task: str = "t", results: dict | None = None) -> Path:
    (folder / "samples").mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps({"config": {"tasks": [task], "system": "vanilla"}}))
    lines = [{"index": n, **record} for n, record in enumerate(records)]  # a line as a run writes it: its position
    (folder / "samples" / f"{task}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    if results is not None:
        (folder / "results.json").write_text(json.dumps(results))
    return folder


def finished(task: str = "t", value: float = 0.5) -> dict:
    return {
        "config": {"tasks": [task], "system": "vanilla"},
        "complete": True,
        "date": "2025-01-01",
        "details": {task: {"em": {"value": value, "n": 2, "higher_is_better": True}}},
        "counts": {task: {"records": 2, "scored": 2, "failed": 0}},
    }


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def abort_mid_response(port: int, path: str) -> bytes:
    """A browser leaving a page: the request is sent, the answer starts to come, the connection is reset."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        first = client.recv(64)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
    return first


def test_requests_the_browser_aborts_print_nothing_and_the_viewer_goes_on(tmp_path, ragbench_zygote):
    # one example page of about 12 MB: more than the socket buffers hold, so the server is still writing
    # when the connection is reset
    steps = [{"kind": "tool", "name": f"t{i}", "request": {"x": "y" * 39_000}} for i in range(300)]
    run = write_run(tmp_path / "run", [{"id": "big", "question": "q?", "trace": steps}])
    viewer = ragbench_zygote.popen(  # a fork of the tests' command zygote
        ["view", str(run), "--port", "0"], {**os.environ, "PYTHONUNBUFFERED": "1"}, stderr=subprocess.PIPE
    )
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", viewer.stderr.readline()).group(1))
        for _ in range(3):
            assert abort_mid_response(port, "/api/example/run/t/0").startswith(b"HTTP/1.0 200")
        assert get(f"http://127.0.0.1:{port}/api/runs")["runs"][0]["rid"] == "run"
    finally:
        viewer.send_signal(signal.SIGINT)
        _, stderr = viewer.communicate(timeout=30)
    assert "Traceback" not in stderr and "Error" not in stderr, stderr


def test_runs_made_after_the_viewer_started_are_found_on_reload(tmp_path, ragbench_zygote):
    root = tmp_path / "runs"
    write_run(root / "first", [{"id": "a", "question": "q?"}], results=finished())
    with viewer_server(ragbench_zygote, root) as viewer:
        runs_found_on_reload(root, viewer + "/api/")


def runs_found_on_reload(root: Path, api: str) -> None:
    assert [r["rid"] for r in get(api + "runs")["runs"]] == ["first"]

    write_run(root / "group" / "second", [{"id": "a", "question": "q?", "error": "boom"}])  # started since
    runs = {r["rid"]: r for r in get(api + "runs")["runs"]}
    assert list(runs) == ["first", "group_second"]
    assert runs["group_second"]["tasks"]["t"]["counts"] == {"records": 1, "scored": 0, "failed": 1}
    assert get(api + "rows/group_second/t/0")["rows"][0]["error"] == "boom"

    with (root / "group" / "second" / "samples" / "t.jsonl").open("a") as handle:  # it goes on, then finishes
        handle.write(json.dumps({"index": 1, "id": "b", "question": "q2?", "scores": {"em": 1.0}}) + "\n")
    assert get(api + "rows/group_second/t/0")["total"] == 2
    (root / "group" / "second" / "results.json").write_text(json.dumps(finished(value=0.25)))
    page = get(api + "run/group_second")
    assert page["finished"] and page["tasks"]["t"]["metrics"]["em"]["value"] == 0.25
    assert get(api + "runs")["runs"][1]["complete"] is True

    write_run(root / "third", [{"id": "z", "question": "q?"}])  # its pages asked for before the list
    assert get(api + "run/third")["finished"] is False and get(api + "example/third/t/0")["id"] == "z"


def raw_get(port: int, host: str | None, path: str = "/api/runs") -> bytes:
    """The whole answer to a GET with this Host header (None: none sent), as a page of another site that
    rebinds its own name to 127.0.0.1 would send it."""
    header = f"Host: {host}\r\n" if host is not None else ""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\n{header}Connection: close\r\n\r\n".encode())
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    return answer


def test_the_viewer_answers_only_its_own_host_names(tmp_path, ragbench_zygote):
    write_run(tmp_path / "secret_run", [{"id": "a", "question": "secret question?"}], results=finished())
    with viewer_server(ragbench_zygote, tmp_path) as viewer:
        answers_only_its_own_names(int(viewer.rsplit(":", 1)[1]))


def answers_only_its_own_names(port: int) -> None:
    for host in (
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        f"LOCALHOST:{port}",
        f"[::1]:{port}",
        "localhost",
        f"{socket.gethostname()}:{port}",
    ):
        assert raw_get(port, host).startswith(b"HTTP/1.0 200"), host
    for host in (
        f"attacker.example:{port}",
        "attacker.example",
        f"127.0.0.1.attacker.example:{port}",
        f"localhost:{port + 1 if port < 65535 else 1}",
        "",
        None,
    ):
        answer = raw_get(port, host)
        assert answer.startswith(b"HTTP/1.0 421"), (host, answer[:200])
        assert b"secret" not in answer
        assert raw_get(port, host, "/").startswith(b"HTTP/1.0 421")


def test_the_address_given_with_host_is_one_of_its_names(tmp_path, ragbench_zygote):
    write_run(tmp_path / "run", [{"id": "a", "question": "q?"}], results=finished())
    with viewer_server(ragbench_zygote, tmp_path, host="127.0.0.2") as viewer:  # another loopback address
        port = int(viewer.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.2", port), timeout=10) as client:
            client.sendall(f"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.2:{port}\r\nConnection: close\r\n\r\n".encode())
            assert client.recv(64).startswith(b"HTTP/1.0 200")


@pytest.mark.parametrize("port", ["70000", "-1", "65536"])
def test_a_port_out_of_range_is_one_line(tmp_path, port):
    from click.testing import CliRunner

    from ragbench.testing import cli

    result = CliRunner().invoke(cli, ["view", str(tmp_path), "--port", port])
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert result.stderr.strip().splitlines() == [
        f"ragbench: error: Invalid value for '--port': {port} is not in "
        "the range 0<=x<=65535. (`main view --help` lists the options)"
    ]
