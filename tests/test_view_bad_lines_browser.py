"""The viewer's run page in headless Chromium names the lines of a samples file that are no sample record."""

from __future__ import annotations

import threading

from chromium import headless_chromium, require_chromium, wait_ready
from ragbench._view.catalog import RunCatalog
from ragbench._view.server import make_server
from ragbench._view.site import Site
from ragbench.testing import installed_registry
from test_view_sample_lines import sample, write_run

require_chromium()


def test_run_page_counts_and_names_the_bad_lines(tmp_path):
    run = write_run(tmp_path / "run", [sample("a", 0, "q?", 1.0), b"not json", b'{"id": "by hand"}'])
    site = Site(RunCatalog([str(run)]), registry=installed_registry())
    server = make_server(site, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    path = run / "samples" / "t.jsonl"
    try:
        with headless_chromium() as driver:
            driver.get(f"http://127.0.0.1:{server.server_address[1]}/#/run/{site.runs[0].rid}")
            wait_ready(driver, "run/")
            assert driver.find_element("css selector", "div.bad-lines[data-task=t]").text.splitlines() == [
                "2 line(s) of samples/t.jsonl are no sample record and are not among the examples:",
                f"{path}:2: not valid JSON at column 1: Expecting value",
                f"{path}:3: not a sample record (no integer `index`)",
            ]
    finally:
        server.shutdown()
        server.server_close()
