"""Install hints as this installation takes them. The messages of ragbench and its plugins say `pip install
'ragbench[vllm]'`; where ragbench was installed from a folder (a checkout, `pip install -e .`), that command
would fetch the package index's ragbench over it, so the line a user reads names their folder instead."""

from __future__ import annotations

import json
import re
import shlex
from importlib import metadata
from urllib.parse import unquote, urlparse

HINT = re.compile(r"""pip install (?:-e )?(['"]?)ragbench\[([A-Za-z0-9_,.-]+)\]\1""")


def installed_from() -> tuple[str, bool] | None:
    """(folder, editable) where ragbench was installed from a local folder (its PEP 610 direct_url.json), else
    None (from the package index, or a wheel)."""
    try:
        direct = json.loads(metadata.distribution("ragbench").read_text("direct_url.json") or "null")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    if not isinstance(direct, dict) or "dir_info" not in direct or not str(direct.get("url", "")).startswith("file:"):
        return None
    return unquote(urlparse(direct["url"]).path), bool((direct.get("dir_info") or {}).get("editable"))


def for_this_install(text: str) -> str:
    """`text` with each `pip install 'ragbench[EXTRA]'` naming the folder ragbench was installed from, if any."""
    source = installed_from()
    if source is None:
        return text
    folder, editable = source
    return HINT.sub(lambda m: f"pip install {'-e ' if editable else ''}{shlex.quote(f'{folder}[{m.group(2)}]')}", text)
