"""The viewer in headless Chromium: the Examples page's slice filter offers and selects the slices
results.json names (1 and "1", no value and "None" apart, 2 before 10), the run page's slice table and
the Example page name and order them alike, and the "wrong" filter on a key with no better direction
(`length`) lists no example but says why."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from support.chromium import headless_chromium, require_chromium, viewer, wait_ready
from support.helpers import run
from support.slice_fixtures import EXPECTED, level_task

require_chromium()


@pytest.fixture(scope="module")
def page(tmp_path_factory, ragbench_zygote):
    folder = tmp_path_factory.mktemp("levels")
    run(folder, tasks=[str(level_task(folder))], system="closed_book", model=f"scripted:{folder / 'answers.json'}")
    with viewer(ragbench_zygote, folder / "run") as (address, rids), headless_chromium() as driver:
        yield driver, f"{address}/#/examples/{rids[0]}/levels", rids[0]


def shown_ids(driver) -> list[str]:
    return [
        row.find_elements("css selector", "td")[1].text
        for row in driver.find_elements("css selector", "#examples tr")[1:]
    ]


def test_slice_filter_keeps_kinds_and_no_value_apart(page):
    driver, base, _ = page
    driver.get(base)
    wait_ready(driver, "examples")
    options = [o.text for o in driver.find_element("id", "slice").find_elements("css selector", "option")]
    assert options == ["any slice"] + [f"level = {label}" for label in EXPECTED]
    for label, ids in (
        ("1", ["q2"]),
        ("1 [number]", ["q0", "q1"]),
        ("None", ["q3"]),
        ("(none)", ["q4", "q5"]),
        ("10", ["q6"]),
    ):
        driver.get(base + "?s=" + quote(f"level={label}"))
        wait_ready(driver, "s=")
        assert shown_ids(driver) == ids, label


def test_wrong_on_a_key_without_direction_lists_none_and_says_so(page):
    driver, base, _ = page
    driver.get(base + "?f=wrong&m=length")
    wait_ready(driver, "m=length")
    assert "length has no better direction" in driver.find_element("id", "no-direction").text
    assert not driver.find_elements("id", "examples")
    driver.get(base + "?f=wrong&m=em")  # a key with a direction still lists its wrong examples
    wait_ready(driver, "m=em")
    assert shown_ids(driver) == ["q2", "q3", "q5", "q6"]
    assert not driver.find_elements("id", "no-direction")


def test_run_and_example_pages_name_and_order_slices_as_results(page):
    driver, base, rid = page
    root = base.split("#")[0]
    driver.get(f"{root}#/run/{rid}")
    wait_ready(driver, "run/")
    table = driver.find_element("css selector", "table.slice")
    assert [
        row.find_elements("css selector", "td")[0].text for row in table.find_elements("css selector", "tr")[1:]
    ] == list(EXPECTED)
    for n, label in ((0, "1 [number]"), (2, "1"), (4, "(none)"), (7, "2")):
        driver.get(f"{root}#/example/{rid}/levels/{n}")
        wait_ready(driver, f"levels/{n}")
        fields = [f.text for f in driver.find_elements("css selector", ".card .field")]
        assert f"slices level={label}" in fields, fields
