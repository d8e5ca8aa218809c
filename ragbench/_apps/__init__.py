"""Applications a user already runs, evaluated as systems: the base of the systems that call one (`Application`:
`python`, `http` and the framework systems), the OpenTelemetry spans captured while it answers (in process, or
received over OTLP/HTTP), those spans read as the model calls, searches and tool calls of the example's trace
(OpenInference's attributes and OTel's GenAI conventions), and the record of each answer that `--resume` replays.
Its public face is `ragbench.api.apps` (docs/apps.md).
"""
