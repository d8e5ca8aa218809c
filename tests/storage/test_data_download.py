"""A task's data file downloaded on first use: a download that fails leaves nothing behind (no partial file, no
empty data folder where the file was expected), so the next try starts clean and nothing is left to find."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragbench.api import ConfigError
from ragbench.api.data import resolve_data_file

BODY = b"Prompt\tAnswer\nq\ta\n"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        cut = self.path == "/cut"  # says more bytes than it sends, then closes: a connection cut short
        self.send_header("Content-Length", str(len(BODY) * (100 if cut else 1)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("path", ["/cut", None])
def test_a_failed_download_leaves_no_folder_and_no_partial_file(tmp_path, monkeypatch, server, path):
    data = tmp_path / "data"
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(data))
    url = server + path if path else "http://127.0.0.1:9/test.tsv"  # nothing listens on port 9: refused
    with pytest.raises(ConfigError, match=r"task frames needs frames/test.tsv; downloading .* failed"):
        resolve_data_file("frames", "frames/test.tsv", None, url)
    assert not data.exists()


def test_a_failed_download_keeps_the_data_folder_that_was_there(tmp_path, monkeypatch):
    (tmp_path / "data" / "other").mkdir(parents=True)
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(ConfigError):
        resolve_data_file("frames", "frames/test.tsv", None, "http://127.0.0.1:9/test.tsv")
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["other"]


def test_a_download_that_completes_is_the_data_file(tmp_path, monkeypatch, server):
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path / "data"))
    path = resolve_data_file("frames", "frames/test.tsv", None, server + "/test.tsv")
    assert path == tmp_path / "data" / "frames" / "test.tsv" and path.read_bytes() == BODY
    assert [p.name for p in path.parent.iterdir()] == ["test.tsv"]
