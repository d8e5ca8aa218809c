"""Headless Chromium for the browser tests: Debian's chromium + chromium-driver, driven by selenium. A test
module calls `require_chromium()` at import, so it skips with one line where they are missing (.ci/run
installs them)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.command_zygote import Zygote

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,860",
)


def require_chromium() -> tuple[str, str]:
    """(the browser, its driver); skips the calling test module without them or without selenium."""
    pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install ragbench[test])")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (browser and driver):
        pytest.skip("no chromium/chromedriver here (apt-get install chromium chromium-driver)", allow_module_level=True)
    return browser, driver


@contextlib.contextmanager
def headless_chromium(network_log: bool = False) -> Iterator:
    """A driver on a fresh profile; `network_log` keeps Chromium's performance log (every request it sends)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = require_chromium()
    options = Options()
    options.binary_location = browser
    for flag in FLAGS:
        options.add_argument(flag)
    if network_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    profile = tempfile.mkdtemp(prefix="ragbench-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_ready(driver, hash_part: str) -> None:
    """Wait until the viewer has rendered the page whose address holds `hash_part`, and check it shows no error.
    The page rendered is the one now in the address bar: after a navigation that changes only the hash, the
    previous page's ready mark can still hold `hash_part` (`?s=level%3D1` after `?s=level%3D1%20...`)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 15).until(
        lambda d: d.execute_script(
            "const ready = document.body.dataset.ready || '#/';"
            "return ready === (location.hash || '#/') && ready.includes(arguments[0]);",
            hash_part,
        )
    )
    assert not driver.find_elements("id", "error"), driver.find_element("id", "error").text


@contextlib.contextmanager
def run_page(zygote: Zygote, run_dir: Path) -> Iterator:
    """A driver showing the viewer's page of the run in `run_dir`, `ragbench view RUN_DIR` (a fork of `zygote`)
    serving it while it is used."""
    with viewer(zygote, run_dir) as (address, [rid]), headless_chromium() as driver:
        driver.get(f"{address}/#/run/{rid}")
        wait_ready(driver, "run/")
        yield driver


def api(address: str, key: str) -> Any:
    """The data of a viewer's page, `address`/api/`key`, as its page reads it."""
    with urllib.request.urlopen(f"{address}/api/{key}", timeout=30) as response:
        return json.load(response)


@contextlib.contextmanager
def viewer(zygote: Zygote, *folders: Path) -> Iterator[tuple[str, list[str]]]:
    """`ragbench view FOLDERS` as a user starts it, a process of its own on a free port (a fork of the tests'
    command zygote): (its address `http://127.0.0.1:PORT`, the rids of its runs, from /api/runs); stopped with
    Ctrl-C (SIGINT) at the end."""
    process = zygote.popen(
        ["view", *map(str, folders), "--port", "0"], {**os.environ, "PYTHONUNBUFFERED": "1"}, stderr=subprocess.PIPE
    )
    try:
        line = process.stderr.readline()  # "ragbench view: N run(s) at http://127.0.0.1:PORT/ (Ctrl-C stops)"
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        assert found, line
        yield found.group(1), [run["rid"] for run in api(found.group(1), "runs")["runs"]]
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
