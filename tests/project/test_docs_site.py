"""The documentation site (mkdocs.yml, docs/): it builds with warnings as errors, a broken link or anchor
fails the build, and in headless Chromium (Debian's chromium + chromium-driver, driven by selenium) every
page of its navigation loads with its title, every link on it resolves to a page and anchor that exist,
every image loads, the search answers, and nothing is fetched from another host (the site works offline). The
README's links lead to files that exist."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from support.chromium import headless_chromium


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    # NO_MKDOCS_2_WARNING: the Material theme's banner about MkDocs 2 (not a build warning) stays out of the log
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("docs") / "site"
    done = build(ROOT / "mkdocs.yml", folder)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert "WARNING" not in done.stderr, done.stderr[-5000:]
    return folder


def nav_pages() -> list[str]:
    """The pages of mkdocs.yml's nav, in order, as built files (page.md -> page.html)."""

    def walk(entries):
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from walk(value) if isinstance(value, list) else [value]

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return [page.removesuffix(".md") + ".html" for page in walk(nav)]


def test_every_page_in_docs_is_in_the_nav():
    docs = ROOT / "docs"
    assert sorted(nav_pages()) == sorted(
        str(page.relative_to(docs).with_suffix(".html")) for page in docs.rglob("*.md")
    )


def test_the_readmes_links_lead_to_files_that_exist():
    links = re.findall(r"\]\(([^)#\s]+)[^)]*\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert local and [link for link in local if not (ROOT / link).exists()] == []


def test_the_site_builds_with_warnings_as_errors(site):
    assert [page for page in nav_pages() if not (site / page).is_file()] == []


def two_page_site(folder: Path, index: str) -> Path:
    """The repository's mkdocs.yml (its theme, plugins, markdown and validation settings) over two pages of
    its own: index.md holding `index`, and running.md with an "Options" section. Builds in a second where
    the whole site takes several."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["nav"] = ["index.md", "running.md"]
    (folder / "docs").mkdir()
    (folder / "docs" / "index.md").write_text(f"# Home\n\n{index}\n", encoding="utf-8")
    (folder / "docs" / "running.md").write_text("# Running\n\n## Options\n\nThe options.\n", encoding="utf-8")
    (folder / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder / "mkdocs.yml"


@pytest.mark.parametrize("broken", ["[the options](running.md#no-such-section)", "[a page](no-such-page.md)"])
def test_a_broken_link_or_anchor_fails_the_build(broken, tmp_path):
    done = build(two_page_site(tmp_path, f"See {broken}."), tmp_path / "site")
    assert done.returncode != 0
    target = broken.split("(")[1].rstrip(")").split("#")[-1]
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert warnings and all(target in line for line in warnings), done.stderr  # the link's, and only its


def test_the_two_page_site_builds_without_a_broken_link(tmp_path):
    """The other half of the test above: without the broken link its site builds, so the link failed it."""
    done = build(two_page_site(tmp_path, "See [the options](running.md#options)."), tmp_path / "site")
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs) -> None:
        self.ids.update(value for name, value in attrs if name in ("id", "name") and value)


@functools.cache
def anchors(page: Path) -> frozenset[str]:
    parser = _Ids()
    parser.feed(page.read_text(encoding="utf-8"))
    return frozenset(parser.ids)


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def browser():
    with headless_chromium(network_log=True) as driver:
        yield driver


def requested_urls(driver) -> list[str]:
    """Every URL the browser requested since the last call (Chromium's performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def search_answers(browser) -> None:
    """The search box of the page shown finds pages: its worker fetched the site's search index (1 MB) and built
    its lunr index in the browser."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    box.send_keys("ragbench")
    found = "return document.querySelectorAll('.md-search-result__item').length"
    WebDriverWait(browser, 60).until(lambda d: d.execute_script(found) > 0)


def test_the_site_is_browsable_offline_page_by_page_link_by_link(browser, served, site):
    """The search is used on the first page; on the others its worker's request for the index is still sent (and
    checked to stay on this host) but answered by the browser as blocked: building the index again on every page
    was half of this test's CPU time."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served)
    WebDriverWait(browser, 15).until(lambda d: d.execute_script("return document.readyState") == "complete")
    search_answers(browser)
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": [served + "search/search_index.json"]})
    nav = browser.execute_script(
        "return [...document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]')]"
        ".map(a => [a.href, a.textContent.trim()])"
    )
    pages: dict[str, str] = {}
    for href, title in nav:  # the current page's table of contents sits in the nav too: its links have a #
        if not urllib.parse.urldefrag(href)[1]:
            pages.setdefault(href.removeprefix(served) or "index.html", title)
    assert list(pages) == nav_pages(), "the rendered navigation is not mkdocs.yml's"

    problems, foreign, local = [], [], 0
    for page, nav_title in pages.items():
        browser.get(served + page)
        WebDriverWait(browser, 15).until(lambda d: d.execute_script("return document.readyState") == "complete")
        heading = browser.execute_script("return document.querySelector('article h1').firstChild.textContent.trim()")
        if heading != nav_title or not browser.title.startswith(heading):
            problems.append(f"{page}: heading {heading!r}, nav {nav_title!r}, title {browser.title!r}")
        for image in browser.execute_script(
            "return [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
        ):
            problems.append(f"{page}: image {image} does not load")
        for href in browser.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href)"):
            target, fragment = urllib.parse.urldefrag(href)
            if not target.startswith(served):
                continue  # a link to another site: not followed (no network in tests)
            path = site / urllib.parse.unquote(target.removeprefix(served) or "index.html")
            if path.is_dir():
                path = path / "index.html"
            if not path.is_file():
                problems.append(f"{page}: link {href} leads nowhere")
            elif fragment and path.suffix == ".html" and urllib.parse.unquote(fragment) not in anchors(path):
                problems.append(f"{page}: link {href}: no anchor #{fragment} on {path.name}")
        urls = requested_urls(browser)
        local += sum(url.startswith(served) for url in urls)
        foreign += [
            f"{page}: {url}"
            for url in urls  # chrome://, data: ... stay in the browser
            if url.startswith(("http:", "https:", "ws:", "wss:")) and not url.startswith(served)
        ]
    assert not problems, "\n".join(problems)
    assert local >= len(pages), "the browser's request log saw no requests: nothing was checked"
    assert not foreign, "fetched from another host:\n" + "\n".join(foreign)
