"""The llatrieval system with scripted models: the selection windows, the token guard, the loop and its
early exit, the verification variants, the sub-question switch, batching across examples, statistics."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, TaskScoring
from ragbench.plugins.llatrieval.prompts import SELECT_SYSTEM, candidates_message
from ragbench.plugins.llatrieval.system import LLatrieval
from ragbench.plugins.llatrieval.tokens import gpt2_counter
from ragbench.tasks.selfrag.demo import Demo
from ragbench.testing import ScriptedLLM, make_context, run_eval, run_examples
from support.alce_helpers import ALCE_DATA
from support.helpers import run
from support.llatrieval_helpers import StepScript, TopicRetriever, always_yes, asqa_examples, asqa_task, make_docs

QUESTIONS = ["Who sang it?"]


async def select(system: LLatrieval, docs: list[Document], script=None):
    ctx = make_context(asqa_task(), ScriptedLLM(script or StepScript()))
    return await system.select(QUESTIONS, docs, ctx)


# --- progressive selection ---------------------------------------------------------------------------
async def test_fifty_candidates_take_three_windows_of_twenty():
    _, windows = await select(LLatrieval(), make_docs(50))
    assert [len(w["shown"]) for w in windows] == [20, 20, 20]
    assert windows[0]["shown"] == [str(1000 + i) for i in range(20)]
    assert windows[1]["shown"][5:] == [str(1000 + i) for i in range(20, 35)]


async def test_fifty_five_candidates_take_four_windows_the_last_of_ten():
    _, windows = await select(LLatrieval(), make_docs(55))
    assert [len(w["shown"]) for w in windows] == [20, 20, 20, 10]


async def test_each_window_shows_the_kept_documents_first():
    _, windows = await select(LLatrieval(), make_docs(50))
    for before, after in zip(windows, windows[1:]):
        assert after["shown"][:5] == before["selected"]


async def test_a_reply_without_ids_empties_the_selection_and_the_next_window_takes_twenty_new():
    replies = iter(["I cannot decide.", "Selected Documents: 1 2 3 4 5", "1 2 3 4 5"])
    selected, windows = await select(LLatrieval(), make_docs(50), script=lambda request: next(replies))
    assert [len(w["shown"]) for w in windows] == [20, 20, 15]
    assert windows[0]["selected"] == [] and len(selected) == 5


async def test_token_guard_defers_documents_to_the_next_window():
    docs = make_docs(50, words=60)
    selected, windows = await select(LLatrieval(token_limit=2500), docs)
    count = gpt2_counter()
    kept = [[]] + [w["selected"] for w in windows]
    shown_new = [doc for w, before in zip(windows, kept) for doc in w["shown"][len(before) :]]
    assert sorted(shown_new) == sorted(d.id for d in docs)  # every candidate browsed exactly once
    assert any(w.get("deferred") for w in windows)
    by_id = {d.id: d for d in docs}
    for w, before in zip(windows, kept):
        user = candidates_message(QUESTIONS, [by_id[i] for i in w["shown"]], 5, False)
        assert count(SELECT_SYSTEM + user) <= 2500 or len(w["shown"]) - len(before) == 1
        assert len(w["shown"]) < 20


async def test_a_document_too_long_for_the_guard_is_shown_once_instead_of_forever():
    # upstream re-queues the single remaining document and repeats the same window without end
    docs = make_docs(8, words=40)
    selected, windows = await select(LLatrieval(token_limit=10), docs, script=lambda request: "1 2 3 4 5")
    assert [len(w["shown"]) for w in windows] == [1, 2, 3, 4, 5, 6, 6, 6]
    assert [w["shown"][-1] for w in windows] == [d.id for d in docs]


# --- the loop ------------------------------------------------------------------------------------------
async def test_every_example_passing_verification_stops_after_one_iteration():
    examples = asqa_examples()
    predictions = await run_examples(LLatrieval(), examples, ScriptedLLM(StepScript()), asqa_task())
    assert all(p.error is None and p.answer == "An answer [1][2]." for p in predictions)
    for p in predictions:
        [iteration] = p.extras["llatrieval"]["iterations"]
        assert iteration["verification"]["passed"] and p.extras["llatrieval"]["passed_at"] == 1
        assert [s.name for s in p.trace].count("update_query") == 0
    stats = LLatrieval().statistics(predictions)
    assert stats["examples_per_iteration"] == {"1": 6, "2": 0, "3": 0, "4": 0}
    assert stats["passed_verification_per_iteration"] == {"1": 6, "2": 0, "3": 0} and stats["never_verified"] == 0


async def test_rejected_examples_run_every_iteration_and_the_last_is_not_verified():
    examples = asqa_examples()[:2]
    script = StepScript(verdict=lambda user, n: "Judgment: [NO]")
    predictions = await run_examples(
        LLatrieval(), examples, ScriptedLLM(script), asqa_task(), retriever=TopicRetriever()
    )
    for example, p in zip(examples, predictions):
        iterations = p.extras["llatrieval"]["iterations"]
        assert [it["verification"] is None for it in iterations] == [False, False, False, True]
        assert iterations[0]["query"] == example.question
        for before, after in zip(iterations, iterations[1:]):
            assert after["candidates"][:5] == before["selected"]  # old selection at the head
            assert after["query"].startswith("missing ") and after["new_candidates"] == 50
        steps = [s.name for s in p.trace if s.kind == "llm"]
        assert steps.count("verify") == 3 and steps.count("update_query") == 3 and steps.count("summarize") == 200
    stats = LLatrieval().statistics(predictions)
    assert stats["document_candidates_per_example"] == 200 and stats["never_verified"] == 2
    assert stats["llm_calls_per_example"]["select"] == 3 + 4 * 3


async def test_missing_info_query_shows_the_selected_passages_and_uses_the_chosen_prompt():
    script = StepScript(verdict=lambda user, n: "[NO]" if n == 1 else "[YES]")
    [p] = await run_examples(
        LLatrieval(query_style="question", max_iterations=2),
        asqa_examples()[:1],
        ScriptedLLM(script),
        asqa_task(),
        retriever=TopicRetriever(),
    )
    [update] = script.log["update_query"]
    system, user = (content for _, content in update.messages)
    assert "generate a new question" in system
    assert user.startswith("Question:\nWhich is the most rainy place on earth?\nAnswering Passages:\n1.Text about")
    assert p.extras["llatrieval"]["iterations"][1]["verification"] is None


async def test_hyde_first_query_searches_with_the_written_passage():
    script = StepScript()
    retriever = TopicRetriever()
    [p] = await run_examples(
        LLatrieval(first_query="hyde"), asqa_examples()[:1], ScriptedLLM(script), asqa_task(), retriever=retriever
    )
    assert p.extras["llatrieval"]["iterations"][0]["query"] == "A passage."
    assert retriever.queries == [["A passage."]]


async def test_score_verification_passes_at_the_threshold_and_counts_unparsed_scores():
    replies = {0: "[SCORE] 70", 1: "[SCORE]: 69.5", 2: "Score: high"}
    examples = asqa_examples()[:3]
    script = StepScript(verdict=lambda user, n: replies[[e.question in user for e in examples].index(True)])
    system = LLatrieval(verification="score", threshold=70, max_iterations=2)
    predictions = await run_examples(system, examples, ScriptedLLM(script), asqa_task())
    assert [len(p.extras["llatrieval"]["iterations"]) for p in predictions] == [1, 2, 2]
    assert "ScoreGPT" in script.log["verify"][0].messages[0][1]
    stats = system.statistics(predictions)
    assert stats["unparsed_scores"] == 1 and stats["passed_verification_per_iteration"] == {"1": 1}


async def test_gold_verification_passes_when_every_sub_question_is_answered_in_the_documents():
    example = asqa_examples()[0]
    answers = " ".join(pair["short_answers"][0] for pair in example.gold["qa_pairs"])
    found = [Document(id="1", title="t", text=f"It rains in {answers}.")]
    assert LLatrieval(verification="gold").__class__  # no LLM call needed for gold
    from ragbench.plugins.llatrieval.system import gold_supported

    assert gold_supported(example, found)
    assert not gold_supported(example, [Document(id="2", title="t", text="Nothing here.")])


def test_gold_verification_is_refused_before_the_run_on_a_task_without_short_gold(tmp_path):
    with pytest.raises(ConfigError, match="verification=gold needs short gold answers, which task alce_eli5"):
        run(
            tmp_path,
            tasks=["alce_eli5"],
            system="llatrieval",
            model="scripted:echo",
            system_args={"verification": "gold"},
            data={"alce_eli5": str(ALCE_DATA / "eli5_eval_bm25_top100.json")},
        )


async def test_gold_verification_makes_no_llm_call():
    script = StepScript()
    await run_examples(
        LLatrieval(verification="gold", max_iterations=2), asqa_examples()[:2], ScriptedLLM(script), asqa_task()
    )
    assert "verify" not in script.log


async def test_sub_questions_are_off_by_default_and_used_everywhere_when_on():
    example = asqa_examples()[0]
    sub = "\n".join(pair["question"] for pair in example.gold["qa_pairs"])
    for switch, expected in ((False, example.question), (True, sub)):
        script = StepScript()
        await run_examples(LLatrieval(use_sub_questions=switch), [example], ScriptedLLM(script), asqa_task())
        for step in ("summarize", "select", "verify", "answer"):
            user = script.log[step][0].messages[-1][1]
            assert expected in user and (switch or "(sense 1)" not in user), (switch, step)


# --- batching -----------------------------------------------------------------------------------------
async def test_calls_and_searches_of_all_examples_are_batched_whatever_their_iteration():
    examples = asqa_examples()
    rejected = {examples[0].question, examples[1].question}
    script = StepScript(verdict=lambda user, n: "[NO]" if any(q in user for q in rejected) else "[YES]")
    retriever = TopicRetriever()
    llm = ScriptedLLM(script, batch_size=512)
    predictions = await run_examples(LLatrieval(max_iterations=2), examples, llm, asqa_task(), retriever=retriever)
    # one engine batch per step: 6x50 summaries, 3 selection rounds, 6 verifications, then the 4 passed
    # examples' answers beside the 2 rejected ones' updates, 2x50 summaries, 4 selection rounds (5 old +
    # 50 new candidates) and their 2 answers
    assert llm.batch_sizes == [300, 6, 6, 6, 6, 4, 2, 100, 2, 2, 2, 2, 2]
    assert sum(llm.batch_sizes) == sum(len([s for s in p.trace if s.kind == "llm"]) for p in predictions)
    assert [len(queries) for queries in retriever.queries] == [6, 2]


# --- options, errors, records -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {"verification": "score"},
        {"threshold": 5},
        {"k": 20},
        {"doc_num": 60},
        {"verification": "vote"},
        {"query_style": "hyde"},
        {"max_iterations": 0},
    ],
)
def test_inconsistent_options_fail_with_a_config_error(options):
    with pytest.raises(ConfigError):
        LLatrieval(**options)


def test_missing_score_prompt_file_fails_with_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="score_prompt"):
        LLatrieval(verification="score", threshold=50, score_prompt=str(tmp_path / "missing.md"))


def test_outside_alce_it_answers_with_the_tasks_own_prompt_and_a_generic_demonstration(tmp_path):
    results = run(
        tmp_path,
        tasks=["demo"],
        system="llatrieval",
        model="scripted:echo",
        limit=2,
        system_args={"max_iterations": 2, "token_limit": 0},
    )
    sample = json.loads((tmp_path / "run" / "samples" / "demo.jsonl").read_text().splitlines()[0])
    assert results["complete"] and results["counts"]["demo"]["scored"] == 2
    verify = next(s for s in sample["trace"] if s["name"] == "verify")
    assert (
        "Question: Who wrote the novel Nineteen Eighty-Four?\nAnswer: George Orwell."
        in verify["request"]["messages"][0]["content"]
    )
    answer = next(s for s in sample["trace"] if s["name"] == "answer")
    # the demo task's own prompt (Self-RAG's baseline template; echo selected no document here)
    assert answer["request"]["messages"][-1]["content"].endswith(
        f"### Instruction:\n{sample['question']}\n\n### Response:\n"
    )


def test_a_whole_run_records_options_statistics_and_the_per_iteration_trace(tmp_path):
    data = str(asqa_task().path)
    results = run(
        tmp_path,
        tasks=["alce_asqa"],
        system="llatrieval",
        model="scripted:support.llatrieval_helpers:always_yes",
        data={"alce_asqa": data},
        task_args={"citations": False},
    )
    config = results["config"]["system_config"]["alce_asqa"]
    assert config["use_sub_questions"] is False and config["use_title"] is True and config["summary_style"] == "summary"
    stats = results["system_stats"]["alce_asqa"]
    assert stats["examples_per_iteration"]["1"] == 6 and stats["use_sub_questions"] is False
    assert stats["llm_calls_per_example"] == {
        "total": 11,
        "hyde_query": 0,
        "summarize": 8,
        "select": 1,
        "verify": 1,
        "update_query": 0,
        "answer": 1,
    }
    assert "retriever 'provided'" in stats["note"]
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## System statistics (llatrieval)" in report and "| examples_per_iteration | 1: 6, 2: 0" in report
    sample = json.loads((tmp_path / "run" / "samples" / "alce_asqa.jsonl").read_text().splitlines()[0])
    [iteration] = sample["prediction"]["extras"]["llatrieval"]["iterations"]
    assert set(iteration) >= {"query", "candidates", "windows", "selected", "verification"}
    assert iteration["verification"] == {"method": "judgment", "output": "[YES]", "passed": True}


@pytest.mark.parametrize(
    "task, data, summary, titles, demo",
    [
        (
            "alce_qampari",
            "qampari_eval_gtr_top100.json",
            "Summarize the following document",
            False,
            "Which books were written by Nevil Shute?",
        ),
        (
            "alce_eli5",
            "eli5_eval_bm25_top100.json",
            "Answer the given question(s) using the following document",
            False,
            "Why did New York City try to ban food donations to the poor?",
        ),
        (
            "alce_asqa",
            "asqa_eval_gtr_top100.json",
            "Summarize the following document",
            True,
            "the original artist of sound of silence, the album?",
        ),
    ],
)
def test_each_alce_task_gets_its_summary_style_titles_and_demonstration(tmp_path, task, data, summary, titles, demo):
    always_yes.log.clear()
    no_nli = {"citations": False, **({"claims_nli": False} if task == "alce_eli5" else {})}
    results = run(
        tmp_path,
        tasks=[task],
        system="llatrieval",
        model="scripted:support.llatrieval_helpers:always_yes",
        data={task: str(TEST_DATA / "alce" / data)},
        task_args=no_nli,
        limit=2,
    )
    assert results["counts"][task]["scored"] == 2
    assert always_yes.log["summarize"][0].messages[-1][1].startswith(summary)
    assert ("\nTitle:\n" in always_yes.log["select"][0].messages[-1][1]) == titles
    assert demo in always_yes.log["verify"][0].messages[0][1]


def test_a_custom_token_counter_is_used_and_a_bad_one_is_a_config_error():
    system = LLatrieval(token_counter="support.llatrieval_helpers:count_characters", token_limit=3000)
    shown, deferred = system.fit(QUESTIONS, [], make_docs(20))
    assert len(SELECT_SYSTEM) + len(candidates_message(QUESTIONS, shown, 5, False)) <= 3000 and deferred
    with pytest.raises(ConfigError, match="token_counter"):
        LLatrieval(token_counter="no_such_module:count")


class UndeclaredGoldDemo(Demo):
    """The demo task as a third party might write it: its gold kinds not declared (gold_fields None)."""

    name = "undeclared_gold_demo"
    scoring = TaskScoring(gold_fields=None)


class NoGoldDemo(UndeclaredGoldDemo):
    name = "no_gold_demo"

    def examples(self):
        for example in super().examples():
            example.gold = {}
            yield example


def test_gold_verification_runs_on_a_task_that_does_not_declare_its_gold(tmp_path):
    results = run_eval(
        UndeclaredGoldDemo,
        "llatrieval",
        "scripted:echo",
        limit=2,
        system_args={"verification": "gold", "max_iterations": 2, "token_limit": 0},
        output=tmp_path / "run",
        bootstrap_iters=10,
    ).results
    assert results["complete"] and results["counts"]["undeclared_gold_demo"]["scored"] == 2


def test_gold_verification_fails_an_example_without_short_gold_naming_it(tmp_path):
    results = run_eval(
        NoGoldDemo,
        "llatrieval",
        "scripted:echo",
        limit=1,
        system_args={"verification": "gold", "token_limit": 0},
        output=tmp_path / "run",
        bootstrap_iters=10,
    ).results
    assert results["counts"]["no_gold_demo"]["failed"] == 1
    error = json.loads((tmp_path / "run" / "samples" / "no_gold_demo.jsonl").read_text().splitlines()[0])["error"]
    assert error == (
        "ValueError: verification=gold needs short gold answers (qa_pairs or answers), which example "
        "9000 has not (use verification=judgment or score)"
    )
