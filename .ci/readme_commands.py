"""Print the README's Quick-start commands, one per line, exactly as written (.ci/run runs them)."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def quick_start_commands(readme: str) -> list[str]:
    """The indented `pip install ...` command lines of the README's "## Quick start" section."""
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if re.match(r"^    pip install ", line)]


if __name__ == "__main__":
    commands = quick_start_commands(Path(sys.argv[1] if len(sys.argv) > 1 else "README.md").read_text(encoding="utf-8"))
    print("\n".join(commands))
