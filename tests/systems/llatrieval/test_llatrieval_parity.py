"""LLatrieval prompts, selection windows, token guard and id parsing against requests captured from
running BeastyZ/LLM-Verified-Retrieval@ac186ac (tests/data/parity/llatrieval_*.json, see their "how")."""

from __future__ import annotations

import hashlib

import pytest

from ragbench.api import Document
from ragbench.plugins.llatrieval import prompts
from ragbench.plugins.llatrieval.system import LLatrieval
from ragbench.plugins.llatrieval.tokens import gpt2_counter
from ragbench.tasks.alce.tasks import AlceAsqa, AlceEli5, AlceQampari
from ragbench.testing import ScriptedLLM, make_context
from support.llatrieval_helpers import asqa_examples, asqa_task, make_docs, parity, upstream_doc

PROMPTS = parity("prompts")
SELECTION = parity("selection")


def test_system_prompts_are_the_upstream_files_as_python_reads_them():
    captured = PROMPTS["system_prompts"]
    assert captured["select_no_up_to"] == prompts.SELECT_SYSTEM
    assert captured["filter_question_with_demo"] == prompts.JUDGE_SYSTEM
    assert prompts.UPDATE_SYSTEM["question"] == captured["update-using-missing-info-for-new-question"]
    assert prompts.UPDATE_SYSTEM["passage"] == captured["update-using-missing-info-for-new-passage"]
    assert "\r" not in prompts.SELECT_SYSTEM and not prompts.SELECT_SYSTEM.endswith("\n")


ALCE_TASKS = {"asqa": AlceAsqa, "qampari": AlceQampari, "eli5": AlceEli5}


@pytest.mark.parametrize("dataset", ["asqa", "qampari", "eli5"])
def test_verification_demonstration_matches_get_demonstration(dataset):
    assert prompts.demonstration(ALCE_TASKS[dataset]()) == PROMPTS["demonstrations"][dataset]


@pytest.mark.parametrize("case", PROMPTS["summaries"], ids=lambda c: c["style"])
def test_summary_request_and_stored_field_match_upstream(case):
    doc = Document(id=case["doc"]["id"], title=case["doc"]["title"], text=case["doc"]["text"])
    assert prompts.summary_messages(case["questions"], doc, case["style"]) == case["messages"]
    assert prompts.collapse_whitespace(case["reply"]) == case["stored"]
    assert case["kwargs"] == {"temperature": 0, "max_tokens": 150}


@pytest.mark.parametrize("case", PROMPTS["verification"], ids=lambda c: c["dataset"])
def test_verification_request_matches_filter_bad_question(case):
    item = case["item"]
    questions = [p["question"] for p in item["qa_pairs"]] if "qa_pairs" in item else [item["question"]]
    docs = [upstream_doc(d, case["field"]) for d in item["docs"]][:5]
    messages = prompts.chat(
        prompts.JUDGE_SYSTEM.replace("{Demo}", prompts.demonstration(ALCE_TASKS[case["dataset"]]())),
        prompts.candidates_message(questions, docs, 5, case["use_title"]),
    )
    assert messages == case["messages"]
    assert case["kwargs"] == {"temperature": 0}  # upstream sets no max_tokens for verification


@pytest.mark.parametrize("case", PROMPTS["update"], ids=lambda c: f"{c['prompt_file']}-{c['dataset']}")
def test_missing_info_query_request_matches_upstream(case):
    item = case["item"]
    text = "\n".join(p["question"] for p in item["qa_pairs"]) if "qa_pairs" in item else item["question"]
    docs = [upstream_doc(d, "summary_use_sub") for d in item["docs"]]
    style = "question" if case["prompt_file"].endswith("question") else "passage"
    assert prompts.chat(prompts.UPDATE_SYSTEM[style], prompts.update_message(text, docs)) == case["messages"]


def test_hyde_first_query_request_matches_bm25_sphere_retrieval():
    case = PROMPTS["hyde"]
    assert prompts.hyde_messages(case["question"]) == case["messages"] and case["kwargs"] == {"temperature": 0}


@pytest.mark.parametrize("case", PROMPTS["final_answer"]["prompts"], ids=lambda c: f"sub{c['use_sub_questions']}")
async def test_final_answer_prompt_matches_run_py(case):
    task = asqa_task()
    example = asqa_examples(task)[PROMPTS["final_answer"]["record_index"]]
    docs = [Document(id=d["id"], title=d["title"], text=d["text"]) for d in case["docs"]]
    system = LLatrieval(use_sub_questions=case["use_sub_questions"])
    ctx = make_context(task, ScriptedLLM("An answer."))
    prediction = await system.answer(example, ctx, docs, "\n".join(system.questions(example)), [])
    [request] = [step.request for step in ctx.trace]
    assert request["messages"][1]["content"] == case["prompt"]
    assert request["messages"][0]["content"] == (
        "You are a helpful assistant that answers the following questions with proper citations."
    )
    assert request["sampling"]["temperature"] == 0.0 and request["sampling"]["max_tokens"] == 300
    assert [d.id for d in prediction.docs] == [d.id for d in docs]


@pytest.mark.parametrize("case", SELECTION["parsing"], ids=lambda c: repr(c["reply"]))
def test_selection_ids_are_parsed_as_upstream(case):
    parsed = prompts.parse_selection(case["reply"], case["shown"], 5)
    if "error" in case:  # upstream's thread dies (IndexError); the out-of-list id is dropped here
        assert case["error"] == "IndexError" and parsed == [0]
    else:
        assert parsed == case["parsed"]


@pytest.mark.parametrize("case", SELECTION["windows"], ids=lambda c: c["name"])
async def test_progressive_selection_windows_match_upstream(case):
    new = make_docs(**case["new_docs"])[: case["doc_num"]]
    old = make_docs(**case["old_docs"]) if case["old_docs"] else []
    ctx = make_context(asqa_task(), ScriptedLLM([window["reply"] for window in case["windows"]]))
    system = LLatrieval(doc_num=case["doc_num"], summarize_top=max(50, case["doc_num"]), use_title=case["use_title"])
    selected, windows = await system.select(case["questions"], old + new, ctx)
    sent = [step.request for step in ctx.trace]
    assert [w["shown"] for w in windows] == [w["shown_ids"] for w in case["windows"]]
    for request, window in zip(sent, case["windows"]):
        user = request["messages"][1]["content"]
        assert hashlib.sha256(user.encode("utf-8")).hexdigest() == window["user_sha256"]
        assert gpt2_counter()(request["messages"][0]["content"] + user) == window["prompt_tokens_gpt2"]
        assert request["sampling"]["max_tokens"] == 64 and request["sampling"]["temperature"] == 0.0
    assert [d.id for d in selected] == case["selected_ids"]


def test_token_guard_keeps_every_selection_prompt_under_3900_gpt2_tokens():
    guarded = [c for c in SELECTION["windows"] if c["name"].startswith("token guard")]
    assert guarded and all(w["prompt_tokens_gpt2"] <= 3900 for c in guarded for w in c["windows"])
    assert all(len(w["shown_ids"]) < 20 for c in guarded for w in c["windows"])


def test_first_window_request_is_byte_identical():
    case = SELECTION["windows"][0]
    docs = make_docs(**case["new_docs"])
    user = prompts.candidates_message(case["questions"], docs[:20], 5, case["use_title"])
    assert user == case["windows"][0]["user"]
