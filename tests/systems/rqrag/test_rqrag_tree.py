"""`rqrag`'s tree given scripted model outputs (FlashRAG's RQ-RAG reads vLLM's raw outputs, which its parity
recording does not model, and RQ-RAG's 7B model cannot run here): the prompts of every call (FlashRAG's chat
format, the expansion tokens, the evidences), the breadth-first expansion to max_depth, the searches, the
sampling of query and answer calls, and the choice of the most confident answer. Not tested: RQ-RAG's model
itself (its special tokens' tokenisation, vLLM's decoding without spaces between special tokens)."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.plugins.rqrag.prompts import SYSTEM, evidences, first_prompt
from ragbench.plugins.rqrag.system import before_end
from support.flashrag_parity import CORPUS
from support.helpers import run, samples

TASK = "nq_open_flashrag"
KINDS = {
    "[S_Rewritten_Query]": "rewritten",
    "[S_Decomposed_Query]": "decomposed",
    "[S_Disambiguated_Query]": "disambiguated",
}
BEST = "[S_Decomposed_Query]"  # the answer after this path's evidences is the most confident


def script(request):
    """A query names its kind and depth; an answer is confident (0.9) on the BEST path, else 0.5."""
    prompt = request.prompt
    depth = prompt.count("[/R_Evidences]")
    for token, kind in KINDS.items():
        if prompt.endswith(token):
            return f" {kind} query at depth {depth}[EOS] ignored"
    assert prompt.endswith("[A_Response]"), prompt
    on_best = depth > 0 and max(KINDS, key=prompt.rfind) == BEST  # the path's last expansion
    chance = 0.9 if on_best else 0.5
    answer = f"answer {depth}{' best' if on_best else ''}"
    return {
        "response": f" {answer}[EOS]",
        "tokens": [" ", answer, "[EOS]"],
        "logprobs": [{" ": 0.0}, {answer: math.log(chance)}, {"[EOS]": 0.0}],
    }


def replay_file(folder, max_depth):
    lines = [
        {"query": f"{kind} query at depth {d}", "k": 2, "ids": [str(d), str(10 + d)], "scores": [2.0, 1.0]}
        for kind in KINDS.values()
        for d in range(max_depth)
    ]
    path = folder / "searches.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def run_tree(tmp_path, max_depth):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "who wrote it", "golden_answers": ["x"]}) + "\n")
    run(
        tmp_path,
        tasks=[TASK],
        system="rqrag",
        data={TASK: str(questions)},
        system_args={"max_depth": max_depth, "topk": 2},
        model="scripted:test_rqrag_tree:script",
        retriever="replay",
        metrics=[],
        retriever_args={"file": str(replay_file(tmp_path, max_depth)), "corpus": str(CORPUS)},
    )
    [sample] = samples(tmp_path / "run", TASK)
    assert sample["error"] is None, sample["error"]
    return sample


def passages(*ids):
    corpus = {d["id"]: d["contents"].split("\n", 1) for d in map(json.loads, CORPUS.read_text().splitlines())}
    return [(corpus[i][0], corpus[i][1]) for i in ids]


def test_one_level_tree_prompts_searches_and_choice(tmp_path):
    sample = run_tree(tmp_path, max_depth=1)
    root = first_prompt("who wrote it", "</s>")
    assert root == (f"<s><|system|>\n{SYSTEM}</s>\n<|user|>\nwho wrote it</s>\n<|assistant|>\n")
    llm = [step["request"] for step in sample["trace"] if step["kind"] == "llm"]
    searches = [step["request"]["query"] for step in sample["trace"] if step["kind"] == "retrieval"]
    # the output ends at the kept stop string "[EOS]", as vLLM ends it
    children = {
        token: root + token + f" {kind} query at depth 0[EOS]" + evidences(passages("0", "10"))
        for token, kind in KINDS.items()
    }
    # depth 0: the three query tokens and the answer; depth 1 (max_depth): each child answers only
    assert [r["prompt"] for r in llm] == [root + t for t in KINDS] + [root + "[A_Response]"] + [
        children[t] + "[A_Response]" for t in KINDS
    ]
    assert sorted(searches) == sorted(f"{kind} query at depth 0" for kind in KINDS.values())  # searched as they come
    queries, answers = llm[:3], llm[3:]
    assert all(
        r["sampling"]["temperature"] == 0
        and r["sampling"]["keep_stop"]
        and r["sampling"]["stop"] == ["[EOS]", "</s>"]
        and r["sampling"]["top_p"] == 0.9
        and not r["sampling"]["skip_special_tokens"]
        and r["sampling"]["max_tokens"] == 4096
        for r in queries
    )
    assert all(r["sampling"]["temperature"] == 1.0 and r["sampling"]["logprobs"] == 1 for r in answers)
    assert sample["prediction"]["answer"] == "answer 1 best"
    assert sample["prediction"]["raw_output"] == " answer 1 best[EOS]"


@pytest.mark.parametrize("max_depth,calls,searches", [(0, 1, 0), (2, 25, 12)])
def test_the_tree_grows_breadth_first_to_max_depth(tmp_path, max_depth, calls, searches):
    sample = run_tree(tmp_path, max_depth)
    kinds = [step["kind"] for step in sample["trace"]]
    assert kinds.count("llm") == calls and kinds.count("retrieval") == searches
    groups = [step["group"][0] for step in sample["trace"] if step["kind"] == "llm"]
    assert groups == sorted(groups)  # depth by depth
    assert sample["prediction"]["answer"] == ("answer 0" if max_depth == 0 else "answer 1 best")


@settings(max_examples=60)
@given(st.lists(st.sampled_from(["a", " b", "[EOS]", "\n", "<s> "]), max_size=12))
def test_the_text_before_the_last_end_marker(pieces):
    output = "".join(pieces)
    found = before_end(output)
    if "[EOS]" not in output:
        assert found is None
    else:
        assert found == output[: output.rindex("[EOS]")].rsplit("[EOS]", 1)[-1].strip()
