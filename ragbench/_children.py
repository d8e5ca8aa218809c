"""The processes this process started that still run, read from /proc: what a command leaves running at its end
(ragbench._cli.process_end), what a local Ray that failed to start left (ragbench._ray_connect)."""

from __future__ import annotations

import os
from pathlib import Path


def running_children() -> list[int]:
    """This process's children that have not ended (zombies left out), from /proc; none where there is none."""
    children = []
    for entry in filter(str.isdigit, os.listdir("/proc") if os.path.isdir("/proc") else []):
        try:
            state, parent = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):  # ended meanwhile, or not a process
            continue
        if int(parent) == os.getpid() and state != "Z":
            children.append(int(entry))
    return children
