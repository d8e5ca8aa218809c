"""Records the TREC 2025 RAG support-evaluation script (the organisers' released vLLM script that judges each cited
segment of each answer sentence: its file given as the first argument) run unmodified against a fake judge, into
support.json: three runs, the sample submission as the script's defaults read it (`calls`, `rows`), the same with
`--no_thinking` (`no_thinking`), and submission_dict/, where t2's citations are {docid: score} objects the script
sorts by score, equal scores among them (`dict_citations`). tests/tasks/trec_rag/test_trec_support.py scores the
same submissions through ragbench and compares.

The script runs offline vLLM over a Lucene index; here those modules are stand-ins placed first on its path:
`vllm.LLM.generate` is the fake judge (it answers each chat from its text and records the chat and the
SamplingParams), `transformers.AutoTokenizer.apply_chat_template` hands the chat through as JSON with its keyword
arguments, and `pyserini.search.lucene.LuceneSearcher` reads the segments of segments.jsonl (None for a docid it
lacks, as pyserini's `doc` returns). The script's own code (prompt, citation order and cut, reading of the
submission, output rows) runs as released.

The fake judge reads the "Statement" and "Citation document" lines: every word of the statement (of four letters
or more) in the document is "Full Support", some "Partial Support", none "No Support", each after a <think>
block whose reasoning names a wrong label in a <support> tag first; a statement holding "garbled" is answered
without a <support> tag. The script reads no label and computes no score: the test's expected scores are the
published weighted precision and recall of these replies, worked by hand.

    python tests/data/parity/trec_support/record_trec_support.py PATH/TO/support_eval.py
"""

from __future__ import annotations

import hashlib
import json
import re
import runpy
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

SEGMENTS = [
    ("msmarco_v2.1_doc_90_1#0_10", "Honey Bees", "Honey bees pollinate many orchard crops across farms."),
    ("msmarco_v2.1_doc_90_1#1_20", "Bee Dances", "Foraging bees perform a waggle dance to communicate distance."),
    ("msmarco_v2.1_doc_90_2#0_30", "Worker Lifespan", "Summer worker bees live about six weeks."),
    ("msmarco_v2.1_doc_90_3#0_40", "Queen Bees", "Each colony usually has a single queen."),
    ("msmarco_v2.1_doc_91_1#0_50", "Tides", "Ocean tides follow the pull of the moon and sun."),
    ("msmarco_v2.1_doc_91_2#0_60", "Spring Tides", "Spring tides happen when sun and moon align."),
]
MISSING = "msmarco_v2.1_doc_99_9#0_90"  # in a submission's references, not in the index
TOPICS = [
    {"id": "b1", "narrative": "I want to know how honey bees live, work and talk to each other in a colony."},
    {"id": "t2", "narrative": "I am curious what causes ocean tides and why some tides are stronger."},
    {"id": "e3", "narrative": "Explain how glaciers carve valleys over thousands of years."},
]
B = [s[0] for s in SEGMENTS[:4]]
T = [s[0] for s in SEGMENTS[4:]]
SUBMISSION = [
    {
        "metadata": {
            "team_id": "t",
            "run_id": "fake",
            "type": "automatic",
            "narrative_id": "b1",
            "narrative": TOPICS[0]["narrative"],
        },
        "references": [*B, MISSING],
        "answer": [
            {"text": "Honey bees pollinate orchard crops.", "citations": [0]},
            {"text": "Bees communicate with a waggle dance and with smell.", "citations": [1, 0]},
            {"text": "A colony keeps one queen.", "citations": []},
            {"text": "Summer worker bees live about six weeks.", "citations": [2, 3, 1, 0]},
            {"text": "The garbled sentence mentions drones.", "citations": [3, 4]},
        ],
    },
    {
        "metadata": {
            "team_id": "t",
            "run_id": "fake",
            "type": "automatic",
            "narrative_id": "t2",
            "narrative": TOPICS[1]["narrative"],
        },
        "references": T,
        "answer": [
            {"text": "Ocean tides follow the moon.", "citations": [T[0]]},
            {"text": "Spring tides happen when the sun and moon align with earth.", "citations": [T[1], T[0]]},
            {"text": "Neap tides are weaker.", "citations": []},
            {"text": "Glaciers move slowly.", "citations": [0]},
        ],
    },
    {
        "metadata": {
            "team_id": "t",
            "run_id": "fake",
            "type": "automatic",
            "narrative_id": "e3",
            "narrative": TOPICS[2]["narrative"],
        },
        "references": B[:1],
        "answer": [],
    },
]
SCORED = {  # t2's sentences citing {docid: score}: judged by score, highest first; equal scores as written
    **SUBMISSION[1],
    "references": [*T, *B[:2]],
    "answer": [
        {"text": "Ocean tides follow the moon.", "citations": {T[0]: 0.4, T[1]: 0.9}},
        {
            "text": "Spring tides happen when the sun and moon align with earth.",
            "citations": {B[0]: 0.5, B[1]: 0.5, T[0]: 0.5, T[1]: 0.7},
        },
        {"text": "Neap tides are weaker.", "citations": {}},
        {"text": "Glaciers move slowly.", "citations": [0]},
    ],
}
SAMPLE_FILES = {
    "segments.jsonl": [
        {"docid": d, "url": "", "title": t, "headings": t, "segment": s, "start_char": 0, "end_char": len(s)}
        for d, t, s in SEGMENTS
    ],
    "trec_rag_2025_queries.jsonl": TOPICS,
    "submission/fake.jsonl": SUBMISSION,
    "submission_dict/fake.jsonl": [SUBMISSION[0], SCORED, SUBMISSION[2]],
}
QRELS = "".join(f"{t['id']} 0 {SEGMENTS[0][0]} 1\n" for t in TOPICS)

CALLS: list[dict] = []


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4}


def judge(chat: list[dict[str, str]]) -> str:
    user = chat[1]["content"]
    statement = re.search(r"^\s*Statement \(from the response\): (.*)$", user, re.M).group(1)
    document = re.search(r"^\s*Citation document: (.*)$", user, re.M).group(1)
    if "garbled" in statement:
        return "<think>\nHard to say.\n</think>\nI cannot decide on this one."
    shared = words(statement) & words(document)
    found = "Full Support" if shared == words(statement) else "Partial Support" if shared else "No Support"
    wrong = "No Support" if found != "No Support" else "Full Support"
    return (
        f"<think>\nAt first <support>{wrong}</support> seemed right; checking again.\n</think>\n"
        f"<support>{found}</support>\n<reasoning>{len(shared)} words shared.</reasoning>\n<evidence>{document}</evidence>"
    )


STUBS = {
    "vllm.py": """
import json, record_trec_support as rec
class SamplingParams:
    def __init__(self, **kw): self.kw = kw
class _Out:
    def __init__(self, text): self.outputs = [type("C", (), {"text": text})()]
class LLM:
    def __init__(self, **kw): pass
    def generate(self, texts, params):
        out = []
        for text in texts:
            given = json.loads(text)
            reply = rec.judge(given["messages"])
            rec.CALLS.append({**given, "sampling": params.kw, "reply": reply})
            out.append(_Out(reply))
        return out
""",
    "transformers.py": """
import json
class AutoTokenizer:
    @classmethod
    def from_pretrained(cls, path): return cls()
    def apply_chat_template(self, messages, **kw):
        return json.dumps({"messages": messages, "template_args": kw})
""",
    "pyserini/__init__.py": "",
    "pyserini/search/__init__.py": "",
    "pyserini/search/lucene.py": """
import json
class _Doc:
    def __init__(self, line): self.line = line
    def raw(self): return self.line
class LuceneSearcher:
    def __init__(self, index):
        self.lines = {json.loads(l)["docid"]: l for l in open(index, encoding="utf-8")}
    def doc(self, docid):
        return _Doc(self.lines[docid]) if docid in self.lines else None
""",
    "torch.py": "class cuda:\n    @staticmethod\n    def device_count(): return 1\n",
    "tqdm.py": "",
    "datasets.py": "",
}


def run_script(script: Path, scratch: Path, submission: str, *options: str) -> dict[str, list[dict]]:
    """One run of the script on `submission` (a file under this folder): its judge calls and output rows."""
    CALLS.clear()
    out = scratch / f"out{len(list(scratch.glob('out*')))}"
    sys.argv = [
        str(script),
        "--input_filepath",
        str(HERE / submission),
        "--model_name_or_path",
        "Qwen/Qwen3-8B",
        "--output_dir",
        str(out),
        "--output_file",
        "support.jsonl",
        "--lucene_index",
        str(HERE / "segments.jsonl"),
        *options,
    ]
    runpy.run_path(str(script), run_name="__main__")
    rows = [json.loads(line) for line in (out / "support.jsonl").open(encoding="utf-8")]
    return {"calls": list(CALLS), "rows": rows}


def main(script: Path) -> None:
    for name, rows in SAMPLE_FILES.items():
        (HERE / name).parent.mkdir(exist_ok=True)
        (HERE / name).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (HERE / "qrels.rag25.txt").write_text(QRELS, encoding="utf-8")
    with tempfile.TemporaryDirectory() as scratch:
        for name, text in STUBS.items():
            (Path(scratch) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(scratch) / name).write_text(text, encoding="utf-8")
        sys.modules["record_trec_support"] = sys.modules[__name__]
        sys.path[:0] = [scratch, str(HERE)]
        default = run_script(script, Path(scratch), "submission/fake.jsonl")
        no_thinking = run_script(script, Path(scratch), "submission/fake.jsonl", "--no_thinking")
        dict_citations = run_script(script, Path(scratch), "submission_dict/fake.jsonl")
    record = {
        "script_sha256": hashlib.sha256(script.read_bytes()).hexdigest(),
        **default,
        "no_thinking": no_thinking,
        "dict_citations": dict_citations,
    }
    (HERE / "support.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    calls = [len(run["calls"]) for run in (default, no_thinking, dict_citations)]
    print(f"{calls} judge calls recorded in {HERE / 'support.json'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
