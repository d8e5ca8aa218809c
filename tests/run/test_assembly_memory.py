"""A run's end holds a few numbers an example, never its samples: results.json is assembled from the samples file
read back one record at a time (ragbench._run.assemble), each key's values kept as a float64 column and each slice
value as a small-int code (ragbench._reports.results.score_columns), and the system's hooks read records from the
file."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest

from ragbench._config.run_config import RunConfig
from ragbench._records import saved_lines
from ragbench._run.assemble import ResultsSettings, run_results
from ragbench._run.plan.planning import plan
from ragbench._storage.rundir import RunDir
from ragbench.testing import installed_registry
from support.helpers import run


def copied_run(tmp_path: Path, n: int) -> tuple[RunConfig, RunDir]:
    """A run folder whose demo samples file holds `n` copies of a real run's samples (own ids, places, digests;
    pairs out of order), and the config that plans that run."""
    run(tmp_path, name="template", tasks=["demo"], system="closed_book", model="scripted:echo")
    template = (tmp_path / "template" / "samples" / "demo.jsonl").read_text(encoding="utf-8").splitlines()
    folder = tmp_path / "copied"
    (folder / "samples").mkdir(parents=True)
    with (folder / "samples" / "demo.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n):
            place = min(i ^ 1, n - 1)
            sample = json.loads(template[place % len(template)])
            digest = hashlib.sha256(str(place).encode()).hexdigest()
            out.write(json.dumps({**sample, "index": place, "id": f"q{place}", "example_sha256": digest}) + "\n")
    config = RunConfig.of(
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        output=str(folder),
        progress=False,
        bootstrap_iters=10,
    )
    return config, RunDir(folder)


def test_assembling_a_task_holds_a_few_bytes_an_example_not_its_samples(tmp_path):
    n = 2000  # every sample held as parsed JSON: about 4 kB each (8 MB)
    config, run_dir = copied_run(tmp_path, n)
    planned = plan(config.what, config.judging, installed_registry())
    tracemalloc.start()
    try:
        results = run_results(
            planned,
            run_dir,
            ResultsSettings.of(config, {}),
            checkpoints={},
            cost=dict,
            full_config={},
            versions={"ragbench": "test"},
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert results.counts["demo"]["records"] == n and results.counts["demo"]["scored"] == n
    resamples = 2 * 8 * config.judging.bootstrap_iters * n  # one chunk of the bootstrap's indices and values
    assert peak < resamples + 400 * n + 3_000_000, f"peak {peak / 1e6:.1f} MB for {n} examples"


def test_the_records_a_system_hook_gets_are_read_from_the_file_in_data_order(tmp_path):
    from ragbench._reports.system_hooks import SavedRecords

    config, run_dir = copied_run(tmp_path, 7)
    path = run_dir.finalize_samples("demo", saved_lines)
    records = SavedRecords(path)
    assert len(records) == 7 and [r.index for r in records] == list(range(7))
    assert records[-1].id == "q6" and [r.id for r in records[2:4]] == ["q2", "q3"]
    assert all(not r.has_text for r in records)


def test_a_systems_hooks_see_what_a_list_of_the_records_would_show(tmp_path):
    from ragbench._reports.system_hooks import system_hooks
    from ragbench.api import SampleRecord, System

    class Counting(System):
        name = "counting"

        def statistics(self, samples):
            return {
                "n": len(samples),
                "ids": [s.id for s in samples],
                "last": samples[-1].index,
                "again": sum(s.index for s in samples),
                "pairs": [s.id for s in samples[1:5:2]],
            }

        def format_adherence(self, samples):
            return [
                {
                    "format": "an answer",
                    "followed": sum(bool(s.answer) for s in samples),
                    "of": len(samples),
                    "fix": "-",
                }
            ]

    config, run_dir = copied_run(tmp_path, 9)
    path = run_dir.finalize_samples("demo", saved_lines)
    listed = [
        SampleRecord.from_dict(json.loads(line), has_text=False)
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    report, checks, figures = system_hooks(Counting(), path, complete_data=True)
    assert report is None
    assert figures == Counting().statistics(listed) and checks == Counting().format_adherence(listed)


def test_a_system_that_declares_no_recorded_extras_reports_nothing_and_reads_no_samples(tmp_path, monkeypatch):
    """A system without its own statistics or format_adherence and without `declares.recorded` reports neither: the
    samples file is never read (not even for its line offsets)."""
    from ragbench._reports import system_hooks as hooks
    from ragbench.api import System

    class Plain(System):
        name = "plain"

    config, run_dir = copied_run(tmp_path, 3)
    path = run_dir.finalize_samples("demo", saved_lines)
    monkeypatch.setattr(hooks, "line_offsets", lambda path: pytest.fail(f"{path} was read"))
    monkeypatch.setattr(hooks, "read_samples", lambda *args, **kwargs: pytest.fail("the samples were read"))
    assert hooks.system_hooks(Plain(), path, complete_data=True) == (None, None, None)
