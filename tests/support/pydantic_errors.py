"""pydantic's error texts link its docs under its own minor version (`https://errors.pydantic.dev/2.14/v/json_invalid`),
and a judge's re-ask carries that text: ragas and ragbench alike send what the installed pydantic writes. A recording
made under one pydantic is read as the installed one would have written it."""

from __future__ import annotations

import re
from pathlib import Path

import pydantic

_DOCS_LINK = re.compile(r"(https://errors\.pydantic\.dev/)\d+\.\d+/")
INSTALLED = ".".join(pydantic.VERSION.split(".")[:2])


def as_this_pydantic(text: str) -> str:
    """`text` with each link to pydantic's error docs naming the installed version."""
    return _DOCS_LINK.sub(lambda found: f"{found.group(1)}{INSTALLED}/", text)


def recording(path: Path) -> str:
    """A recording's text (UTF-8), its pydantic error links the installed version's."""
    return as_this_pydantic(path.read_text(encoding="utf-8"))
