"""`--system python --system-arg callable=my_app:answer`: the user's own RAG application as a Python function, called
once per example (docs/apps.md).

The function is found on the Python path, the current folder first, and loaded before the run starts. Its parameters
say what it is given, by name: `question`, `history` (the conversation's turns before it), `images`, `messages` (the
history then the question, as chat messages), `id`, `meta`, `extras`, `task`, or `request` (all of it, an
`AppRequest`); a function of one parameter of another name gets the question, one with `**kwargs` every field. Each is
a copy: a function that changes what it is given changes only its copy. A sync function runs in a thread of its own
(the loop never waits on it), an async one on the run's loop.

It returns the answer as a string, or a mapping with `answer` and optionally `passages` (each a mapping with `id`,
`title`, `text` and optionally `score`, or a `Document`) and `citations`. The spans it makes are captured in process:
its own (`opentelemetry.trace.get_tracer(...)`) and those of the OpenInference instrumentors `instrument` names
(`instrument=openai`, `instrument=[openai,langchain]`, or `module:Class`).
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable
from typing import Any

from ragbench.api import ConfigError
from ragbench.api.apps import (
    Application,
    AppReply,
    AppRequest,
    Instrumentor,
    load_object,
    reply_from,
    request_value,
)

# OpenInference's instrumentors by the name `instrument=` takes: (their class, the package that brings it)
INSTRUMENTORS = {
    "openai": ("openinference.instrumentation.openai:OpenAIInstrumentor", "openinference-instrumentation-openai"),
    "anthropic": (
        "openinference.instrumentation.anthropic:AnthropicInstrumentor",
        "openinference-instrumentation-anthropic",
    ),
    "langchain": (
        "openinference.instrumentation.langchain:LangChainInstrumentor",
        "openinference-instrumentation-langchain",
    ),
    "llama_index": (
        "openinference.instrumentation.llama_index:LlamaIndexInstrumentor",
        "openinference-instrumentation-llama-index",
    ),
    "haystack": (
        "openinference.instrumentation.haystack:HaystackInstrumentor",
        "openinference-instrumentation-haystack",
    ),
    "dspy": ("openinference.instrumentation.dspy:DSPyInstrumentor", "openinference-instrumentation-dspy"),
    "litellm": ("openinference.instrumentation.litellm:LiteLLMInstrumentor", "openinference-instrumentation-litellm"),
}
FIELDS = ("question", "history", "images", "messages", "id", "meta", "extras", "task", "request")


def instrumentor(name: str) -> Instrumentor:
    """The instrumentor `instrument=` names: one of `INSTRUMENTORS`, or `module:Class` (its package named as its
    module's top package)."""
    if name in INSTRUMENTORS:
        return Instrumentor(*INSTRUMENTORS[name])
    if ":" in name:
        return Instrumentor(name, name.partition(":")[0].split(".")[0])
    raise ConfigError(
        f"system python: instrument={name}: name one of {', '.join(sorted(INSTRUMENTORS))}, or an instrumentor "
        "class as module:Class"
    )


class PythonApp(Application):
    name = "python"

    def __init__(self, callable: str, instrument: str | list[str] = "", timeout: float = 300.0) -> None:
        super().__init__(timeout)
        self.callable = str(callable)
        names = instrument if isinstance(instrument, list) else [part for part in str(instrument).split(",")]
        self.instrument = ",".join(name.strip() for name in names if name.strip())
        self._instrumentors = tuple(instrumentor(name) for name in self.instrument.split(",") if name)
        function = load_object(self.callable, "python", "callable")
        if not builtins.callable(function):  # `callable` is the option's name here
            raise ConfigError(f"system python: callable={self.callable} is a {type(function).__name__}, not a function")
        self._function: Callable[..., Any] = function
        self._given = given_fields(function, self.callable)

    def activated_instrumentors(self) -> tuple[Instrumentor, ...]:
        return self._instrumentors

    async def call(self, request: AppRequest) -> AppReply:
        args = () if self._given else (request.question,)  # one parameter of its own name: the question
        kwargs = {name: request if name == "request" else request_value(request, name) for name in self._given}
        if _is_async(self._function):
            value = self._function(*args, **kwargs)
        else:
            value = await self.in_thread(self._function, *args, **kwargs)
        if inspect.isawaitable(value):  # an async function, or a sync one that returned a coroutine
            value = await value
        return reply_from(value, f"python callable {self.callable}")


def _is_async(function: Callable[..., Any]) -> bool:
    """An async function, or an object whose `__call__` is one."""
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(type(function).__call__)


def given_fields(function: Callable[..., Any], target: str) -> tuple[str, ...]:
    """The request's fields the function takes, by its parameters' names (every field for `**kwargs`; none for a
    function of one parameter of another name, which is given the question); a parameter it needs that ragbench
    does not give is a ConfigError."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: given the question
        return ()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return FIELDS
    named = tuple(p.name for p in parameters if p.name in FIELDS)
    needed = [
        p.name
        for p in parameters
        if p.name not in FIELDS
        and p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if not named and len(needed) == 1 and needed[0] == parameters[0].name:
        return ()
    if needed:
        raise ConfigError(
            f"system python: callable={target} takes {', '.join(repr(name) for name in needed)}, which ragbench does "
            f"not give: name its parameters among {', '.join(FIELDS)} (or take **kwargs)"
        )
    return named
