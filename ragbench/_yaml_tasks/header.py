"""A YAML task file's header: what listing tasks and looking one up by name, alias or group need (its
name, description, aliases, groups and system defaults), read without parsing the rest of the file. The
full spec (fields, prompts, filters, data: ragbench._yaml_tasks.spec) is parsed and checked when
the task is loaded (`TaskHeader.spec`), and must declare what the header read.

The header is read from the file's top-level lines: the blocks of the header keys are kept where they are
and every other line is read as a comment, so a problem keeps its line number. A file whose top level is
not plain block style (a document marker, a flow mapping, a complex key) is parsed whole instead. Nothing
is cached here: each read reads the file as it is now (ragbench._yaml_tasks.discovery keeps the header of a file a
package ships while the file is unchanged)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .located import Section, read_yaml, read_yaml_text
from .spec import TaskSpec, header_fields, load_spec

HEADER_KEYS = ("task", "description", "aliases", "groups", "system_args")
HEADER_FIELDS = ("name", "description", "aliases", "groups", "system_args")  # TaskSpec's, from those keys
TOP_KEY = re.compile(r"([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]|$)")  # a top-level `key:` line of block style


@dataclass(frozen=True)
class TaskHeader:
    name: str
    path: Path
    source: str  # the file as named in messages
    description: str = ""
    aliases: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    system_args: dict[str, Any] = field(default_factory=dict)

    def spec(self) -> TaskSpec:
        """The file's full, checked spec; a ConfigError when the file no longer declares what its header
        said (it changed since it was listed)."""
        spec = load_spec(self.path, self.source)
        if any(getattr(spec, key) != getattr(self, key) for key in HEADER_FIELDS):
            raise Section(self.source, {}, "", 1).error(
                None,
                f"declares task '{spec.name}' (its name, aliases, "
                f"groups, description or system_args) otherwise than "
                f"when it was listed as '{self.name}': it changed "
                "meanwhile; run the command again",
            )
        return spec


def header_lines(text: str) -> str | None:
    """`text` with every top-level block but the header keys' turned into comment lines (line numbers kept);
    None when the top level is not plain block style (then the whole file is parsed)."""
    lines = text.split("\n")
    keep = False
    for number, line in enumerate(lines):
        if line[:1] in ("", " ", "\t", "#") or line.startswith("- ") or line == "-":  # inside the current block
            if not keep:
                lines[number] = "#"
            continue
        top = TOP_KEY.match(line)
        if top is None:
            return None
        keep = top.group(1) in HEADER_KEYS
        if not keep:
            lines[number] = "#"
    return "\n".join(lines)


def read_header(path: Path, source: str | None = None) -> TaskHeader | None:
    """The header of the YAML file at `path`; None when its top level declares no `task` (a YAML file that
    is not a task's). A problem in a header key is a SpecError naming the file and the line."""
    source = source or str(path)
    data = _header_data(path, source)
    return _header(data, path, source) if isinstance(data, dict) and "task" in data else None


def task_header(path: Path, source: str | None = None) -> TaskHeader:
    """The header of a file that must declare a task (`--tasks FILE.yaml`, a catalogue's file): one that does
    not is a SpecError, as its full read would make it."""
    source = source or str(path)
    return _header(_header_data(path, source), path, source)


def _header(data: Any, path: Path, source: str) -> TaskHeader:
    return TaskHeader(
        **header_fields(Section(source, data if data is not None else {}, "", 1)), path=path, source=source
    )


def _header_data(path: Path, source: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None  # read again by `read_yaml`, for its message
    kept = header_lines(text) if text is not None else None
    return read_yaml(path, source) if kept is None else read_yaml_text(kept, source)
