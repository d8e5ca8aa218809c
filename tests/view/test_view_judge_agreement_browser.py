"""The viewer's run page in headless Chromium shows the judge agreement of a run judged more than once."""

from __future__ import annotations

from test_rescore import popqa_run

from support.chromium import api, headless_chromium, require_chromium, viewer, wait_ready
from support.scoring_plugin import JUDGE, plugin_state  # noqa: F401 (plugin_state: an autouse fixture)

require_chromium()


def test_run_page_shows_the_judge_agreement(tmp_path, popqa_records, ragbench_zygote):
    popqa_run(tmp_path, popqa_records, ["llm_judge"], judges=[JUDGE], judge_repeats=2, bootstrap_iters=10)
    with viewer(ragbench_zygote, tmp_path / "run") as (address, rids), headless_chromium() as driver:
        driver.get(f"{address}/#/run/{rids[0]}")
        wait_ready(driver, "run/")
        shown = [p.text for p in driver.find_elements("css selector", "p.judge-agreement")]
        assert shown == api(address, f"run/{rids[0]}")["judge_notes"]["popqa"]
        assert shown[0].startswith("popqa llm_judge: 2 raters (repeat 1, repeat 2) on 6 example(s): agreement 100.0%")
