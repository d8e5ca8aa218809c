"""The viewer in headless Chromium: a run's page shows the warnings about the system's outputs and work (format
adherence, repeated searches) and its budget per example; the Compare page starts with what differs and marks
each difference that is not like for like."""

from __future__ import annotations

from support.chromium import headless_chromium, require_chromium, viewer, wait_ready
from support.helpers import run

require_chromium()


def test_the_run_and_compare_pages_show_budgets_warnings_and_what_differs(tmp_path, ragbench_zygote):
    for system in ("vanilla", "ircot"):
        run(tmp_path / "runs", system, tasks=["demo"], system=system, model="scripted:echo", limit=3)
    with viewer(ragbench_zygote, tmp_path / "runs") as (root, _), headless_chromium() as driver:
        address = f"{root}/#/"
        driver.get(address + "run/ircot")
        wait_ready(driver, "run/")
        warnings = [element.text for element in driver.find_elements("css selector", ".system-warning")]
        assert any(w.startswith("demo: warning: 3 of 3 outputs (100%) did not follow ircot's format") for w in warnings)
        assert any("searches returned the same passages as the search before them" in w for w in warnings)
        budget = driver.find_element("css selector", "table.budget").text
        assert "passages shown to the reader" in budget and "ircot" in budget
        driver.get(address + "compare/demo/vanilla~ircot")
        wait_ready(driver, "compare/")
        differences = driver.find_element("css selector", "ul.differences").text
        assert "like_for_like.demo.prompt_style: selfrag vs flashrag" in differences
        runs = driver.find_element("css selector", "p.runs").text
        assert (
            runs
            == "A = vanilla: system vanilla, engine scripted, model echo; B = ircot: system ircot, engine scripted, model echo"
        )
        stats = driver.find_element("css selector", "table.stats").text
        assert "not like for like: " in stats and "prompt style selfrag vs flashrag" in stats
