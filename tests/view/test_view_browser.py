"""The viewer in a real browser: headless Chromium (Debian's chromium + chromium-driver, driven by
selenium) opens a served site and an exported one (file://), clicks runs -> examples -> an LLatrieval
example's timeline (a custom step with the documents it kept) -> a failed example's traceback -> compare,
and checks what is rendered; model output with HTML in it shows as text.
Set RAGBENCH_SCREENSHOTS=DIR to save the pages as PNGs (docs/ holds those of docs/viewer.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.chromium import headless_chromium, require_chromium, viewer, wait_ready
from support.helpers import viewed
from support.view_fixtures import FAILED_TRACEBACK, METRIC_TRACEBACK, SCRIPT_ANSWER, failed_run, make_runs

require_chromium()
SHOTS = os.environ.get("RAGBENCH_SCREENSHOTS")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser_runs")
    make_runs(root)
    failed_run(root)
    return root


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def served(runs, ragbench_zygote):
    with viewer(ragbench_zygote, runs) as (address, rids):
        yield f"{address}/", rids


def click(driver, text: str, hash_part: str) -> None:
    driver.find_element("link text", text).click()
    wait_ready(driver, hash_part)


def shot(driver, name: str, height: int | None = None) -> None:
    """Save the page as SHOTS/view_NAME.png, `height` pixels tall where the default window cuts what it shows."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        size = driver.get_window_size()
        if height:
            driver.set_window_size(size["width"], height)
        driver.save_screenshot(str(Path(SHOTS) / f"view_{name}.png"))
        driver.set_window_size(size["width"], size["height"])


def click_through(driver, base: str, rids: list[str], screenshots: bool = False) -> None:
    llatrieval = next(rid for rid in rids if rid.startswith("llatrieval_"))
    vanilla = next(rid for rid in rids if rid.startswith("vanilla_"))
    closed_book = next(rid for rid in rids if rid.startswith("closed_book_"))
    driver.get(base)
    wait_ready(driver, "#/")
    runs = driver.find_element("id", "runs").text
    assert "llatrieval" in runs and "selfrag" in runs and "complete" in runs and "calls" in runs
    [stopped] = [row.text for row in driver.find_elements("css selector", "#runs tr") if row.text.startswith("failed")]
    assert "incomplete / stopped" in stopped  # no results, and no process holds its lock
    assert "[" in driver.find_element("css selector", "table.results[data-task=popqa]").text  # values with intervals
    screenshots and shot(driver, "runs")
    click(driver, vanilla, f"#/run/{vanilla}")
    assert driver.find_elements("css selector", "table.slice") and driver.find_elements(
        "css selector", "div.plot svg rect"
    )
    labels = [t.text for t in driver.find_elements("css selector", "div.plot svg text.value")]
    assert "0.00" in labels or "1.00" in labels  # bars carry their values, zero bars included
    driver.execute_script("arguments[0].scrollIntoView()", driver.find_element("css selector", "table.slice"))
    screenshots and shot(driver, "run")

    driver.get(base + f"#/examples/{vanilla}/popqa")
    wait_ready(driver, "examples")
    table = driver.find_element("id", "examples").text
    assert SCRIPT_ANSWER in table  # the script tag is shown as text ...
    assert driver.execute_script("return window.__pwned") is None  # ... and never ran
    driver.find_element("id", "filter").find_element("css selector", "option[value=wrong]").click()
    wait_ready(driver, "f=wrong")
    assert len(driver.find_elements("css selector", "#examples tr")) == 1 + 2  # header + the two misses
    driver.get(base + f"#/example/{vanilla}/popqa/0")
    wait_ready(driver, "example/")
    doc = driver.find_element("css selector", "details.doc")
    doc.click()
    assert doc.find_element("css selector", "pre.doctext").text.startswith("<script>window.__pwned = 3</script><img")
    assert driver.execute_script("return window.__pwned") is None

    driver.get(base + f"#/examples/{llatrieval}/alce_asqa")
    wait_ready(driver, "examples")
    screenshots and shot(driver, "examples")
    driver.find_element("css selector", "#examples a").click()
    wait_ready(driver, "example/")
    groups = driver.find_elements("css selector", "details.group")
    assert [g.get_attribute("data-group") for g in groups][:2] == ["iteration 1", "iteration 2"]
    assert "verification: rejected" in groups[0].text and "summarize" in groups[0].text
    step = groups[0].find_element("css selector", "details.step[data-step='1']")
    step.click()
    assert step.find_element("css selector", "pre.prompt").text.startswith("[system]")
    selection = groups[0].find_element("css selector", "details.step.custom")  # LLatrieval's ctx.record_step
    assert "custom · selection" in selection.text and "document(s) kept" in selection.text
    selection.find_element("css selector", "summary").click()
    assert '"candidates"' in selection.find_element("css selector", "pre.prompt").text
    assert '"selected"' in selection.find_element("css selector", "pre.reply").text
    kept = selection.find_elements("css selector", ".kept details.doc")
    assert kept and not kept[0].find_element("css selector", "pre.doctext").is_displayed()
    kept[0].click()
    assert kept[0].find_element("css selector", "pre.doctext").text
    driver.execute_script("arguments[0].open = false; arguments[1].scrollIntoView()", step, groups[0])
    screenshots and shot(driver, "example", height=1250)  # iteration 1 with its custom step open

    driver.get(base + "#/example/failed/t/0")
    wait_ready(driver, "example/failed")
    traceback = driver.find_element("css selector", "details.traceback")
    assert traceback.get_attribute("open") is None and not traceback.find_element("css selector", "pre").is_displayed()
    traceback.find_element("css selector", "summary").click()
    assert traceback.find_element("css selector", "pre").text == FAILED_TRACEBACK
    screenshots and shot(driver, "traceback")
    driver.get(base + "#/example/failed/t/1")  # a metric that raised: its traceback in its row of the scores
    wait_ready(driver, "example/failed/t/1")
    [failed_metric] = [row for row in driver.find_elements("css selector", "table.scores tr") if "judge" in row.text]
    traceback = failed_metric.find_element("css selector", "details.traceback")
    assert "ValueError: no reply" in failed_metric.text
    assert not traceback.find_element("css selector", "pre").is_displayed()
    traceback.find_element("css selector", "summary").click()
    assert traceback.find_element("css selector", "pre").text == METRIC_TRACEBACK
    driver.get(base + "#/examples/failed/t?f=failed")
    wait_ready(driver, "f=failed")
    rows = driver.find_elements("css selector", "#examples tr")
    assert len(rows) == 1 + 2 and "judge: ValueError: no reply" in rows[2].text  # a metric failure is a failure

    driver.get(base + ("#/compare/popqa" if base.startswith("file:") else f"#/compare/popqa/{vanilla}~{closed_book}"))
    wait_ready(driver, "compare")
    stats = driver.find_element("css selector", "table.stats").text
    assert "p adj." in stats and "p raw" in stats and "like for like" in stats
    note = driver.find_element("css selector", "p.p-note").text  # the note under the table, as compare.md's
    assert note == "p: none, as no row has 10 or more shared examples (too few to test)"  # popqa's runs: a few
    disagreements = driver.find_elements("css selector", "table.disagree")
    assert disagreements
    screenshots and shot(driver, "compare")
    other = driver.find_element("css selector", "p.baselines a")  # another run as the baseline A
    baseline = other.text
    other.click()
    wait_ready(driver, f"compare/popqa/{baseline}~")
    assert f"vs A = {baseline}" in driver.find_element("css selector", "h2").text
    disagreements = driver.find_elements("css selector", "table.disagree")
    disagreements[0].find_element("link text", "side by side").click()
    wait_ready(driver, "pair/")
    assert len(driver.find_elements("css selector", ".cols h2")) >= 2


def test_served_site(browser, served):
    address, rids = served
    click_through(browser, address, rids, screenshots=True)


def test_exported_site_opens_from_disk(browser, runs, tmp_path):
    pages = viewed(runs, out=tmp_path / "site")  # `ragbench view RUNS --export DIR`
    click_through(browser, (tmp_path / "site" / "index.html").as_uri(), [run["rid"] for run in pages["runs"]["runs"]])
