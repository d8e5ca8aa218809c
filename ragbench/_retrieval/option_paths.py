"""The file or folder a retriever's option names (`--retriever-arg index=...`), checked before anything is read."""

from __future__ import annotations

from pathlib import Path

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
