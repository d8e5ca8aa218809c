"""The viewer's run page in headless Chromium says how many outputs were cut at their token limit."""

from __future__ import annotations

import threading

from chromium import headless_chromium, require_chromium, wait_ready
from helpers import run
from ragbench._registry import installed_registry
from ragbench._view.catalog import RunCatalog
from ragbench._view.server import make_server
from ragbench._view.site import Site
from test_token_limit import cut_task

require_chromium()


def test_run_page_says_how_many_outputs_were_cut(tmp_path):
    run(
        tmp_path,
        tasks=[str(cut_task(tmp_path, {2}))],
        system="closed_book",
        model=f"scripted:{tmp_path / 'answers.json'}",
    )
    site = Site(RunCatalog([str(tmp_path / "run")]), registry=installed_registry())
    server = make_server(site, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with headless_chromium() as driver:
            driver.get(f"http://127.0.0.1:{server.server_address[1]}/#/run/{site.runs[0].rid}")
            wait_ready(driver, "run/")
            assert driver.find_element("id", "token-limit-qa").text == (
                "1 LLM call(s) in 1 scored examples stopped at their max_tokens, their outputs cut there: answer 1"
            )
    finally:
        server.shutdown()
        server.server_close()
