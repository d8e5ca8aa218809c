"""Where things are, for a module anywhere under tests/: the repository, tests/ and the tests' data
(tests/data). A test module names these instead of paths made from its own place (`Path(__file__).parent`),
so that moving it to another family folder changes nothing it reads."""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
DATA = TESTS / "data"


def python_path(*folders: Path) -> str:
    """PYTHONPATH for a command a test starts: `folders` (a test module's own, for a command that imports the
    module), tests/ (the support package), then what the environment has already."""
    return os.pathsep.join([*map(str, folders), str(TESTS), *filter(None, [os.environ.get("PYTHONPATH")])])
