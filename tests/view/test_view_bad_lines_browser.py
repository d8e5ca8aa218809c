"""The viewer's run page in headless Chromium names the lines of a samples file that are no sample record."""

from __future__ import annotations

from test_view_sample_lines import sample, write_run

from support.chromium import headless_chromium, require_chromium, viewer, wait_ready

require_chromium()


def test_run_page_counts_and_names_the_bad_lines(tmp_path, ragbench_zygote):
    run = write_run(tmp_path / "run", [sample("a", 0, "q?", 1.0), b"not json", b'{"id": "by hand"}'])
    path = run / "samples" / "t.jsonl"
    with viewer(ragbench_zygote, run) as (address, rids), headless_chromium() as driver:
        driver.get(f"{address}/#/run/{rids[0]}")
        wait_ready(driver, "run/")
        assert driver.find_element("css selector", "div.bad-lines[data-task=t]").text.splitlines() == [
            "2 line(s) of samples/t.jsonl are no sample record and are not among the examples:",
            f"{path}:2: not valid JSON at column 1: Expecting value",
            f"{path}:3: not a sample record (no integer `index`)",
        ]
