"""`ragbench export dragun-human-labels DATA --run-tag TAG --output FILE`: the assessors' Task 2 judgments of one
submitted run (DATA/human_assessments/report_assessments.csv, against DATA/human_rubrics/) scored as
`utils/score.py --task report_generation_evaluation --type human` scores them, per topic, written as a
`--human-labels` file (`{"id", "metric", "label"}` lines, metrics dragun_supportive and dragun_contradictory):
scoring that run file with `--human-labels FILE` then checks AutoJudge against the assessors (agreement, PPI).
Added to `ragbench export` (metrics/__init__.py). DRAGUN's human assessments are distributed on the NIST TREC
browser, not in the resources repository."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import click

RUBRICS = Path("human_rubrics")
ASSESSMENTS = Path("human_assessments/report_assessments.csv")


@click.command("dragun-human-labels")
@click.argument("data", metavar="DATA")
@click.option("--run-tag", required=True, help="the assessed run (its run file's name, the CSV's run_tag)")
@click.option("--output", required=True, help="the --human-labels file to write")
@click.option("--overwrite", is_flag=True, help="replace an earlier file at --output")
def export_dragun_human_labels(data: str, run_tag: str, output: str, overwrite: bool) -> None:
    """DRAGUN's human Task 2 scores of one run, per topic, as score.py computes them: a --human-labels file."""
    from ragbench.api.run import config_errors_exit

    with config_errors_exit("--output"):
        lines = export(Path(data), run_tag, Path(output), overwrite)
    for line in lines:
        click.echo(line)


def rubrics(folder: Path) -> dict[str, list[Any]]:
    """topic -> its rubric questions, the files in name order (a topic given twice: the later file's)."""
    return {
        str(data["topic_id"]): data["rubrics"]
        for data in (json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json")))
    }


def export(data: Path, run_tag: str, output: Path, overwrite: bool) -> list[str]:
    from ragbench.api import ConfigError
    from ragbench.api.run import check_output, write_atomically

    from .scoring import topic_scores

    command = "export dragun-human-labels"
    for needed in (data / RUBRICS, data / ASSESSMENTS):
        if not needed.exists():
            raise ConfigError(f"{command}: {needed} not found: DATA is the resources repository's data/ folder")
    check_output(output, overwrite, command)
    judged: dict[str, list[tuple[str, str]]] = {}
    tags: set[str] = set()
    with open(data / ASSESSMENTS, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            tags.add(row["run_tag"])
            if row["run_tag"] == run_tag:
                judged.setdefault(row["topic_id"], []).append((row["answer_id"], row["annotation"]))
    if not judged:
        raise ConfigError(
            f"{command}: {data / ASSESSMENTS} assesses no run {run_tag!r}: its runs are {', '.join(sorted(tags))}"
        )
    found = rubrics(data / RUBRICS)
    labels, left_out = [], []
    for topic, assessed in judged.items():
        try:
            scores = topic_scores(found[topic], assessed)
        except (KeyError, ValueError) as exc:  # score.py stops at it ("Missing values detected")
            left_out.append(f"{topic} ({exc})")
            continue
        for key in ("supportive", "contradictory"):
            labels.append({"id": topic, "metric": f"dragun_{key}", "label": scores[key]})
    write_atomically(output, "".join(json.dumps(label) + "\n" for label in labels))
    lines = [f"DRAGUN human labels of {run_tag}: {output} ({len(labels) // 2} topics)"]
    if left_out:
        lines.append(f"left out (score.py stops at them): {'; '.join(left_out)}")
    return lines
