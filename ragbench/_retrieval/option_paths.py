"""The file or folder a retriever's option names (`--retriever-arg index=...`), checked before anything is read,
and the JSON files read from such a folder (a model's config.json, an index's manifest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._errors import ConfigError


def option_path(label: str, value: str | None, option: str, hint: str, folder: bool = False) -> Path:
    """The existing file (a folder when `folder`) that `option=value` names, `~` expanded; else a ConfigError
    that `label` ("retriever NAME") raises, saying what to pass (`hint`)."""
    if not value:
        raise ConfigError(f"{label} needs --retriever-arg {option}={'DIR' if folder else 'PATH'} ({hint})")
    path = Path(value).expanduser()
    if not (path.is_dir() if folder else path.is_file()):
        raise ConfigError(f"{label}: {option} {value}: no such {'folder' if folder else 'file'}; pass {option}= {hint}")
    return path


def option_json(path: Path, label: str, fix: str) -> Any:
    """The JSON value of the file at `path`; a file that cannot be read or is not JSON is a ConfigError that `label`
    ("index FOLDER") raises, naming the file and the cause, and saying how to mend it (`fix`)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{label}: {path.name} unreadable ({exc}); {fix}") from None
