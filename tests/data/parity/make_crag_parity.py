"""Runs the two upstream CRAG evaluators with a stubbed OpenAI client and saves fixtures.

Run with the era's stack: /work/scratch/crag/venv4/bin/python make_parity.py
(transformers 4.41.2, tokenizers 0.19.1, openai 1.13.3). cwd must be the evaluator's repo
(its module loads tokenizer/ at import).
"""
import importlib.util, json, os, sys, subprocess
import httpx, openai

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = "/work/main/tests/data/parity"
LONG_GOLD = ("the treaty was signed by the representatives of france, germany, italy, belgium, the netherlands "
             "and luxembourg in rome on the twenty-fifth of march nineteen fifty-seven, establishing the european "
             "economic community and the european atomic energy community, which later became part of the union")
FILLER = "word " * 80

FAIL = "__connection_error__"   # openai.APIConnectionError on every attempt (upstream retries 10 times)
ERROR = "__other_error__"        # any other exception: upstream stops retrying at once
# judge: reply for the starter kit (one call per row); judge_repo: {ground truth: reply} for the CRAG repo
ROWS = [
 {"id": "exact_case", "query": "capital of france?", "answer": "Paris", "alt_ans": [], "prediction": " PARIS "},
 {"id": "exact_trailing_space_gold", "query": "q2", "answer": "  Blue Whale ", "alt_ans": [], "prediction": "blue whale"},
 {"id": "exact_non_ascii", "query": "who?", "answer": "élodie yung", "alt_ans": [], "prediction": "Élodie Yung"},
 {"id": "missing_plain", "query": "q4", "answer": "42", "alt_ans": [], "prediction": "I don't know"},
 {"id": "missing_prefix", "query": "q5", "answer": "42", "alt_ans": [], "prediction": "I don't know, but maybe 42."},
 {"id": "missing_after_correct", "query": "q6", "answer": "42", "alt_ans": [], "prediction": "42. I DON'T KNOW for sure though."},
 {"id": "missing_gold_idk", "query": "q7", "answer": "i don't know", "alt_ans": [], "prediction": "i don't know"},
 {"id": "not_missing_curly", "query": "q8", "answer": "42", "alt_ans": [], "prediction": "I don\u2019t know",
  "judge": "{\"Accuracy\": \"False\"}", "judge_repo": {"42": "{\"score\": 0, \"explanation\": \"not sure\"}"}},
 {"id": "not_missing_do_not", "query": "q9", "answer": "42", "alt_ans": [], "prediction": "I do not know.",
  "judge": "{\"Accuracy\": \"False\"}", "judge_repo": {"42": "{\"score\": 0, \"explanation\": \"x\"}"}},
 {"id": "not_missing_dont", "query": "q10", "answer": "42", "alt_ans": [], "prediction": "i dont know",
  "judge": "{\"accuracy\": false}", "judge_repo": {"42": "{\"score\": 0}"}},
 {"id": "not_missing_apology", "query": "q11", "answer": "42", "alt_ans": [], "prediction": "I'm sorry, I couldn't find that.",
  "judge": "{\"Accuracy\": \"False\"}", "judge_repo": {"42": "{\"score\": 0, \"explanation\": \"no\"}"}},
 {"id": "empty_prediction", "query": "q12", "answer": "42", "alt_ans": [], "prediction": "",
  "judge": "{\"Accuracy\": \"False\"}", "judge_repo": {"42": "{\"score\": 0, \"explanation\": \"empty\"}"}},
 {"id": "whitespace_prediction", "query": "q13", "answer": "42", "alt_ans": [], "prediction": "  \n ",
  "judge": "{\"Accuracy\": \"True\"}", "judge_repo": {"42": "{\"score\": 1, \"explanation\": \"odd judge\"}"}},
 {"id": "idk_beyond_75_tokens", "query": "q14", "answer": "42", "alt_ans": [], "prediction": FILLER + "I don't know",
  "judge": "{\"Accuracy\": \"False\"}", "judge_repo": {"42": "{\"score\": 0, \"explanation\": \"x\"}"}},
 {"id": "long_exact_gold_truncated", "query": "what happened in rome?", "answer": LONG_GOLD, "alt_ans": [], "prediction": LONG_GOLD,
  "judge": "{\"Accuracy\": \"True\"}", "judge_repo": {LONG_GOLD: "{\"score\": 1, \"explanation\": \"same\"}"}},
 {"id": "invalid_exact", "query": "when did x win 3 oscars?", "answer": "invalid question", "alt_ans": [], "prediction": "invalid question"},
 {"id": "invalid_case", "query": "q17", "answer": "invalid question", "alt_ans": [], "prediction": "Invalid Question."[:-1]},
 {"id": "invalid_sentence", "query": "q18", "answer": "invalid question", "alt_ans": [],
  "prediction": "This is an invalid question because x never won an oscar.", "judge": "{\"Accuracy\": \"False\"}"},
 {"id": "invalid_vs_real_answer", "query": "q19", "answer": "invalid question", "alt_ans": [], "prediction": "2019",
  "judge": "{\"Accuracy\": \"False\"}"},
 {"id": "correct_answer_containing_invalid", "query": "what does the error say?", "answer": "password", "alt_ans": [],
  "prediction": "the password is invalid", "judge": "{\"Accuracy\": \"True\"}"},
 {"id": "paraphrase_true_string", "query": "how many seconds is 3 minutes 15 seconds?", "answer": "195 seconds", "alt_ans": [],
  "prediction": "3 minutes 15 seconds is 195 seconds.", "judge": "{\"Accuracy\": \"True\"}",
  "judge_repo": {"195 seconds": "{\"score\": 1, \"explanation\": \"The prediction matches.\"}"}},
 {"id": "paraphrase_true_bool", "query": "q22", "answer": "tom holland", "alt_ans": [], "prediction": "It is Tom Holland.",
  "judge": "{\"accuracy\": true}", "judge_repo": {"tom holland": "{\"explanation\": \"ok\", \"score\": 1}"}},
 {"id": "judge_false_string", "query": "q23", "answer": "1962", "alt_ans": [], "prediction": "1959",
  "judge": "{\"Accuracy\": \"False\"}", "judge_repo": {"1962": "{\"score\": 0, \"explanation\": \"wrong\"}"}},
 {"id": "judge_python_style", "query": "q24", "answer": "a", "alt_ans": [], "prediction": "the answer is a",
  "judge": "Accuracy: True", "judge_repo": {"a": "score: 1"}},
 {"id": "judge_prose_around_json", "query": "q25", "answer": "b", "alt_ans": [], "prediction": "b, clearly",
  "judge": "Sure! {\"Accuracy\": \"True\"}", "judge_repo": {"b": "Sure! {\"score\": 1, \"explanation\": \"fine\"} done"}},
 {"id": "judge_last_block_wins", "query": "q26", "answer": "c", "alt_ans": [], "prediction": "c it is",
  "judge": "{\"Accuracy\": \"True\"} {\"Accuracy\": \"False\"}",
  "judge_repo": {"c": "{\"score\": 1, \"explanation\": \"first\"}\nWait, no! {\"score\": 0, \"explanation\": \"second\"}"}},
 {"id": "judge_bad_score", "query": "q27", "answer": "d", "alt_ans": [], "prediction": "d!",
  "judge": "{\"accuracy\": 1}", "judge_repo": {"d": "{\"score\": 2, \"explanation\": \"?\"}"}},
 {"id": "judge_score_as_string", "query": "q28", "answer": "e", "alt_ans": [], "prediction": "e?",
  "judge": "{\"Accuracy\": \"TRUE\"}", "judge_repo": {"e": "{\"score\": \"1\"}"}},
 {"id": "judge_empty_reply", "query": "q29", "answer": "f", "alt_ans": [], "prediction": "f.",
  "judge": "", "judge_repo": {"f": ""}},
 {"id": "judge_connection_failure", "query": "q30", "answer": "g", "alt_ans": [], "prediction": "g g",
  "judge": FAIL, "judge_repo": {"g": FAIL}},
 {"id": "judge_other_error", "query": "q31", "answer": "h", "alt_ans": [], "prediction": "h h",
  "judge": ERROR, "judge_repo": {"h": ERROR}},
 {"id": "judge_nested_braces", "query": "q32", "answer": "i", "alt_ans": [], "prediction": "i i",
  "judge": "{\"Accuracy\": {\"value\": \"True\"}}", "judge_repo": {"i": "{\"score\": 1, \"detail\": {\"a\": 0}}"}},
 {"id": "alt_ans_exact", "query": "biggest city?", "answer": "nyc", "alt_ans": ["new york city"], "prediction": "New York City",
  "judge": "{\"Accuracy\": \"False\"}", "judge_repo": {"nyc": "{\"score\": 0, \"explanation\": \"abbrev\"}"}},
 {"id": "alt_ans_judged", "query": "q34", "answer": "usa", "alt_ans": ["united states", "america"], "prediction": "the US",
  "judge": "{\"Accuracy\": \"True\"}",
  "judge_repo": {"usa": "{\"score\": 0}", "united states": "{\"score\": 1, \"explanation\": \"same\"}"}},
 {"id": "alt_ans_invalid_mix", "query": "q35", "answer": "invalid question", "alt_ans": ["no such film"], "prediction": "no such film exists",
  "judge": "{\"Accuracy\": \"False\"}", "judge_repo": {"no such film": "{\"score\": 1}"}},
]

FIELDS = ("id", "query", "answer", "alt_ans", "prediction")


class StubCompletions:
    def __init__(self, replies, calls):
        self.replies, self.calls = replies, calls

    def create(self, model, messages, response_format=None, temperature=None):
        user = messages[1]["content"]
        reply = self.replies[user]
        self.calls.append({"messages": messages, "reply": reply, "temperature": temperature})
        if reply == FAIL:
            raise openai.APIConnectionError(request=httpx.Request("POST", "http://stub/v1/chat/completions"))
        if reply == ERROR:
            raise ValueError("stubbed non-retryable error")
        msg = type("M", (), {"content": reply})
        choice = type("C", (), {"message": msg})
        return type("R", (), {"choices": [choice]})


class StubClient:
    def __init__(self, replies, calls):
        self.chat = type("Chat", (), {"completions": StubCompletions(replies, calls)})()


def load(repo_dir, fixes=None):
    path = os.path.join(repo_dir, "local_evaluation.py")
    source = open(path).read()
    for old, new in (fixes or []):
        assert old in source, old
        source = source.replace(old, new)
    sys.path.insert(0, repo_dir)
    os.chdir(repo_dir)
    module = type(sys)("local_evaluation")
    module.__file__ = path
    exec(compile(source, path, "exec"), module.__dict__)
    module.log_response = lambda messages, response, output_directory=None: None
    return module


def commit(repo_dir):
    return subprocess.check_output(["git", "-C", repo_dir, "rev-parse", "HEAD"], text=True).strip()


def user_message(query, gold, prediction):
    return f"Question: {query}\n Ground truth: {gold}\n Prediction: {prediction}\n"


def run_starter():
    repo = os.path.join(HERE, "starter")
    ev = load(repo)
    replies, per_row, all_calls = {}, [], []
    for row in ROWS:
        trimmed = ev.trim_predictions_to_max_token_length(row["prediction"]).strip()
        if "judge" in row:
            replies[user_message(row["query"], row["answer"].strip(), trimmed)] = row["judge"]
    for row in ROWS:
        calls = []
        client = StubClient(replies, calls)
        res = ev.evaluate_predictions([row["query"]], [row["answer"]], [row["prediction"]], "stub-model", client)
        per_row.append({"id": row["id"], "truncated": ev.trim_predictions_to_max_token_length(row["prediction"]).strip(),
                        "n_judge_attempts": len(calls), "result": res})
        all_calls += calls
    calls = []
    total = ev.evaluate_predictions([r["query"] for r in ROWS], [r["answer"] for r in ROWS],
                                    [r["prediction"] for r in ROWS], "stub-model", StubClient(replies, calls))
    return {"how": ("AIcrowd starter kit local_evaluation.py evaluate_predictions (mirror djleeasi/kdd2024crag_Iter2 "
                    f"at upstream commit {commit(repo)}), run unmodified under transformers 4.41.2 / tokenizers 0.19.1 / "
                    "openai 1.13.3 with a stub OpenAI client: per-row results from one-row calls, aggregate from one "
                    "call over all rows; log_response disabled. Replies: rows[].judge; '__connection_error__' raises "
                    "openai.APIConnectionError on every attempt, '__other_error__' raises ValueError. Script: "
                    "tests/data/parity/make_crag_parity.py (paths under /work/scratch/crag)"),
            "rows": [{k: r[k] for k in FIELDS} | {"judge": r.get("judge")} for r in ROWS],
            "per_row": per_row, "aggregate": total, "judge_calls": dedupe(all_calls)}


def dedupe(calls):
    """One entry per distinct call: the system message (the same for every call) once, then the
    user message, the reply and the temperature the evaluator sent."""
    systems = {call["messages"][0]["content"] for call in calls}
    assert len(systems) == 1
    out, seen = [], set()
    for call in calls:
        key = call["messages"][1]["content"]
        if key not in seen:
            seen.add(key)
            out.append({"user": key, "reply": call["reply"], "temperature": call["temperature"]})
    return {"system": systems.pop(), "calls": out}


def run_crag_repo():
    repo = os.path.join(HERE, "crag_repo")
    fixes = [
        ("from auto_gptq import AutoGPTQForCausalLM, BaseQuantizeConfig\n", ""),  # bug (a)
        ("ground_truths = ground_truths_list[_idx].strip()",                      # bug (c)
         "ground_truths = [gt.strip() for gt in ground_truths_list[_idx]]"),
        ("            if \"i don't know\" in prediction_lowercase:",              # bug (b)
         "            prediction_lowercase = prediction.lower()\n            if \"i don't know\" in prediction_lowercase:"),
        ("        openai_client = OpenAI()\n", "        openai_client = STUB_CLIENT\n"),
    ]
    ev = load(repo, fixes)
    replies, per_row, all_calls = {}, [], []
    for row in ROWS:
        trimmed = ev.trim_predictions_to_max_token_length(row["prediction"]).strip()
        for gold, reply in (row.get("judge_repo") or row.get("judge_repo_default") or {}).items():
            replies[user_message(row["query"], gold, trimmed)] = reply
    golds = lambda r: [r["answer"]] + r["alt_ans"]
    for row in ROWS:
        calls = []
        ev.STUB_CLIENT = StubClient(replies, calls)
        res = ev.evaluate_predictions([row["query"]], [golds(row)], [row["prediction"]], "stub-chat-model")
        per_row.append({"id": row["id"], "n_judge_attempts": len(calls), "result": res})
        all_calls += calls
    calls = []
    ev.STUB_CLIENT = StubClient(replies, calls)
    total = ev.evaluate_predictions([r["query"] for r in ROWS], [golds(r) for r in ROWS],
                                    [r["prediction"] for r in ROWS], "stub-chat-model")
    return {"how": ("facebookresearch/CRAG local_evaluation.py evaluate_predictions at commit "
                    f"{commit(repo)} with the minimal fixes of spec section 3.4: auto_gptq import removed, "
                    "prediction_lowercase assigned before the missing check, ground truths = [answer] + alt_ans "
                    "(each stripped) instead of .strip() on the list; model name 'stub-chat-model' (passes the "
                    "'chat' check); OpenAI() replaced by a stub client; transformers 4.41.2 / tokenizers 0.19.1 / "
                    "openai 1.13.3. Replies: rows[].judge_repo per ground truth. Script: tests/data/parity/make_crag_parity.py (paths under /work/scratch/crag)"),
            "rows": [{k: r[k] for k in FIELDS} | {"judge_repo": r.get("judge_repo")} for r in ROWS],
            "per_row": per_row, "aggregate": total, "judge_calls": dedupe(all_calls)}


if __name__ == "__main__":
    which = sys.argv[1]
    data = run_starter() if which == "kddcup2024" else run_crag_repo()
    with open(os.path.join(OUT, f"crag_{which}.json"), "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
    print(which, data["aggregate"])
