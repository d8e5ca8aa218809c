"""Builders for the tests of a run (tests/run, tests/storage) that go through the public faces only: engine plugins
for promises such as "a finished run's --resume loads no model" (`counted`: counts how often a run loads it) or
"a model without Self-RAG's reflection tokens is refused" (`tokenless`).

    registry = counting_registry()
    run_eval("demo", "vanilla", "counted:echo", registry=registry, output=...)
    assert LoadCounted.loads == 1
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ragbench.api import hookimpl
from ragbench.api.engines import Engine, Request, Response
from ragbench.testing import Registry


class LoadCounted(Engine):
    """Answers each prompt with its last line, as `scripted:echo` does; `loads` counts the engines made of it (what
    a run loads), reset by `counting_registry`."""

    kind = "counted"
    starts_processes = False
    loads: ClassVar[int] = 0

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        LoadCounted.loads += 1

    def generate(self, requests: list[Request]) -> list[Response]:
        return [Response(texts=[_last_line(request)]) for request in requests]


class Tokenless(LoadCounted):
    """`counted`, with no name of `Sampling.logprob_tokens` a single entry of its vocabulary."""

    kind = "tokenless"

    def missing_tokens(self, names: Sequence[str]) -> list[str]:
        return list(names)


def _last_line(request: Request) -> str:
    if request.prompt is not None:
        text = request.prompt
    else:
        last = (request.messages or ())[-1]
        text = str(last[1] if isinstance(last, tuple) else getattr(last, "content", ""))
    return text.rstrip("\n").rsplit("\n", 1)[-1]


class CountedEnginePlugin:
    @hookimpl
    def ragbench_catalog(self) -> dict[str, Any]:
        return {
            "engines": {
                "counted": {"target": f"{__name__}:LoadCounted"},
                "tokenless": {"target": f"{__name__}:Tokenless"},
            }
        }


def counting_registry() -> Registry:
    """The installed plugins and the engines above (`--model counted:NAME`, `tokenless:NAME`), the count of loads
    set to 0."""
    LoadCounted.loads = 0
    return Registry.discover(plugins=[("counted_engine", "ragbench-tests", CountedEnginePlugin())])
