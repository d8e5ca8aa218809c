"""`--system dspy --system-arg module=my_app:rag`: the user's own RAG application as a DSPy module (a `dspy.Module`,
a `dspy.Predict`, a compiled program), called once per example through its own API (`acall` where the module has an
`aforward`; else the module itself, `__call__`, in a thread of its own; `sync=true`: always the latter)
(docs/apps.md).

`module` names the module (`module:attribute`, found on the Python path, the current folder first), or a class or
function of no arguments that makes it (called once, when the system is made: a module class of the user's is made
so). `inputs` maps its input fields to the request's fields (default `{question: question}`); the `history` field is
the example's conversation before its question as chat turns ({role, content}), which a module that takes a
`dspy.History` converts itself. The module's LM and retriever are its own (`dspy.configure` in the module that
defines it).

The answer is the prediction's field at `answer` (a dotted path; default `answer`); the documents the list at
`passages` (default: the first of `context` and `passages` the prediction holds; none: no documents), each a string
(its text), or a mapping with `text` (or `long_text`, as DSPy's ColBERTv2 gives) and optionally `id` (or `pid`),
`title`, `score`.

Its spans are those of openinference-instrumentation-dspy: each LM call a model call (priced by the price table),
each `dspy.Retrieve`'s search a search, each `dspy.Tool`'s call a tool call, in the example's trace.
"""

from __future__ import annotations

from typing import Any

from ragbench.api.apps import (
    Application,
    AppReply,
    AppRequest,
    Instrumentor,
    declared_inputs,
    framework,
    load_application,
    request_value,
)

PACKAGES = "dspy and openinference-instrumentation-dspy"
INSTRUMENTOR = Instrumentor("openinference.instrumentation.dspy:DSPyInstrumentor", "openinference-instrumentation-dspy")


class DSPyApp(Application):
    name = "dspy"
    instrumentors = (INSTRUMENTOR,)

    def __init__(
        self,
        module: str,
        inputs: Any = None,
        answer: str = "answer",
        passages: str = "",
        sync: bool = False,
        timeout: float = 300.0,
    ) -> None:
        super().__init__(timeout)
        dspy = framework("dspy", self.name, PACKAGES, self.instrumentors)
        from .reading import PredictionReading

        self.module, self.answer, self.passages = str(module), str(answer), str(passages)
        self.inputs = declared_inputs({"question": "question"} if inputs is None else inputs, self.name, "inputs")
        self._module: Any = load_application(self.module, self.name, "module", (dspy.Module,), "a DSPy Module")
        self.sync = bool(sync) or not hasattr(self._module, "aforward")
        self._reading = PredictionReading(self.module, self.answer, self.passages)

    async def call(self, request: AppRequest) -> AppReply:
        kwargs = {name: request_value(request, field) for name, field in self.inputs.items()}
        if self.sync:
            prediction = await self.in_thread(self._module, **kwargs)
        else:
            prediction = await self._module.acall(**kwargs)
        return self._reading.reply(prediction)
