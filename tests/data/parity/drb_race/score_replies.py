"""Run inside a copy of DeepResearch Bench with the sample data in place (record_drb_race.py does): each reply of
replies.json (argv[1]) given to the released deepresearch_bench_race.process_single_item as the judge's answer,
asked once (max_retries 1), and to utils/json_extractor.extract_json_from_markdown; prints what they return."""

import json
import sys
import threading

from deepresearch_bench_race import process_single_item
from utils.io_utils import load_jsonl
from utils.json_extractor import extract_json_from_markdown


class Judge:
    def __init__(self, reply):
        self.reply = reply

    def generate(self, user_prompt, system_prompt=""):
        return self.reply


class Bar:
    def update(self, n):
        pass


with open(sys.argv[1], encoding="utf-8") as replies:
    cases = json.load(replies)
task = next(t for t in load_jsonl("data/prompt_data/query.jsonl") if t["id"] == cases["task_id"])
criteria = {c["prompt"]: c for c in load_jsonl("data/criteria_data/criteria.jsonl")}
references = {c["prompt"]: c for c in load_jsonl("data/test_data/cleaned_data/reference.jsonl")}
targets = {task["prompt"]: {"article": cases["cleaned_report"]}}
out = []
for case in cases["cases"]:
    judge = Judge(case["reply"])
    result = process_single_item(
        task, targets, references, criteria, judge, threading.Lock(), Bar(), 1, task["language"]
    )
    out.append({"name": case["name"], "extracted": extract_json_from_markdown(case["reply"]), "result": result})
print(json.dumps(out, ensure_ascii=False))
