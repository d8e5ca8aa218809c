"""OmniEval tasks: the upstream test-set tree and flat file, the judge's skip lists, ids, turns with
their history, selection by task argument, and the RAG prompt (fixed and as-shipped)."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, RecordError
from ragbench.api.trace import trace_prompts
from ragbench.tasks.omnieval.task import OmniEvalAuto, OmniEvalHuman
from support.helpers import run, samples

TREE = TEST_DATA / "omnieval" / "gen_datas_test_final"
FLAT = TEST_DATA / "omnieval" / "human_flat.jsonl"


def examples(path=TREE, **args):
    return list(OmniEvalAuto(path, **args).examples())


def test_tree_ids_topics_tasks_and_skip_lists():
    items = examples()
    assert [e.id for e in items] == [
        "银行业务 - 零售银行 - 抽取类问答/0",
        "银行业务 - 零售银行 - 抽取类问答/1",
        "银行业务 - 零售银行 - 多轮对话能力/0/0",
        "银行业务 - 零售银行 - 多轮对话能力/0/1",
        "银行业务 - 零售银行 - 多轮对话能力/0/2",
        "银行业务 - 零售银行 - 多轮对话能力/1/0",
        "银行业务 - 零售银行 - 多轮对话能力/1/1",
        "投资 - 基金 - 对比类问答/0",
        "监管与合规 - 反洗钱（AML） - 抽取类问答/0",
    ]
    assert [e.index for e in items] == list(range(9))
    first = items[0]
    assert first.gold == {
        "answers": ["5年", "五年"],
        "relevant_node": ["node-a"],
        "relevant_passage": ["定期存款的最长期限是多少？的相关原文。"],
    }
    assert first.meta == {
        "topic": "银行业务 - 零售银行",
        "task": "抽取类问答",
        "cell": "银行业务 - 零售银行 - 抽取类问答",
        "upstream_id": 0,
    }


def test_conversation_turns_carry_previous_questions_only():
    turn = examples()[4]
    assert turn.question == "可以提前支取吗？"
    assert turn.meta["upstream_id"] == 0 and turn.meta["round"] == 2
    assert turn.extras["history"] == ["什么是大额存单？", "它的起存金额是多少？"]
    assert turn.gold["answers"] == ["可以转让，不可提前支取"]
    assert turn.turns == [
        {"role": "user", "content": "什么是大额存单？"},
        {"role": "user", "content": "它的起存金额是多少？"},
    ]


def test_selection_by_name_id_or_english():
    assert {e.meta["task"] for e in examples(tasks="多轮对话能力")} == {"多轮对话能力"}
    assert {e.meta["topic"] for e in examples(topics="5,Anti-Money Laundering (AML)")} == {
        "投资 - 基金",
        "监管与合规 - 反洗钱（AML）",
    }
    with pytest.raises(ConfigError, match="omnieval tasks: '结构化知识问答'"):
        OmniEvalAuto(TREE, tasks="结构化知识问答")


def test_flat_file_split_into_cells_with_per_cell_ids_and_bad_line_counted():
    items = list(OmniEvalHuman(FLAT).examples())
    good = [e for e in items if not isinstance(e, RecordError)]
    assert [e.id for e in good] == [
        "保险 - 人寿保险 - 抽取类问答/0",
        "保险 - 人寿保险 - 抽取类问答/1",
        "金融科技 - 区块链 - 长答案形式问答/0",
    ]
    errors = [e for e in items if isinstance(e, RecordError)]
    assert len(errors) == 1 and errors[0].line == 4


def test_no_data_is_a_config_error_naming_the_gated_dataset():
    with pytest.raises(ConfigError, match="RUC-NLPIR/OmniEval-AutoGen-Dataset is gated"):
        OmniEvalAuto().prepare()


def test_rag_prompt_fixed_by_default_and_literal_backslash_n_as_option():
    docs = [Document("n1", "T", "第一行标题\n正文一\n正文二"), Document("n2", "T", "只有一行")]
    item = examples()[0]
    fixed = OmniEvalAuto(TREE).prompting.build_prompt(item, docs)
    assert fixed == [
        {
            "role": "system",
            "content": "Doc 1(Title: 第一行标题) 正文一\n正文二\nDoc 2(Title: 只有一行) \n\n\n"
            " 这是搜索增强的场景，助手需要使用资料原文回答用户的问题，不要做任何修改、归纳或总结。\n\n",
        },
        {"role": "user", "content": "问题: 定期存款的最长期限是多少？\n答案:"},
    ]
    shipped = OmniEvalAuto(TREE, literal_newlines=True, chat=False).prompting.build_prompt(item, None)
    assert shipped == (
        "\\n\\n 这是搜索增强的场景，助手需要使用资料原文回答用户的问题，不要做任何修改、归纳或总结。\\n\\n"
        "\n\n问题: 定期存款的最长期限是多少？\\n答案:"
    )
    assert OmniEvalAuto(TREE, literal_newlines=True).config()["literal_newlines"] is True


def test_conversation_turn_prompt_lists_earlier_rounds():
    turn = examples()[3]
    user = OmniEvalAuto(TREE).prompting.build_prompt(turn, None)[1]["content"]
    assert user == "问题: \n历史对话问题记录：0-round: 什么是大额存单？\n当前问题：它的起存金额是多少？\n答案:"


def test_upstream_repr_conversation_query_is_the_list_of_questions_so_far():
    task = OmniEvalAuto(TREE, conversation_query="upstream_repr")
    turn = list(task.examples())[4]
    # upstream's retrieval path: the question is the Python list; the search query and the prompt hold its repr
    assert turn.question == "['什么是大额存单？', '它的起存金额是多少？', '可以提前支取吗？']"
    assert turn.extras["history"] == ["什么是大额存单？", "它的起存金额是多少？"]
    assert task.prompting.build_prompt(turn, None)[1]["content"] == f"问题: {turn.question}\n答案:"
    assert task.config()["conversation_query"] == "upstream_repr"
    assert examples()[4].question == "可以提前支取吗？"  # default: the turn's own question
    with pytest.raises(ConfigError, match="conversation_query"):
        OmniEvalAuto(TREE, conversation_query="joined")


def test_closed_book_run_scores_rule_metrics_per_turn(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "定期存款", "response": " 五年 "}, {"response": "不知道"}]))
    results = run(
        tmp_path,
        tasks=["omnieval_auto"],
        system="closed_book",
        model=f"scripted:{rules}",
        data={"omnieval_auto": str(TREE)},
        task_args={"tasks": "抽取类问答"},
    )
    rows = samples(tmp_path / "run", "omnieval_auto")
    assert len(rows) == 3
    assert rows[0]["prediction"]["answer"] == "五年"
    assert rows[0]["scores"]["em"] == 0.5  # one of two answer forms: EM averages over them
    assert trace_prompts(rows[0]["trace"])[0][0]["role"] == "system"
    assert results["counts"]["omnieval_auto"]["scored"] == 3
    # "不知道" vs "10元": jieba-joined "不 知道" / "10 元" share only the space - upstream F1 counts it (0.25)
    assert results["results"]["omnieval_auto"]["f1"] == pytest.approx((1 + 0.25 + 0.25) / 3)
    assert results["results"]["omnieval_auto"]["map"] is None  # closed book: no documents, not scorable
