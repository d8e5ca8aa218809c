"""Tool-call arguments of any JSON shape and depth: whatever a model writes is parsed, kept, written into its
sample and read back by every reader of the run (results.json's tool-call counts, --resume), never a
RecursionError. Arguments nested more than MAX_DEPTH levels (ragbench.api.data) are not read: the
call is kept with its text as written, its `error` says so, and it is counted as a malformed call, as
arguments that are not JSON are."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_plugin_faults import folder_samples

from ragbench.api import Prediction, System
from ragbench.api.data import MAX_DEPTH, nested_deeper
from ragbench.api.engines import TOOL_PARSERS, Request, Response, ToolCall, template_messages, with_tool_calls
from ragbench.testing import ScriptedLLM, run_eval

SEARCH = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
TEXT = st.text(st.characters(codec="utf-8"), max_size=8)  # brackets, quotes and backslashes among them
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
OPENERS = st.lists(st.sampled_from(["[", '{"k": ', '{"a": 1, "b": ', "[0, "]), min_size=1, max_size=3)
DEPTHS = st.integers(0, 2_000) | st.sampled_from([MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 100_000])
DEEP = "[" * 100_000 + "]" * 100_000  # 200 KB of valid JSON


def depth(value) -> int:
    """Levels of arrays and objects in a parsed JSON value."""
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


class Arguments:
    """The JSON text of `inner` inside `levels` arrays and objects (written as text: json.dumps would recurse)."""

    def __init__(self, inner, levels: int, openers: list[str]) -> None:
        opened = [openers[n % len(openers)] for n in range(levels)]
        closed = "".join("]" if opener.startswith("[") else "}" for opener in reversed(opened))
        self.text = "".join(opened) + json.dumps(inner, ensure_ascii=False) + closed
        self.depth = levels + depth(inner)

    @property
    def readable(self) -> bool:
        return self.depth <= MAX_DEPTH


ARGUMENTS = st.builds(Arguments, JSON_VALUES, DEPTHS, OPENERS)


def model_output(parser: str, name: str, arguments: Arguments, content: str) -> str:
    """What a model of the parser's family writes to call `name` with `arguments`."""
    if parser == "hermes":
        return f'{content}<tool_call>\n{{"name": {json.dumps(name)}, "arguments": {arguments.text}}}\n</tool_call>'
    return f'<|python_tag|>{{"name": {json.dumps(name)}, "parameters": {arguments.text}}}'


@settings(max_examples=150, deadline=None)
@given(arguments=ARGUMENTS, levels=st.integers(0, 150))
def test_the_depth_of_any_json_text_is_found_without_reading_it(arguments, levels):
    assert nested_deeper(arguments.text, levels) == (arguments.depth > levels)


@settings(max_examples=100, deadline=None)
@given(arguments=ARGUMENTS)
@example(arguments=Arguments(None, 100_000, ["["]))
def test_a_calls_arguments_of_any_depth_are_read_or_said_too_deep(arguments):
    call = ToolCall("call_1", "search", arguments.text)
    if arguments.readable:
        assert call.error is None and call.arguments == json.loads(arguments.text)
    else:
        assert (
            call.arguments is None and call.error == f"arguments are nested more than {MAX_DEPTH} levels deep: not read"
        )
    assert ToolCall.from_dict(call.to_dict()) == call


@settings(max_examples=100, deadline=None)
@given(
    parser=st.sampled_from(sorted(TOOL_PARSERS)),
    name=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8),
    arguments=ARGUMENTS,
    content=st.text(max_size=12).filter(lambda t: "<tool_call>" not in t),
)
def test_a_parser_keeps_a_call_of_any_depth_and_marks_one_too_deep(parser, name, arguments, content):
    _, calls = TOOL_PARSERS[parser](model_output(parser, name, arguments, content))
    [call] = calls
    assert call.name == name
    if arguments.readable:
        assert call.error is None and call.arguments == json.loads(arguments.text)
    else:
        assert call.raw_arguments == arguments.text and "nested more than" in call.error


def test_a_chat_template_gets_too_deep_arguments_as_their_text():
    turn = {"role": "assistant", "content": None, "tool_calls": [ToolCall("c", "search", DEEP).to_dict()]}
    [message] = template_messages([turn])
    assert message["tool_calls"][0]["function"]["arguments"] == DEEP


class Caller(System):
    """Asks the model once with a `search` tool; answers its text."""

    name = "caller"

    async def run(self, example, ctx):
        reply = await ctx.llm.chat([{"role": "user", "content": example.question}], tools=[SEARCH])
        return Prediction(example_id=example.id, answer=reply.text)


def assert_run_reaches_results_and_resumes(script, folder: Path, malformed: int, examples: int = 2) -> None:
    """A run whose model answers with `script` saves every example, scored, and results.json counts its calls;
    --resume reads the saved samples back to the same results."""
    for resume in (False, True):
        run = run_eval("demo", Caller, ScriptedLLM(script), limit=examples, output=folder, resume=resume)
        assert run.results["counts"]["demo"]["scored"] == examples and run.complete
        work = run.results["repeated_work"]["demo"]
        assert (work["tool_calls"], work["malformed_tool_calls"]) == (examples, malformed)
        assert (folder / "results.json").is_file()
    samples, unreadable = folder_samples(folder)
    assert len(samples) == examples and not unreadable


def test_arguments_nested_100000_deep_are_a_counted_malformed_call_and_the_run_finishes_and_resumes(tmp_path):
    def script(request):
        return {"tool_calls": [{"id": "call_1", "name": "search", "arguments": DEEP}]}

    assert_run_reaches_results_and_resumes(script, tmp_path / "run", malformed=2)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parser=st.sampled_from(sorted(TOOL_PARSERS)), arguments=ARGUMENTS)
@example(parser="hermes", arguments=Arguments(0, 100_000, ["["]))
def test_any_model_output_is_parsed_recorded_written_read_back_and_built_into_results(parser, arguments):
    """The round trip: model text -> the engine's parser -> the trace -> the sample line -> results.json, then
    --resume, whatever the arguments' shape and depth."""

    def script(request: Request):
        return with_tool_calls(
            request, Response(texts=[model_output(parser, "search", arguments, "")]), TOOL_PARSERS[parser], "hf"
        )

    with tempfile.TemporaryDirectory() as folder:
        assert_run_reaches_results_and_resumes(script, Path(folder) / "run", malformed=0 if arguments.readable else 2)
