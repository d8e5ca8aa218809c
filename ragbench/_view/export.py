"""`ragbench view RUNS... --export DIR`: the same pages as a static site that opens from disk (file://)
or any static host. Browsers do not let a page opened from disk fetch files, so each page's data is
a script, data/<key>.js, calling RB.put(key, data); table rows are written in chunks and examples one
file each, so a page loads only what it shows."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

from .._errors import ConfigError
from .._storage.files import naming, open_file, write_problem
from .._storage.jsonl import strict_json
from .._values.names import inside
from .page_data import Page
from .pages import CHUNK
from .server import ASSETS, asset
from .site import Site


def _write(out: Path, key: str, data: Page) -> None:
    *folders, name = key.split("/")
    path = inside(out / "data", *folders, f"{name}.js")
    payload = strict_json(data)
    with naming(path):  # a full disk's error names no file of its own
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"RB.put({json.dumps(key)}, {payload});\n", encoding="utf-8")


def compare_pages(site: Site, task: str) -> Iterator[tuple[str, Page]]:
    """(key, data) of the Compare pages of a task with two or more runs: one with each run as the
    baseline, the others in their order, as the page's links ask, and the default key (the first
    run as baseline) with the first of them, computed once."""
    rids = [run.rid for run in site.with_task(task)]
    if len(rids) < 2:
        return
    for n, rid in enumerate(rids):
        key = f"compare/{task}/" + "~".join([rid, *(r for r in rids if r != rid)])
        data = site.data(key)
        yield key, data
        if n == 0:
            yield f"compare/{task}", data


def earlier_export(out: Path) -> bool:
    """Whether `out` holds what `export` wrote: its index.html is the viewer's static page, and no symbolic
    link stands where an export writes (its data/ is replaced whole, its other files rewritten)."""
    index = out / "index.html"
    written = [index, out / "data", out / "static", *(out / "static" / name for name in ASSETS)]
    if any(path.is_symlink() for path in written) or not index.is_file():
        return False
    with open_file(index) as handle:
        head = handle.read(4096)
    return b"<title>ragbench view</title>" in head and b'data-mode="static"' in head


def export(site: Site, out_dir: str) -> int:
    """Write the site; returns the number of data files."""
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()) and not earlier_export(out):
        raise ConfigError(
            f"view --export: {out} is a non-empty folder that is not an earlier export (no index.html "
            "the viewer wrote, or a symbolic link where an export writes); choose a new folder"
        )
    if any(out.resolve() == run.path.resolve() or run.path.resolve() in out.resolve().parents for run in site.runs):
        raise ConfigError(f"view --export: {out} is inside a run folder (the viewer writes nothing there)")
    unwritable = write_problem(out)
    if unwritable:
        raise ConfigError(f"view --export {out}: {unwritable}; choose a folder that can be written")
    shutil.rmtree(out / "data", ignore_errors=True)  # an earlier export's (a link inside is removed, not followed)
    with naming(out):
        (out / "static").mkdir(parents=True, exist_ok=True)
        for name in ASSETS:
            if name != "index.html":
                (out / "static" / name).write_bytes(asset(name))
        html = asset("index.html").decode().replace('data-mode="server"', 'data-mode="static"')
        (out / "index.html").write_text(html, encoding="utf-8")
    keys = ["runs"] + [f"run/{run.rid}" for run in site.runs]
    for run in site.runs:
        for task in run.tasks:
            total = len(run.samples(task).rows)
            keys += [f"rows/{run.rid}/{task}/{c}" for c in range(max(1, -(-total // CHUNK)))]
            keys += [f"example/{run.rid}/{task}/{n}" for n in range(total)]
    for key in keys:
        _write(out, key, site.data(key))
    written = len(keys)
    for task in sorted({task for run in site.runs for task in run.tasks}):
        for key, data in compare_pages(site, task):
            _write(out, key, data)
            written += 1
    return written
