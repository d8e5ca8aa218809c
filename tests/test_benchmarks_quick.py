"""Every script in benchmarks/ keeps running: each in its quick mode (`--quick`, well under a minute)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).parent.parent / "benchmarks").glob("*.py"))


@pytest.mark.benchmark
@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.stem)
def test_benchmark_runs_in_quick_mode(script, tmp_path):
    result = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)
    assert result.returncode == 0, f"{script.name} --quick failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
