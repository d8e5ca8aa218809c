"""The viewer's run page in headless Chromium shows the judge agreement of a run judged more than once."""

from __future__ import annotations

import threading

from chromium import headless_chromium, require_chromium, wait_ready
from ragbench._view.catalog import RunCatalog
from ragbench._view.server import make_server
from ragbench._view.site import Site
from ragbench.testing import installed_registry
from scoring_plugin import JUDGE, plugin_state  # noqa: F401 (plugin_state: an autouse fixture)
from test_rescore import popqa_run

require_chromium()


def test_run_page_shows_the_judge_agreement(tmp_path, popqa_records):
    popqa_run(tmp_path, popqa_records, ["llm_judge"], judges=[JUDGE], judge_repeats=2, bootstrap_iters=10)
    site = Site(RunCatalog([str(tmp_path / "run")]), registry=installed_registry())
    server = make_server(site, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with headless_chromium() as driver:
            driver.get(f"http://127.0.0.1:{server.server_address[1]}/#/run/{site.runs[0].rid}")
            wait_ready(driver, "run/")
            shown = [p.text for p in driver.find_elements("css selector", "p.judge-agreement")]
            assert shown == site.data(f"run/{site.runs[0].rid}")["judge_notes"]["popqa"]
            assert shown[0].startswith(
                "popqa llm_judge: 2 raters (repeat 1, repeat 2) on 6 example(s): agreement 100.0%"
            )
    finally:
        server.shutdown()
        server.server_close()
