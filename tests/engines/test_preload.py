"""The heavy imports of `hf` engines, started in the background by the run that needs them and joined by it
before its engines load (no thread kept by the module)."""

from __future__ import annotations

import sys


def slow_module(tmp_path, monkeypatch, name: str) -> None:
    """`hf` engines' heavy imports replaced by module `name`, not imported yet."""
    from ragbench import _engines as engines

    (tmp_path / f"{name}.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(engines._HEAVY_IMPORTS, "hf", (name,))
    monkeypatch.delitem(sys.modules, name, raising=False)


def test_heavy_imports_start_in_the_background_for_hf_models_only(tmp_path, monkeypatch):
    from ragbench import _engines as engines

    slow_module(tmp_path, monkeypatch, "ragbench_preload_probe")
    assert engines.preload("scripted:echo", None, "replay:x.jsonl") is None
    thread = engines.preload("scripted:echo", "hf:some/model")
    thread.join()
    assert thread.name == "ragbench-preload" and "ragbench_preload_probe" in sys.modules
    assert engines.preload("hf:some/model") is None  # imported already: nothing to start
    assert not any(isinstance(value, list) for name, value in vars(engines).items() if not name.startswith("__"))


def test_the_run_owns_its_preload_thread_and_joins_it_before_loading_engines(tmp_path, monkeypatch):
    from ragbench._run.evaluator import Evaluator, RunConfig
    from ragbench.testing import Registry

    slow_module(tmp_path, monkeypatch, "ragbench_preload_owned")
    evaluator = Evaluator(
        RunConfig.of(tasks=["demo"], model="scripted:echo", judges=["hf:some/judge"], output=str(tmp_path / "run")),
        Registry.discover(),
    )
    thread = evaluator.preloading
    assert thread.name == "ragbench-preload"
    evaluator.check_services()  # no metric of demo needs the judge: only the scripted engine loads
    assert not thread.is_alive() and "ragbench_preload_owned" in sys.modules
