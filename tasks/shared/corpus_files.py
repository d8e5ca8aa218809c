"""What the benchmarks' corpus builders (tasks/<b>/corpus.py, kilt's knowledge_source.py) share: their source
and --out checked, a corpus line written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from ragbench.api import ConfigError
from ragbench.api.data import JsonObject


def corpus_source(source: str | Path, option: str, what: str) -> Path:
    """The corpus's source, the path `option` names; a ConfigError saying to pass `what` where nothing is there
    (what is there but no file is refused by its reader, given_files)."""
    source = Path(source)
    if not source.exists():
        raise ConfigError(f"{option} {source} not found; pass {what}")
    return source


def corpus_out(out: str | Path, overwrite: bool) -> Path:
    """The file --out names, refused where one is there and --overwrite is not given."""
    out = Path(out)
    if out.exists() and not overwrite:
        raise ConfigError(f"--out {out} exists; pass --overwrite or choose another file")
    return out


def write_line(handle: IO[bytes], record: JsonObject) -> None:
    """One JSON line of the corpus (UTF-8, not ASCII-escaped)."""
    handle.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
