"""Records ragnarok's 2025 submission validator (castorini/ragnarok 7233fa7, src/ragnarok/scripts/rag25_validation.py,
its file given as the first argument) run unmodified on submission lines, into validation.json:
`validate_entry` of each line of lines.jsonl (written here: every error and warning it knows, each line as
format 1 and as format 2) against topics_title.jsonl, and `validate_rag25_entries` (what its command line runs) of
ag_output.jsonl, `ragbench export trec-rag`'s file of the trec_support sample run, against topics_title.jsonl
(the guidelines' "title") and topics_narrative.jsonl (the released topics file's "narrative"), its printed lines
and its verdict; and `validate_rag25_entries` of ag_output_prompt.jsonl (`ragbench export trec-rag` of a scripted
system's trec_rag25 run, whose lines hold the prompt it sent) against topics_title.jsonl. tests/tasks/trec_rag/test_trec_rag25_validation.py compares ragbench's reading.

    python tests/data/parity/trec_rag25_validation/record_rag25_validation.py PATH/TO/rag25_validation.py
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import io
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOPICS = {"b1": "How do honey bees live?", "t2": "What drives the tides?", "e3": "How do glaciers carve valleys?"}
A, B, C = "msmarco_v2.1_doc_90_1#0_10", "msmarco_v2.1_doc_90_1#1_20", "msmarco_v2.1_doc_91_1#0_50"
META = {"team_id": "t", "run_id": "r", "type": "automatic", "narrative_id": "b1", "narrative": "n", "prompt": "p"}


def line(answer, references=(A, B), **metadata):
    meta = {k: v for k, v in {**META, **metadata}.items() if v is not None}
    return {"metadata": meta, "references": list(references), "answer": answer}


LINES = [
    line([{"text": "Bees dance.", "citations": [1, 0]}, {"text": "Queens rule.", "citations": []}]),
    line([{"text": "Bees dance.", "citations": [B, A]}], narrative_id="t2"),
    {"metadata": "b1", "references": [A], "answer": []},
    line([], team_id=None),
    line([], team_id=None, run_id=None),
    line([], narrative_id="zz"),
    line([], narrative_id=3),
    line([], type="semi"),
    line([], type=None, narrative=None, prompt=None),
    {"metadata": META, "references": "x", "answer": []},
    line([], references=[A, "doc-7", 5, "msmarco_v2.1_doc_90_1#0"]),
    {"metadata": META, "references": [A], "answer": "Bees dance."},
    line([7, {"citations": [0]}, {"text": 3, "citations": [0]}, {"text": "No cites."}, {"text": "x", "citations": 0}]),
    line([{"text": "Mixed.", "citations": [0, B]}]),
    line([{"text": "Out.", "citations": [2, -1, True, 0]}]),
    line([{"text": "Unknown.", "citations": [C, A]}]),
    {"metadata": META, "references": [A]},
]


def main(validator: Path) -> None:
    spec = importlib.util.spec_from_file_location("rag25_validation", validator)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (HERE / "lines.jsonl").write_text("".join(json.dumps(x) + "\n" for x in LINES), encoding="utf-8")
    (HERE / "topics_title.jsonl").write_text(
        "".join(json.dumps({"id": k, "title": v}) + "\n" for k, v in TOPICS.items()), encoding="utf-8"
    )
    (HERE / "topics_narrative.jsonl").write_text(
        "".join(json.dumps({"id": k, "narrative": v}) + "\n" for k, v in TOPICS.items()), encoding="utf-8"
    )
    topic_ids = module.load_topic_ids(str(HERE / "topics_title.jsonl"))
    checked = [
        {str(kind): module.validate_entry(copy.deepcopy(entry), kind, topic_ids) for kind in (1, 2)} for entry in LINES
    ]
    runs = {}
    for topics in ("topics_title.jsonl", "topics_narrative.jsonl"):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            verdict = module.validate_rag25_entries(
                input_path=str(HERE / "ag_output.jsonl"), topics_path=str(HERE / topics)
            )
        runs[topics] = {"printed": printed.getvalue().replace(str(HERE) + "/", ""), "verdict": verdict}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        verdict = module.validate_rag25_entries(
            input_path=str(HERE / "ag_output_prompt.jsonl"), topics_path=str(HERE / "topics_title.jsonl")
        )
    runs["ag_output_prompt.jsonl"] = {"printed": printed.getvalue().replace(str(HERE) + "/", ""), "verdict": verdict}
    record = {"validator_sha256": hashlib.sha256(validator.read_bytes()).hexdigest(), "lines": checked, "runs": runs}
    (HERE / "validation.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"{len(LINES)} lines and {len(runs)} runs recorded in {HERE / 'validation.json'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
