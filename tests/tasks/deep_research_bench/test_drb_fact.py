"""The `drb_fact` metric against DeepResearch Bench's released FACT scripts run unchanged on the same fake Gemini
judge and fake Jina Reader (tests/data/parity/drb_fact/drb_fact_calls.json, recorded by record_drb_fact.py there,
on sample data written for ragbench): the same judge requests and reader requests, the same counts per report and
stat.py's three numbers; offline, the same scores from a pages file; the scripts' reading of the judge's replies
(taken from their code: extract.py, deduplicate.py, validate.py, stat.py) on replies written for each branch."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_engine_openai import FakeServer

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError, Document, Example, Prediction
from ragbench.metrics.drb_fact import replies
from ragbench.metrics.drb_fact.metric import KEYS, LEFT_TO_SERVER, DeepResearchBenchFact
from ragbench.testing import ScriptedLLM, make_context
from support.drb_fake_gemini import camel, fake_gemini, gemini_url
from support.drb_fake_jina import FakeJina
from support.helpers import cli_here, samples, score_args

HERE = TEST_DATA / "parity" / "drb_fact"
RECORDING = json.loads((HERE / "drb_fact_calls.json").read_text(encoding="utf-8"))
PAGES = HERE / "pages.jsonl"
# the released scripts' FACT judge and thinking budget (utils/api.py's FACT_Model, AIClient.generate)
JUDGE = (
    "--judge",
    "gemini:gemini-2.5-flash-preview-05-20",
    "--judge-arg",
    "0.thinking_config={thinking_budget: 16000}",
)
STAT = {"total_citations": "fact_citations", "total_valid_citations": "fact_effective_citations"}

pytestmark = needs("google.genai")


def stat_counts(validated: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Each report's counts as stat.py counts them (the reports it leaves out: none)."""
    counts = {}
    for report in validated:
        if not report["citations"]:
            continue
        results = [
            verdict["result"]
            for page in report["citations_deduped"].values()
            if page["validate_error"] is None
            for verdict in page["validate_res"]
        ]
        counts[str(report["id"])] = {
            "fact_citations": sum(r != "unknown" for r in results),
            "fact_effective_citations": sum(r == "supported" for r in results),
        }
    return counts


def bodies(requests: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(camel({"path": r["path"], "body": r["body"]}), sort_keys=True) for r in requests]


def stage(body: str) -> int:
    """0 extraction, 1 de-duplication, 2 validation: the scripts ask stage by stage, ragbench report by report."""
    return 0 if "(fact, ref_idx, url)" in body else 2 if "<statements>" in body else 1


def in_stage_order(requests: list[dict[str, Any]]) -> list[str]:
    """ragbench's requests (examples one at a time, in order) put in the order the scripts' stages send them."""
    return sorted(bodies(requests), key=stage)


@pytest.fixture
def judge():
    fake = fake_gemini()
    yield fake
    fake.stop()


@pytest.fixture
def jina():
    fake = FakeJina(PAGES)
    yield fake
    fake.stop()


def score(tmp_path: Path, judge: FakeServer, *extra: str, env: dict[str, str] | None = None) -> tuple[Path, dict]:
    out = tmp_path / "run"
    env = {"GOOGLE_GEMINI_BASE_URL": gemini_url(judge), "GEMINI_API_KEY": "fake", **(env or {})}
    args = score_args("deep_research_bench", HERE / "data", HERE / "reports")
    one_at_a_time = ("--max-inflight", "1")  # each report's requests in order, as the scripts' one process
    done = cli_here(*args, "--metrics", "drb_fact", *JUDGE, *one_at_a_time, "--output", str(out), *extra, env=env)
    assert done.returncode == 0, done.stderr
    return out, json.loads((out / "results.json").read_text(encoding="utf-8"))


def assert_stat_numbers(out: Path, results: dict) -> None:
    scored = {line["id"]: line["scores"] for line in samples(out, "deep_research_bench")}
    expected = stat_counts(RECORDING["validated"])
    assert {i: s for i, s in scored.items() if s["fact_citations"] is not None} == expected
    assert set(scored) - set(expected) == {"3", "4"}  # no citations; extraction unread (not in extracted.jsonl)
    headline = results["results"]["deep_research_bench"]
    lines = dict(line.split(": ") for line in RECORDING["fact_result"].splitlines())
    for name, key in STAT.items():
        assert headline[key] == pytest.approx(float(lines[name]), rel=1e-12)
    assert headline["fact_citation_accuracy"] == pytest.approx(float(lines["valid_rate"]), rel=1e-12)


def test_requests_and_numbers_equal_the_released_scripts(tmp_path, judge, jina):
    reader = ("--metric-arg", "drb_fact.reader=jina", "--metric-arg", f"drb_fact.reader_url={jina.base_url}")
    wait = ("--metric-arg", "drb_fact.reader_retry_wait=0")
    out, results = score(tmp_path, judge, *reader, *wait, env={"JINA_API_KEY": "fake-jina-key"})
    # every request as the scripts send it, the page whose verdicts do not read asked three times, each a call
    assert in_stage_order(judge.requests) == bodies(RECORDING["requests"])
    assert jina.requests == RECORDING["reader_requests"]  # 3 tries of a 404
    assert_stat_numbers(out, results)
    counted = results["counted"]["deep_research_bench"]["drb_fact"]
    assert {name: entry["count"] for name, entry in counted.items()} == {
        "fact_extract_unparsed": 1,
        "fact_no_citations": 1,
        "fact_page_unread": 1,
        "fact_validate_unparsed": 1,
    }


def offline_pages(tmp_path: Path) -> Path:
    """The pages file, and the page the fake Reader answers 404 as a line naming that status."""
    pages = tmp_path / "pages.jsonl"
    missing = {"url": "https://mentors.example.org/review", "status": 404}
    pages.write_text(PAGES.read_text(encoding="utf-8") + json.dumps(missing) + "\n", encoding="utf-8")
    return pages


def test_a_pages_file_gives_the_same_requests_and_numbers_offline(tmp_path, judge):
    out, results = score(tmp_path, judge, "--metric-arg", f"drb_fact.pages={offline_pages(tmp_path)}")
    # the page the Reader could not fetch is shown as the script shows it, "Jina AI Reader Failed for URL: 404"
    assert in_stage_order(judge.requests) == bodies(RECORDING["requests"])
    assert_stat_numbers(out, results)


def test_a_page_in_neither_the_documents_nor_the_pages_file_is_a_failed_scrape_in_ragbenchs_words(tmp_path, judge):
    score(tmp_path, judge, "--metric-arg", f"drb_fact.pages={PAGES}")
    recorded, asked = bodies(RECORDING["requests"]), in_stage_order(judge.requests)
    words = "no page for https://mentors.example.org/review in the example's documents or the pages file"
    assert asked == [
        body.replace("Jina AI Reader Failed for https://mentors.example.org/review: 404", words) for body in recorded
    ]
    assert asked != recorded


def test_the_judged_numbers_carry_repeats_agreement_and_cost(tmp_path, judge):
    _, results = score(
        tmp_path, judge, "--metric-arg", f"drb_fact.pages={offline_pages(tmp_path)}", "--judge-repeats", "2"
    )
    agreement = results["judge_agreement"]["deep_research_bench"]["fact_citations"]
    assert agreement["measured"] and agreement["percent_agreement"] == 1.0
    cost = results["judge_cost"]["deep_research_bench"]["drb_fact"]
    assert cost["calls"] == 32 and cost["model"] == "gemini:gemini-2.5-flash-preview-05-20"
    # the repeat's tries are calls of their own, their bodies those of the first repeat
    assert len(judge.requests) == 32 and sorted(bodies(judge.requests)) == sorted(bodies(RECORDING["requests"]) * 2)


EN = Example(id="e", question="q", gold={}, meta={"language": "en"})
SUPPORTED = '[{"idx": 1, "result": "supported"}]'
TRIPLETS = (
    '```json\n[{"fact": "A [site](https://a.example/x) says so \\> 2 [1]", "ref_idx": "1", "url": "u1"},'
    ' {"fact": "B", "ref_idx": "1", "url": "u1"}, {"fact": "C", "ref_idx": "2", "url": "u2"}]\n```'
)


def scored(replies: list[str], docs: list[Document] | None = None, **options: Any) -> tuple[dict, Counter, list]:
    counted: Counter = Counter()
    judge = ScriptedLLM(replies)
    ctx = make_context("demo", judges=[judge])
    ctx.count = lambda name: counted.update([name])
    metric = DeepResearchBenchFact(**options)
    values = asyncio.run(metric.score(EN, Prediction("e", answer="A report.", docs=docs), ctx))
    return values, counted, [r.message_dicts()[0]["content"] for r in judge.requests]


@pytest.mark.parametrize(
    ("reply", "counter"),
    [
        ("", "fact_extract_unparsed"),
        ("No citations here.", "fact_extract_unparsed"),
        ("[]", "fact_no_citations"),
        ("{}", "fact_no_citations"),
        ('"x"', "fact_extract_unparsed"),
        ('{"fact": "A"}', "fact_extract_unparsed"),
        ('[{"fact": "A", "ref_idx": "1"}]', "fact_extract_unparsed"),
        ("7", "fact_extract_unparsed"),
    ],
)
def test_an_extraction_that_does_not_read_or_finds_nothing_leaves_the_report_out(reply, counter):
    values, counted, _ = scored([reply])
    assert values == dict.fromkeys(KEYS) and counted == Counter({counter: 1})


@pytest.mark.parametrize(
    ("dedup", "kept", "counter", "tries"),
    [
        ("[2]", ["B"], 0, 1),
        ("```json\n[1, 2]\n```", ["A [site] says so > 2 [1]", "B"], 0, 1),
        ("[0, 1]", None, 0, 1),
        ("[]", None, 0, 1),
        ("[1, 2, 2]", None, 0, 1),
        ("[-1]", ["A [site] says so > 2 [1]"], 0, 1),
        ("[3]", None, 1, 1),
        ("[1.0]", None, 1, 1),
        ("two", None, 1, 3),
    ],
)
def test_deduplication_keeps_what_the_script_keeps(dedup, kept, counter, tries):
    facts = kept or ["A [site] says so > 2 [1]", "B"]
    verdicts = json.dumps([{"idx": n, "result": "supported"} for n in range(1, len(facts) + 1)])
    values, counted, prompts = scored(
        [TRIPLETS, *[dedup] * tries, verdicts, '[{"idx": 1, "result": "unsupported"}]'], pages=str(PAGES)
    )
    assert len(prompts) == 3 + tries and len(set(prompts[1 : 1 + tries])) == 1
    assert prompts[1 + tries].split("<statements>\n")[1].split("\n</statements>")[0].split("\n") == [
        f"{n}. {fact}" for n, fact in enumerate(facts, start=1)
    ]
    assert values == {"fact_citations": len(facts) + 1, "fact_effective_citations": len(facts)}
    assert counted == Counter({"fact_dedup_unparsed": counter, "fact_page_unread": 2}) - Counter()


@pytest.mark.parametrize(
    ("verdicts", "values", "unparsed", "tries"),
    [
        ('[{"idx": 1, "result": "partially supported"}]', (1, 0), 0, 1),
        ('[{"idx": 1, "result": "unknown"}]', (0, 0), 0, 1),
        ('[{"idx": "1", "result": "supported"}]', (0, 0), 1, 3),
        ("[]", (0, 0), 1, 3),
        ('[{"idx": 1}]', (0, 0), 1, 1),  # validate.py's try reads it: stat.py stops on it, and it is not asked again
        ('{"idx": 1, "result": "supported"}', (0, 0), 1, 3),
    ],
)
def test_verdicts_are_counted_as_stat_counts_them(verdicts, values, unparsed, tries):
    one = '[{"fact": "C", "ref_idx": "2", "url": "u2"}]'
    got, counted, prompts = scored([one, *[verdicts] * tries])
    assert got == dict(zip(KEYS, values)) and counted["fact_validate_unparsed"] == unparsed
    assert len(prompts) == 1 + tries and len(set(prompts[1:])) == 1


def test_a_reply_read_on_a_later_try_is_the_one_used_each_try_a_new_call_with_the_same_body():
    one = '[{"fact": "C", "ref_idx": "2", "url": "u2"}, {"fact": "D", "ref_idx": "2", "url": "u2"}]'
    verdicts = '[{"idx": 1, "result": "supported"}]'
    counted: Counter = Counter()
    judge = ScriptedLLM([one, "two", "[2", "```json\n[2]\n```", "no", verdicts])
    ctx = make_context("demo", judges=[judge])
    ctx.count = lambda name: counted.update([name])
    values = asyncio.run(DeepResearchBenchFact().score(EN, Prediction("e", answer="r"), ctx))
    assert values == {"fact_citations": 1, "fact_effective_citations": 1}
    assert counted == Counter({"fact_page_unread": 1})
    dedups, validations = judge.requests[1:4], judge.requests[4:]
    for tries in (dedups, validations):
        assert len({json.dumps(r.message_dicts()) for r in tries}) == 1
        assert all(r.sampling.left_to_server == LEFT_TO_SERVER for r in tries)  # the seed is not sent
        assert len({r.cache_key("judge") for r in tries}) == len(tries)  # neither cache nor in-flight call shared
    assert "<statements>\n1. D\n</statements>" in validations[0].message_dicts()[0]["content"]


def script_asks_again(reply: str, statements: int | None) -> bool:
    """deduplicate.py's (statements None) and validate.py's try of a reply, as written there: whether it raises."""
    try:
        found = json.loads(reply.replace("```json", "").replace("```", ""))
        if statements is not None:
            for verdict in found:
                verdict["idx"] -= 1
            assert len(found) == statements
    except Exception:
        return True
    return False


def test_a_cited_page_is_read_from_the_examples_documents_before_the_pages_file():
    one = '[{"fact": "C", "ref_idx": "2", "url": "https://solar.example.cn/cost-report"}]'
    docs = [Document(id="d1", title="Shown", text="The passage.", url="https://solar.example.cn/cost-report")]
    _, counted, prompts = scored([one, SUPPORTED], docs=docs, pages=str(PAGES))
    assert "<reference>\nShown\n\n\n\nThe passage.\n</reference>" in prompts[1] and not counted["fact_page_unread"]
    _, _, prompts = scored([one, SUPPORTED], pages=str(PAGES))
    assert "<reference>\n光伏成本年报\n\n城市屋顶光伏十年成本回顾\n\n报告显示" in prompts[1]


def test_text_fragments_are_cut_from_links_only_when_asked():
    article = "[a](https://x.example/p#:~:text=snippet) said so."
    for strip, shown in ((False, article), (True, "[a](https://x.example/p) said so.")):
        judge = ScriptedLLM(["[]"])
        ctx = make_context("demo", judges=[judge])
        metric = DeepResearchBenchFact(strip_text_fragments=strip)
        asyncio.run(metric.score(EN, Prediction("e", answer=article), ctx))
        assert f"research report:\n{shown}\n\nPlease begin" in judge.requests[0].message_dicts()[0]["content"]


def test_bad_options_and_pages_files_are_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("JINA_API_KEY", raising=False)
    bad = tmp_path / "pages.jsonl"
    bad.write_text('{"url": "u", "title": "t"}\n["not a page"]\n', encoding="utf-8")
    status = tmp_path / "status.jsonl"
    status.write_text('{"url": "u", "status": 200}\n', encoding="utf-8")
    for options, message in (
        ({"pages": str(tmp_path / "none.jsonl")}, "pages file .*none.jsonl: cannot be read"),
        ({"pages": str(bad)}, r"pages.jsonl:2 is not a page"),
        ({"pages": str(status)}, r"status.jsonl:1 is not a page: .*HTTP status other than 200"),
        ({"reader": "jina"}, r"reader=jina needs \$JINA_API_KEY"),
        ({"reader": "web"}, "reader=web is not one of local, jina"),
        ({"language": "fr"}, "language=fr is not one of task, zh, en"),
    ):
        with pytest.raises(ConfigError, match=message):
            DeepResearchBenchFact(**options)
    ctx = make_context("demo", judges=[ScriptedLLM(["[]"])])
    untagged = Example(id="x", question="q", gold={}, meta={})
    with pytest.raises(ConfigError, match="drb_fact.language=en"):
        asyncio.run(DeepResearchBenchFact().score(untagged, Prediction("x", answer="r"), ctx))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["fact", "url", "idx", "result"]), inner)
    ),
    max_leaves=12,
)


@given(st.one_of(JSON.map(json.dumps), st.text(max_size=40)))
def test_any_reply_reads_as_a_result_or_none_and_never_raises(reply):
    cited = replies.extracted(reply)
    assert cited is None or all(isinstance(c.fact, str) and isinstance(c.url, str) for c in cited)
    kept = replies.kept_statements(reply, ["a", "b"])
    assert kept is None or set(kept) <= {"a", "b"}
    verdicts = replies.verdicts(reply, 2)
    assert verdicts is None or len(verdicts) == 2
    assert replies.dedup_asked_again(reply) == script_asks_again(reply, None)
    assert replies.verdicts_asked_again(reply, 2) == script_asks_again(reply, 2)
    assert verdicts is None or not replies.verdicts_asked_again(reply, 2)
