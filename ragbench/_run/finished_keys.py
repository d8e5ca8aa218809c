"""What `--resume` need not run again: a task's saved samples that are finished, read as sample records."""

from __future__ import annotations

from .._records import read_samples
from .._storage.checkpoint import checkpoint_key
from .._storage.rundir import RunDir


def finished_keys(run_dir: RunDir, task: str) -> dict[str, str | None]:
    """Keys of the records that need no new attempt: scored examples and bad records (a failed example is tried
    again), each with what it was made from: the digest of its example (`example_sha256`; None in a sample of an
    older ragbench), or a bad record's error. Read without texts, one record at a time."""
    return {
        checkpoint_key(r.id, r.index): r.error if r.bad_record else r.example_sha256
        for r in read_samples(run_dir.sample_path(task), has_text=False)
        if r.error is None or r.bad_record
    }
