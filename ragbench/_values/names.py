"""The one rule for a name that becomes part of a path, and the join that keeps a path in its folder.

A task's name is a file name (samples/<task>.jsonl, the viewer's export pages, plots), a system's a part of
a run folder's name; any name a YAML file or a plugin gives may be one. So every such name is checked where
it enters (a YAML task's `task:`, a plugin's catalogue, a task's slice fields, `--system`) against `NAME`:
letters, digits and `_ - .` only, so no separator, no `..`, nothing a shell or a URL must quote; never a
leading `.` (hidden, `.` and `..`) or `-` (read as an option); at most 64 characters, so that a file name
made of two names and a suffix stays under the 255 bytes a file system allows.

`inside` is the second line of defence where paths are built from names: each part must be one plain
file or folder name, so the result cannot leave its folder whatever reached it (a run folder an older
ragbench wrote, a name not checked by a bug).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .._errors import ConfigError, shown_value

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
NAME_RULE = "1 to 64 characters: ASCII letters, digits, '_', '-' and '.', not first '.' or '-'"


def name_problem(name: Any) -> str | None:
    """Why `name` cannot name a component whose name may become a file name (None when it can)."""
    if not isinstance(name, str):
        return f"a name must be a string, not {type(name).__name__} {shown_value(name, 60)}"
    if NAME.fullmatch(name) is None:
        return f"{shown_value(name, 80)!r} is not a name ragbench accepts (names become file names: {NAME_RULE})"
    return None


def checked_name(name: Any, what: str, where: str, fix: str = "rename it") -> str:
    """`name` when it keeps the rule, else a one-line ConfigError: `what` it names, `where` it came from."""
    problem = name_problem(name)
    if problem is None and isinstance(name, str):  # no problem: a string
        return name
    raise ConfigError(f"{what} (from {where}): {problem}; {fix}")


def part_problem(part: Any) -> str | None:
    """Why `part` is not one plain file or folder name (empty, `.`, `..`, a separator or a NUL in it), None
    when it is: what a name read back from a run folder an older ragbench wrote must be (it may break `NAME`)."""
    if isinstance(part, str) and part not in ("", ".", "..") and not any(c in part for c in "/\\\0"):
        return None
    return f"{shown_value(part, 80)!r} is not a plain file name (it would be a path, or none)"


def inside(folder: str | Path, *parts: str, what: str = "") -> Path:
    """`folder` / each of `parts`, every part one plain file or folder name (`part_problem`), so the path stays
    in `folder`; a part that would leave it is a ConfigError (`what`: the name's owner, for the message)."""
    problem = next(filter(None, map(part_problem, parts)), None)
    if problem is not None:
        raise ConfigError(
            f"{what + ': ' if what else ''}{problem} in {folder}: ragbench writes and reads only inside its folders"
        )
    return Path(folder).joinpath(*parts)
