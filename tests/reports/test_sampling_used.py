"""results.json `sampling`: how every kind of the system's LLM calls was decoded, as sent (defaults resolved), so
that runs of systems that name their sampling otherwise, or not at all, compare on it (`ragbench compare`)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._reports.compare.comparison import compare_runs, load_run
from ragbench._reports.compare.full_report import markdown
from ragbench._reports.compare.like_for_like import unlike
from ragbench._reports.results.file import read_results
from ragbench._reports.results.sampling_used import SERVER_DEFAULT, SamplingTally, effective, sampling_differences
from ragbench._reports.results.schema import Results
from ragbench.api import SampleRecord
from ragbench.api.engines import Request, Sampling
from support.helpers import cli_here, run


def llm_step(name: str | None, **sampling) -> dict:
    return {"kind": "llm", "name": name, "request": Request(prompt="q", sampling=Sampling.make(**sampling)).to_dict()}


def record(trace: list[dict], **line) -> SampleRecord:
    return SampleRecord.from_dict({"index": 0, "trace": trace, **line})


def results_of(sampling: dict) -> Results:
    return Results(
        results={}, details={}, counts={}, complete=True, cost={}, config={}, versions={}, sampling=sampling or None
    )


def test_a_run_records_the_sampling_each_kind_of_call_was_sent_with(tmp_path):
    """ircot names only its max_tokens; its calls were sent greedy all the same, as vanilla's, whose options name
    a temperature: compare finds the same temperature, and names the stop strings that differ."""
    for system in ("vanilla", "ircot"):
        run(tmp_path, system, tasks=["demo"], system=system, model="scripted:echo", limit=2)
    ircot = read_results(tmp_path / "ircot" / "results.json", "test")
    assert "temperature" not in ircot.config["system_config"]["demo"]
    [thought] = ircot.sampling["demo"]["thought"]
    assert thought["temperature"] == 0.0 and thought["top_p"] == 1.0 and thought["keep_stop"] is True
    assert thought["calls"] == sum(
        step["kind"] == "llm"
        for line in (tmp_path / "ircot" / "samples" / "demo.jsonl").read_text().splitlines()
        for step in json.loads(line)["trace"]
    )
    vanilla = read_results(tmp_path / "vanilla" / "results.json", "test")
    assert [setting["temperature"] for setting in vanilla.sampling["demo"]["answer"]] == [0.0]
    report = compare_runs(load_run(tmp_path / "vanilla"), load_run(tmp_path / "ircot"), iterations=50)
    keys = {difference.key for difference in report.differences}
    assert {"sampling.demo.stop", "sampling.demo.keep_stop"} <= keys
    assert not {"sampling.demo.temperature", "sampling.demo.top_p", "sampling.demo.max_tokens"} & keys
    assert (
        "Decoding as sent on demo, over every call (results.json `sampling`): temperature 0.0 vs 0.0; top_p 1.0 vs "
        in (markdown(report))
    )  # where ircot's settings say `(not set)`


def test_each_distinct_setting_of_a_kind_is_counted_and_failed_examples_are_not():
    tally = SamplingTally()
    tally.add(record([llm_step("answer", max_tokens=8), llm_step("answer", max_tokens=8), llm_step(None)]))
    tally.add(record([llm_step("answer", max_tokens=16, temperature=0.7)]))
    tally.add(record([llm_step("answer", max_tokens=99)], error="boom"))
    tally.add(record([{"kind": "llm", "name": "answer", "request": {"prompt": "q"}}]))  # no sampling recorded
    used = tally.sections()["sampling"]
    assert [(s["calls"], s["max_tokens"], s["temperature"]) for s in used["answer"]] == [(2, 8, 0.0), (1, 16, 0.7)]
    assert [s["max_tokens"] for s in used["generate"]] == [256]  # a call of no step name; the default resolved
    assert SamplingTally().sections() == {}


def test_a_setting_left_to_the_server_is_recorded_as_the_servers():
    sent = Request(prompt="q", sampling=Sampling.make(left_to_server=["temperature"])).to_dict()["sampling"]
    assert effective(sent)["temperature"] == SERVER_DEFAULT and effective(sent)["top_p"] == 1.0


def test_another_temperature_is_not_like_for_like_and_a_run_without_sampling_is_one_difference():
    greedy = results_of({"t": {"answer": [{"calls": 3, **effective(Sampling.make().__dict__)}]}})
    sampled = results_of({"t": {"verify": [{"calls": 3, **effective(Sampling.make(temperature=0.7).__dict__)}]}})
    assert unlike(greedy, sampled, "t") == ["temperature 0.0 vs 0.7"]
    assert [d.line() for d in sampling_differences("t", greedy, sampled)] == ["sampling.t.temperature: 0.0 vs 0.7"]
    assert unlike(greedy, greedy, "t") == [] and sampling_differences("t", greedy, greedy) == []
    [missing] = sampling_differences("t", greedy, results_of({}))
    assert missing.key == "sampling.t" and missing.b.startswith("not recorded")


def test_penalties_are_recorded_where_calls_set_them_and_another_penalty_is_a_difference():
    tally = SamplingTally()
    tally.add(record([llm_step("judge", frequency_penalty=0.5, presence_penalty=0), llm_step("answer")]))
    used = tally.sections()["sampling"]
    assert (used["judge"][0]["frequency_penalty"], used["judge"][0]["presence_penalty"]) == (0.5, 0)
    assert "frequency_penalty" not in used["answer"][0]  # a call that sets none records none (older runs alike)
    plain = results_of({"t": {"judge": [{"calls": 1, **effective(Sampling.make().__dict__)}]}})
    penalized = results_of({"t": used})
    assert [d.line() for d in sampling_differences("t", plain, penalized)] == [
        "sampling.t.frequency_penalty: null vs null (answer), 0.5 (judge)",
        "sampling.t.presence_penalty: null vs null (answer), 0 (judge)",
    ]


settings_sent = st.builds(
    dict,
    max_tokens=st.integers(1, 4),
    temperature=st.sampled_from([0.0, 0.7]),
    stop=st.lists(st.sampled_from([".", "\n"]), max_size=2),
)


@given(st.lists(st.lists(st.tuples(st.sampled_from(["a", "b", None]), settings_sent), max_size=4), max_size=5))
@settings(max_examples=60, deadline=None)
def test_every_call_of_a_scored_example_is_counted_once_under_its_kind_and_setting(examples):
    tally = SamplingTally()
    for calls in examples:
        tally.add(record([llm_step(name, **sent) for name, sent in calls]))
    used = tally.sections().get("sampling", {})
    made = [(name or "generate", sent) for calls in examples for name, sent in calls]
    assert sum(s["calls"] for kind in used.values() for s in kind) == len(made)
    for kind, sent in made:
        wanted = effective(Request(prompt="q", sampling=Sampling.make(**sent)).to_dict()["sampling"])
        [setting] = [s for s in used[kind] if {k: v for k, v in s.items() if k != "calls"} == wanted]
        assert setting["calls"] == sum(1 for k, s in made if k == kind and s == sent)


def test_flashrag_methods_record_the_flashrag_generator_they_copy_not_an_engine_they_did_not_run_on(tmp_path):
    """`flashrag_generator` (vllm: FlashRAG's vLLM generator's stop handling) on any engine: no `framework: vllm`
    recorded for a run on another engine; the old name is refused in one line naming the new one."""
    for system in ("ircot", "iter_retgen"):
        run(tmp_path, system, tasks=["demo"], system=system, model="scripted:echo", limit=1)
        options = read_results(tmp_path / system / "results.json", "test").config["system_config"]["demo"]
        assert options["flashrag_generator"] == "vllm" and "framework" not in options
    refused = cli_here(
        "--tasks", "demo", "--system", "ircot", "--model", "scripted:echo", "--system-arg", "framework=hf",
        "--output", str(tmp_path / "old"),
    )  # fmt: skip
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert "no option 'framework'" in refused.stderr and "flashrag_generator=<" in refused.stderr
