"""`--system haystack --system-arg pipeline=my_app:pipeline`: the user's own RAG application as a Haystack pipeline,
run once per example through its own API: `run`, in a thread of its own (Haystack's in-memory components compute on
the event loop under `run_async`, stalling every other example); `sync=false`: `run_async`, on the loop, for a
pipeline of async components (docs/apps.md).

`pipeline` names the pipeline (`module:attribute`, found on the Python path, the current folder first), or a class
or function of no arguments that makes it (called once, when the system is made). `inputs` says which component's
which input gets which field of the request, as Haystack's own `run` takes its data: `{retriever: {query: question},
prompt_builder: {question: question}}`. By default every input of the pipeline that no component feeds and that is
named `query` or `question` gets the question, as does the `text` of a text embedder (`...TextEmbedder`); an input
the pipeline must be given that gets nothing is refused before the run, in one line naming them all.

The answer is the value at `answer`, a dotted path into the pipeline's outputs (`llm.replies.0`,
`answer_builder.answers.0`; a reply's or answer's text is taken); by default the first answer of the last answer
builder (a component with an `answers` output), else the first reply of the last generator (one with `replies`),
in the order the pipeline runs them. The documents are the list at `passages` (`retriever.documents`,
`ranker.documents`); by default those of that answer (an answer builder's answer holds the documents it was given),
else the `documents` output of the last component that has one. The components they are read from are asked for
their outputs (`include_outputs_from`). A document's id is its meta's `passage_id` key (default `id`), else its own
id; its title its meta's `passage_title` key (default `title`).

Its spans are those of openinference-instrumentation-haystack: each generator's call a model call (priced by the
price table: its model and usage as its `meta` output gives them), each retriever's search a search, in the
example's trace (a prompt builder's rendering is a step of its own, not a model call).
"""

from __future__ import annotations

from typing import Any

from ragbench.api.apps import Application, AppReply, AppRequest, Instrumentor, framework, load_application

PACKAGES = "haystack-ai and openinference-instrumentation-haystack"
INSTRUMENTOR = Instrumentor(
    "openinference.instrumentation.haystack:HaystackInstrumentor", "openinference-instrumentation-haystack"
)


class HaystackApp(Application):
    name = "haystack"
    instrumentors = (INSTRUMENTOR,)

    def __init__(
        self,
        pipeline: str,
        inputs: Any = None,
        answer: str = "",
        passages: str = "",
        passage_id: str = "id",
        passage_title: str = "title",
        sync: bool = True,
        timeout: float = 300.0,
    ) -> None:
        super().__init__(timeout)
        framework("haystack", self.name, PACKAGES, self.instrumentors)
        from haystack.core.pipeline.base import PipelineBase

        from .reading import PipelineReading, pipeline_inputs

        self.pipeline = str(pipeline)
        self.passage_id, self.passage_title = str(passage_id), str(passage_title)
        self._pipeline: Any = load_application(
            self.pipeline, self.name, "pipeline", (PipelineBase,), "a Haystack Pipeline"
        )
        self._inputs = pipeline_inputs(self._pipeline, inputs)
        self.inputs = {component: dict(given) for component, given in self._inputs.items()}
        self._reading = PipelineReading(
            self._pipeline, self.pipeline, answer, passages, self.passage_id, self.passage_title
        )
        self.answer, self.passages = self._reading.answer, self._reading.passages  # as found: recorded
        self.sync = bool(sync) or not hasattr(self._pipeline, "run_async")

    async def call(self, request: AppRequest) -> AppReply:
        from .reading import pipeline_data

        data = pipeline_data(request, self._inputs)
        wanted = self._reading.components
        from haystack.core.errors import PipelineRuntimeError

        try:
            if self.sync:
                outputs = await self.in_thread(self._pipeline.run, data, wanted)
            else:
                outputs = await self._pipeline.run_async(data, wanted)
        except PipelineRuntimeError as exc:
            raise component_failed(exc) from exc
        return self._reading.reply(outputs)


class ComponentFailed(RuntimeError):
    """A component of the pipeline failed: which one, and what it raised, in one line (Haystack's own error takes
    four; it stays chained, with its traceback)."""


def component_failed(error: Any) -> ComponentFailed:
    cause = error.__cause__
    what = f"{type(cause).__name__}: {cause}" if cause is not None else " ".join(str(error).split())
    kind = getattr(error.component_type, "__name__", "a component")
    return ComponentFailed(f"component {error.component_name} ({kind}) failed: {what}")
