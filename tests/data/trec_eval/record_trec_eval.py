"""Records what trec_eval itself prints for the cases of tests/support/trec_eval_cases.py, `trec_eval -c -m recall.5,100,1000
-m ndcg_cut.10 QRELS RUN` (BrowseComp-Plus's README command; `pyserini.eval.trec_eval` runs the same program),
into expected.json. trec_eval built from usnistgov/trec_eval's source (`make`), at the versions named in the file:

    python tests/data/trec_eval/record_trec_eval.py TREC_EVAL_BINARY [ANOTHER_BINARY ...]

Every binary given must print the same values; the first one's `-v` is recorded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from support.trec_eval_cases import MEASURES, SEEDS, case  # noqa: E402


def printed(binary: str, qrels: Path, run: Path) -> dict[str, str]:
    """The "all" lines trec_eval prints, measure -> value as printed."""
    measures = [arg for measure in MEASURES for arg in ("-m", measure)]
    out = subprocess.run([binary, "-c", *measures, str(qrels), str(run)], capture_output=True, text=True, check=True)
    return {name: value for name, query, value in (line.split() for line in out.stdout.splitlines()) if query == "all"}


def main() -> None:
    binaries = sys.argv[1:]
    cases = {}
    with tempfile.TemporaryDirectory() as folder:
        for seed in SEEDS:
            qrels, run = Path(folder) / "qrels.txt", Path(folder) / "run.txt"
            qrels_text, run_text = case(seed)
            qrels.write_text(qrels_text)
            run.write_text(run_text)
            values = [printed(binary, qrels, run) for binary in binaries]
            if any(value != values[0] for value in values):
                raise SystemExit(f"seed {seed}: the binaries disagree: {values}")
            cases[str(seed)] = values[0]
    versions = [subprocess.run([b, "-v"], capture_output=True, text=True).stderr.strip() for b in binaries]
    fixture = {"trec_eval": versions, "command": "trec_eval -c -m recall.5,100,1000 -m ndcg_cut.10", "cases": cases}
    (HERE / "expected.json").write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
