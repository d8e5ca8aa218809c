"""Every script in benchmarks/ keeps running: each in its quick mode (`--quick`, well under a minute).

Most scripts run in this test process, as `python SCRIPT --quick` would run them (`runpy` under the name
`__main__`, argv, sys.path[0] the script's folder, the working folder a temporary one): a fresh interpreter each
would import torch, transformers and sentence-transformers again (2 s, 1 s and 7 s of CPU), which this process
imports once (231 -> 178-187 s of CPU for this file run alone on a 2-vCPU VM, quick sizes included). What a script
changes of the process (environment, sys.path, the modules it imported from beside it, torch's thread count,
signal handlers, sys.stdout and sys.stderr, warning filters) is put back after it, and a thread it leaves running
fails its test. Scripts that change the process in ways that cannot be put back run in a fresh interpreter: those
in `OWN_PROCESS`, each with its reason. The processes a script starts itself (a fresh run whose peak memory it
measures, a raw side, a build child) stay processes where its quick mode checks what they measure (prefix_cache's
2 GB peak, compare_scale's bound); the quick modes of hf_engine, multihop_memory, storage_scale, dense_gpu,
retrieval_build, yaml_task_load and aggregation_memory run their commands and measurements in the script's own process (benchmarks/support/command_here.py), their fresh processes'
figures being the full modes' alone.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import paths

BENCHMARKS_DIR = paths.REPO / "benchmarks"
BENCHMARKS = sorted(BENCHMARKS_DIR.glob("*.py"))
OWN_PROCESS = {
    "lucene_bm25_speed": "a JVM (pyjnius): one per process, its classpath fixed at its start",
    "parallel_build": "starts and shuts down Ray in the process (ray.init)",
    "sharded_search": "starts and shuts down Ray in the process (ray.init)",
    "packed_shards": "starts and shuts down Ray in the process (ray.init)",
    "build_throughput": "starts and shuts down a Ray cluster of this machine (ray.cluster_utils.Cluster)",
    "shard_build_timeline": "starts and shuts down a Ray cluster of this machine (ray.cluster_utils.Cluster)",
    "store_corpus_build": "starts and shuts down a Ray cluster of this machine (ray.cluster_utils.Cluster)",
    "scale_projection": "starts and shuts down Ray in the process (ray.init, through sharded_search)",
    **dict.fromkeys(
        ("compare_scale", "prefix_cache"),
        "measures the peak RSS (ru_maxrss) of processes it starts, which a child of this large process starts at"
        " this process's (prefix_cache's 2 GB goal failed in-process)",
    ),
}


@contextlib.contextmanager
def process_state_restored(folder: Path) -> Iterator[None]:
    """Puts back what a script of `folder` run in this process changed of it (the modules it imported from its
    folder or tests/ dropped); fails where it left a thread running."""
    environ, path, modules = dict(os.environ), list(sys.path), set(sys.modules)
    handlers = {number: signal.getsignal(number) for number in signal.valid_signals()}
    streams = sys.stdout, sys.stderr
    threads = set(threading.enumerate())
    torch_threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else None
    try:
        with warnings.catch_warnings():
            yield
    finally:
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:] = path
        for name in set(sys.modules) - modules:  # a sibling script or a tests/ helper imported by name
            where = getattr(sys.modules[name], "__file__", None) or ""
            if where.startswith((str(folder), str(BENCHMARKS_DIR.parent / "tests"))):
                del sys.modules[name]
        for number, handler in handlers.items():
            if handler is not None and signal.getsignal(number) is not handler:
                signal.signal(number, handler)
        sys.stdout, sys.stderr = streams
        if torch_threads is not None:
            sys.modules["torch"].set_num_threads(torch_threads)
    left = [t.name for t in set(threading.enumerate()) - threads if t.is_alive() and not t.daemon]
    assert not left, f"threads left running: {left}"


def run_in_this_process(script: Path, cwd: Path) -> int:
    """`python SCRIPT --quick` in this process (its output goes where this test's goes): its exit status."""
    previous, argv = Path.cwd(), sys.argv
    try:
        os.chdir(cwd)
        sys.argv = [str(script), "--quick"]
        sys.path.insert(0, str(script.parent))
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit:
        if exit.code not in (None, 0):
            print(exit.code, file=sys.stderr)
            return exit.code if isinstance(exit.code, int) else 1
    finally:
        os.chdir(previous)
        sys.argv = argv
    return 0


@pytest.mark.benchmark
@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.stem)
def test_benchmark_runs_in_quick_mode(script, tmp_path):
    if script.stem in OWN_PROCESS:
        result = subprocess.run(
            [sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=580, cwd=tmp_path
        )
        status, output = result.returncode, result.stdout[-2000:] + "\n" + result.stderr[-3000:]
    else:
        with process_state_restored(script.parent):
            status, output = run_in_this_process(script, tmp_path), "(its output: the captured output below)"
    assert status == 0, f"{script.name} --quick failed:\n{output}"


def test_a_script_run_in_this_process_leaves_it_as_it_was(tmp_path, capsys):
    """A script that sets the environment, sys.path and torch's threads and imports a helper from beside it:
    after its run in this process, all of it is as before."""
    import torch

    helper = tmp_path / "bq_helper_module.py"
    helper.write_text("VALUE = 1\n", encoding="utf-8")
    script = tmp_path / "changes_the_process.py"
    script.write_text(
        "import os, sys, torch\nimport bq_helper_module\n"
        "os.environ['BQ_LEFT_BEHIND'] = '1'\nsys.path.append('/nowhere')\ntorch.set_num_threads(1)\n"
        "print('ran', bq_helper_module.VALUE)\n",
        encoding="utf-8",
    )
    threads = torch.get_num_threads()
    path = list(sys.path)
    with process_state_restored(tmp_path):
        status = run_in_this_process(script, tmp_path)
    assert (status, capsys.readouterr().out) == (0, "ran 1\n")
    assert "BQ_LEFT_BEHIND" not in os.environ and sys.path == path and "bq_helper_module" not in sys.modules
    assert torch.get_num_threads() == threads


@pytest.mark.parametrize(
    "config,message", [(None, "no config.json"), ("{bad", "not JSON"), ('{"hidden_size": 8}', "no model_type")]
)
def test_random_init_refuses_a_folder_that_is_no_model_in_one_line(tmp_path, config, message):
    like, out = tmp_path / "like", tmp_path / "out"
    like.mkdir()
    if config is not None:
        (like / "config.json").write_text(config, encoding="utf-8")
    script = paths.REPO / "benchmarks" / "random_init.py"
    result = subprocess.run(
        [sys.executable, str(script), str(like), str(out)], capture_output=True, text=True, timeout=580
    )
    assert result.returncode == 1 and message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()
