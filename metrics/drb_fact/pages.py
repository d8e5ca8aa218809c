"""The text of a cited page as FACT's judge is shown it: `"{title}\\n\\n{description}\\n\\n{content}"`, as
utils/scrape.py joins the Jina Reader's fields, or `"scrape failed: {why}"` where the page could not be read (what
the script shows the judge then). Two readers:

- `local` (the default, offline): the page from the example's documents (one whose `url`, else whose `id`, is the
  cited URL: its title and text, no description), else from a pages file of `{"url", "title", "description",
  "content"}` lines (the Jina Reader's fields), where a line `{"url", "status"}` is a page the Reader answered with
  that HTTP status (not 200): the judge is shown the script's text for it, "scrape failed: Jina AI Reader Failed
  for URL: STATUS". A URL found in neither has no status to name (nothing was asked): it is shown as
  "scrape failed: no page for URL in the example's documents or the pages file";
- `jina`: the Jina Reader asked as utils/api.py asks it (`GET {reader_url}{url}` with its four headers, the key
  of $JINA_API_KEY sent as it is), up to three tries a second apart as utils/scrape.py tries.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Document
from ragbench.api.data import given_text_lines, parse_json

JINA_URL = "https://r.jina.ai/"
JINA_KEY = "JINA_API_KEY"
TRIES = 3
SCRAPE_FAILED = "scrape failed: "  # scrape.py's text for a page it could not read, before the error
URL_SAFE = "!#$%&'()*+,/:;=?@[]~"  # what requests' requote_uri leaves as it is: the rest of a URL is quoted


@dataclass(frozen=True)
class Page:
    text: str
    read: bool  # False: a failed scrape ("scrape failed: ..."), which the judge is shown all the same


def joined(title: Any, description: Any, content: Any) -> str:
    return f"{title}\n\n{description}\n\n{content}"


def reader_error(url: str, status: int) -> str:
    """utils/api.py's error for a Reader answer other than 200 (scrape.py shows it after SCRAPE_FAILED)."""
    return f"Jina AI Reader Failed for {url}: {status}"


def read_pages(path: Path) -> dict[str, Page]:
    """url -> page of a pages file; a line that is no JSON object with a string `url` (and, where it has a
    `status`, an integer other than 200) is a ConfigError."""
    pages: dict[str, Page] = {}
    for number, line in given_text_lines(path, "a JSONL file of pages (pages=FILE)", "metric drb_fact: pages file"):
        try:
            page = parse_json(line)
        except ValueError:  # not JSON, or nested too deeply
            page = None
        status = page.get("status") if isinstance(page, dict) else None
        if (
            not isinstance(page, dict)
            or not isinstance(page.get("url"), str)
            or ("status" in page and (not isinstance(status, int) or isinstance(status, bool) or status == 200))
        ):
            raise ConfigError(
                f"metric drb_fact: {path}:{number} is not a page: each line is "
                '{"url", "title", "description", "content"}, or {"url", "status"} for a page the Reader answered '
                "with an HTTP status other than 200"
            )
        url = page["url"]
        if isinstance(status, int):
            pages[url] = Page(SCRAPE_FAILED + reader_error(url, status), False)
        else:
            text = joined(page.get("title", ""), page.get("description", ""), page.get("content", ""))
            pages[url] = Page(text, True)
    return pages


class LocalPages:
    def __init__(self, pages: Path | None) -> None:
        self.pages = read_pages(pages) if pages is not None else {}

    async def page(self, url: str, docs: Sequence[Document]) -> Page:
        for doc in docs:
            if url in (doc.url, doc.id):
                return Page(joined(doc.title, "", doc.text), True)
        if url in self.pages:
            return self.pages[url]
        return Page(f"{SCRAPE_FAILED}no page for {url} in the example's documents or the pages file", False)


class JinaPages:
    def __init__(self, reader_url: str, key: str, retry_wait: float, timeout: float) -> None:
        self.reader_url, self.key, self.retry_wait, self.timeout = reader_url, key, retry_wait, timeout

    def _read(self, url: str) -> dict[str, Any]:
        request = urllib.request.Request(
            self.reader_url + urllib.parse.quote(url, safe=URL_SAFE),
            headers={
                "Accept": "application/json",
                "Authorization": self.key,
                "X-Timeout": "60000",
                "X-With-Generated-Alt": "true",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read())["data"]
        except urllib.error.HTTPError as exc:
            return {"error": reader_error(url, exc.code)}
        except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError) as exc:
            return {"error": str(exc)}
        try:
            return {"text": joined(data["title"], data["description"], data["content"])}
        except (KeyError, TypeError) as exc:
            return {"error": str(exc)}

    async def page(self, url: str, docs: Sequence[Document]) -> Page:
        for tried in range(1, TRIES + 1):
            result = await asyncio.to_thread(self._read, url)
            if "text" in result:
                return Page(result["text"], True)
            await asyncio.sleep(self.retry_wait if tried < TRIES else 0)
        return Page(SCRAPE_FAILED + result["error"], False)


def page_reader(
    kind: str, pages: str | None, reader_url: str, retry_wait: float, timeout: float
) -> LocalPages | JinaPages:
    if kind == "local":
        return LocalPages(Path(pages) if pages else None)
    if kind == "jina":
        key = os.environ.get(JINA_KEY, "")
        if not key:
            raise ConfigError(f"metric drb_fact: reader=jina needs ${JINA_KEY} (the Jina Reader's key, sent as it is)")
        return JinaPages(reader_url, key, retry_wait, timeout)
    raise ConfigError(f"metric drb_fact: reader={kind} is not one of local, jina")
