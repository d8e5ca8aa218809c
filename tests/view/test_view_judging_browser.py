"""The viewer in headless Chromium: a run whose judge was checked against human labels shows the PPI interval
beside the judged value and the judging lines (cost, agreement) on its page."""

from __future__ import annotations

from test_judge_check import demo_ids_and_verdicts, labelled_run

from support.chromium import require_chromium, run_page

require_chromium()


def test_the_run_page_shows_the_ppi_interval_and_the_judging_lines(tmp_path, ragbench_zygote):
    verdicts = demo_ids_and_verdicts(tmp_path)
    labelled_run(tmp_path, dict(list(verdicts.items())[::2]))
    with run_page(ragbench_zygote, tmp_path / "run") as driver:
        tables = driver.find_element("css selector", "body").text
        assert "PPI with human labels" in tables and "(n=12, N=12)" in tables
        judging = driver.find_element("css selector", "ul.judging").text
        assert "judging llm_judge: 24 calls" in judging and "llm_judge against human labels" in judging
        assert "; PPI " in tables  # the slice tables' judged values
