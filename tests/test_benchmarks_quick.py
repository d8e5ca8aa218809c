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
    result = subprocess.run(
        [sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=580, cwd=tmp_path
    )
    assert result.returncode == 0, f"{script.name} --quick failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"


@pytest.mark.parametrize(
    "config,message", [(None, "no config.json"), ("{bad", "not JSON"), ('{"hidden_size": 8}', "no model_type")]
)
def test_random_init_refuses_a_folder_that_is_no_model_in_one_line(tmp_path, config, message):
    like, out = tmp_path / "like", tmp_path / "out"
    like.mkdir()
    if config is not None:
        (like / "config.json").write_text(config, encoding="utf-8")
    script = Path(__file__).parent.parent / "benchmarks" / "random_init.py"
    result = subprocess.run(
        [sys.executable, str(script), str(like), str(out)], capture_output=True, text=True, timeout=580
    )
    assert result.returncode == 1 and message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()
