"""What `ragbench view` does once its options are parsed (ragbench/_cli/main.py only registers the command)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .._errors import ConfigError
from .catalog import RunCatalog
from .export import export
from .server import serve
from .site import Site

if TYPE_CHECKING:
    from .._registry import Registry


def view(paths: list[str], host: str, port: int, export_dir: str | None, registry: Registry) -> None:
    site = Site(RunCatalog(paths), registry)
    for run in site.runs:
        run.results  # noqa: B018 - read now: a results.json of a version this ragbench does not read is refused (NewerResults)
        run.tasks  # noqa: B018 - and a task named as a path (a run of an older ragbench), before a page or file is named by it
    if export_dir:
        files = export(site, export_dir)
        print(
            f"ragbench view: {len(site.runs)} run(s), {files} data files -> {export_dir}/index.html (opens from disk)",
            file=sys.stderr,
        )
        return
    try:
        serve(site, host, port)
    except OSError as exc:
        raise ConfigError(
            f"view: cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --port (0 picks a free one)"
        ) from exc
