"""A shard build held mid-way in a process of its own (`held_build`): the first of two drivers building into one
--out, held while it holds the --out (its lock taken, its runner started, step 1 not begun) until the test lets it go
on, stops or kills it. Ordered by its pipes alone (it says when it holds the --out; a line on its stdin lets it go on):
no waiting on time."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCRIPT = """
import sys
from pathlib import Path
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._retrieval.sharding.build.runner import InProcess
from ragbench.testing import installed_registry

class Held(InProcess):
    def __init__(self):  # started once the --out is held, before step 1
        print("held", flush=True)
        sys.stdin.readline()

corpus, out, shards = sys.argv[1:]
build_shards(Path(corpus), out if "://" in out else Path(out), "lucene_bm25", {}, int(shards),
             registry=installed_registry(), runner=Held)
"""


@contextmanager
def held_build(corpus: Path, out: str | Path, shards: int) -> Iterator[subprocess.Popen[str]]:
    """A driver building `corpus` into `out` in `shards` lucene_bm25 shards in its own process, which holds the
    --out while the block runs; the block lets it go on (`process.communicate("\\n")`) or kills it. Killed after
    the block where it still runs."""
    command = [sys.executable, "-c", SCRIPT, str(corpus), str(out), str(shards)]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            if process.stdout.readline() != "held\n":  # it ended before it held the --out
                raise AssertionError(process.communicate()[1])
            yield process
        finally:
            if process.poll() is None:
                process.kill()
