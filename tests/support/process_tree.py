"""Processes read from /proc (Linux): which processes a run started, and which of them are still alive."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HAVE_PROC = Path("/proc/self/stat").is_file()


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, start time) of every live process (zombies left out); the test is skipped where
    there is no /proc."""
    if not HAVE_PROC:
        pytest.skip("reads processes from /proc (Linux)")
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                found[int(entry)] = (int(fields[1]), fields[19])
    return found


def children(pid: int, table: dict[int, tuple[int, str]] | None = None) -> list[int]:
    table = processes() if table is None else table
    return [child for child, (parent, _) in table.items() if parent == pid]


def descendants(pid: int) -> dict[int, str]:
    """pid -> start time of every process below `pid` (a forkserver, its workers, a resource tracker)."""
    table, found, todo = processes(), {}, [pid]
    while todo:
        for child in children(todo.pop(), table):
            if child not in found:
                found[child] = table[child][1]
                todo.append(child)
    return found
