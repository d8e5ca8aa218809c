"""An engine's own figures (`Engine.stats`: the hf engine's prompt tokens sent and computed) reach results.json's
`cost.engine` and the console's cost line."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ragbench.api import EngineError
from ragbench.api.engines import Engine, Request, Response
from ragbench.testing import Registry, cli, load_engine

FIGURES = {"prompt_tokens_sent": 900, "prompt_tokens_computed": 300, "prefix_cache_bytes": 10}


class FiguringEngine(Engine):
    """Answers every request with 450 prompt tokens and none generated; its figures are FIGURES (`figures=false`:
    none)."""

    kind = "figuring"
    starts_processes = False

    def __init__(self, model: str, figures: bool = True) -> None:
        super().__init__(model, figures=figures)
        self.figures = figures

    def generate(self, requests: list[Request]) -> list[Response | EngineError]:
        return [Response(texts=["Paris"], prompt_tokens=450, completion_tokens=0) for _ in requests]

    def stats(self) -> dict[str, int] | None:
        return dict(FIGURES) if self.figures else None


def run(tmp_path, *model_args: str) -> tuple[dict, str]:
    """A two-example run of `--model figuring:m`: (results.json's cost, what the command printed)."""
    registry = Registry.discover()
    registry.add_catalog({"engines": {"figuring": {"target": f"{__name__}:FiguringEngine"}}}, "tests")
    args = ["--tasks", "demo", "--system", "vanilla", "--model", "figuring:m", *model_args, "--limit", "2"]
    done = CliRunner().invoke(cli, [*args, "--output", str(tmp_path / "run"), "--no-progress"], obj=registry)
    assert done.exit_code == 0, done.output
    return json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["cost"], done.output


def test_the_engines_figures_are_the_costs_engine_section_and_the_cost_line_says_what_was_computed(tmp_path):
    cost, printed = run(tmp_path)
    assert cost["engine"] == FIGURES
    assert "tokens 900 in / 0 out (prompt tokens computed 300 of 900 sent)" in printed


def test_an_engine_without_figures_adds_nothing(tmp_path):
    assert load_engine("scripted:echo").stats() is None
    cost, printed = run(tmp_path, "--model-arg", "figures=false")
    assert "engine" not in cost and "tokens 900 in / 0 out" in printed and "computed" not in printed
