"""The viewer in headless Chromium: a run whose judge was checked against human labels shows the PPI interval
beside the judged value and the judging lines (cost, agreement) on its page."""

from __future__ import annotations

import threading

from chromium import headless_chromium, require_chromium, wait_ready
from ragbench._registry import installed_registry
from ragbench._view.catalog import RunCatalog
from ragbench._view.server import make_server
from ragbench._view.site import Site
from test_judge_check import demo_ids_and_verdicts, labelled_run

require_chromium()


def test_the_run_page_shows_the_ppi_interval_and_the_judging_lines(tmp_path):
    verdicts = demo_ids_and_verdicts(tmp_path)
    labelled_run(tmp_path, dict(list(verdicts.items())[::2]))
    site = Site(RunCatalog([str(tmp_path / "run")]), registry=installed_registry())
    server = make_server(site, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with headless_chromium() as driver:
            driver.get(f"http://127.0.0.1:{server.server_address[1]}/#/run/{site.runs[0].rid}")
            wait_ready(driver, "run/")
            tables = driver.find_element("css selector", "body").text
            assert "PPI with human labels" in tables and "(n=12, N=12)" in tables
            judging = driver.find_element("css selector", "ul.judging").text
            assert "judging llm_judge: 24 calls" in judging and "llm_judge against human labels" in judging
            assert "; PPI " in tables  # the slice tables' judged values
    finally:
        server.shutdown()
        server.server_close()
