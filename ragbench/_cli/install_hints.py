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
    None (from the package index, or a wheel). Every ragbench distribution on the path is asked: run from the
    checkout, the folder's ragbench.egg-info (which has no direct_url.json) may be found first."""
    for distribution in metadata.distributions(name="ragbench"):  # a checkout's own ragbench.egg-info comes too
        try:
            direct = json.loads(distribution.read_text("direct_url.json") or "null")
        except ValueError:
            continue
        if isinstance(direct, dict) and "dir_info" in direct and str(direct.get("url", "")).startswith("file:"):
            return unquote(urlparse(direct["url"]).path), bool((direct.get("dir_info") or {}).get("editable"))
    return None


def for_this_install(text: str) -> str:
    """`text` with each `pip install 'ragbench[EXTRA]'` naming the folder ragbench was installed from, if any."""
    source = installed_from()
    if source is None:
        return text
    folder, editable = source
    return HINT.sub(lambda m: f"pip install {'-e ' if editable else ''}{shlex.quote(f'{folder}[{m.group(2)}]')}", text)
