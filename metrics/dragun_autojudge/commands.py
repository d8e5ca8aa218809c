"""`ragbench export dragun-human-labels DATA --run-tag TAG --output FILE`: the assessors' judgments of one submitted
run scored as `utils/score.py --type human` scores them, per topic, written as a `--human-labels` file (`{"id",
"metric", "label"}` lines): Task 2 (DATA/human_assessments/report_assessments.csv against DATA/human_rubrics/,
metrics dragun_supportive and dragun_contradictory) or, with `--task dragun_questions`, Task 1
(question_assessments.csv, with the compound checks auto_judge.py wrote, `--compound-check CSV`, as score.py
takes them: metric dragun_question_score). Scoring that run file with `--human-labels FILE` then checks AutoJudge
against the assessors (agreement, PPI). Added to `ragbench export` (metrics/__init__.py). DRAGUN's human
assessments are distributed on the NIST TREC browser, not in the resources repository."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

RUBRICS = Path("human_rubrics")
ASSESSMENTS = {
    "dragun_report": Path("human_assessments/report_assessments.csv"),
    "dragun_questions": Path("human_assessments/question_assessments.csv"),
}


@click.command("dragun-human-labels")
@click.argument("data", metavar="DATA")
@click.option("--run-tag", required=True, help="the assessed run (its run file's name, the CSV's run_tag)")
@click.option("--output", required=True, help="the --human-labels file to write")
@click.option("--task", type=click.Choice(tuple(ASSESSMENTS)), default="dragun_report", show_default=True)
@click.option(
    "--compound-check",
    default=None,
    help="dragun_questions: auto_judge.py's auto_compound_question_check.csv (score.py's --compound_check_input)",
)
@click.option("--overwrite", is_flag=True, help="replace an earlier file at --output")
def export_dragun_human_labels(
    data: str, run_tag: str, output: str, task: str, compound_check: str | None, overwrite: bool
) -> None:
    """DRAGUN's human scores of one run, per topic, as score.py computes them: a --human-labels file."""
    from ragbench.api.run import config_errors_exit

    with config_errors_exit("--output"):
        lines = export(Path(data), run_tag, Path(output), task, compound_check, overwrite)
    for line in lines:
        click.echo(line)


def rubrics(folder: Path) -> dict[str, list[Any]]:
    """topic -> its rubric questions, the files in name order (a topic given twice: the later file's)."""
    from ragbench.api.data import given_json

    return {
        str(data["topic_id"]): data["rubrics"]
        for data in (given_json(path, "a DRAGUN rubric (JSON)") for path in sorted(folder.glob("*.json")))
    }


def rows(path: Path) -> Iterator[dict[str, str]]:
    from ragbench.api.data import given_text

    yield from csv.DictReader(io.StringIO(given_text(path, "DRAGUN's assessments (CSV)"), newline=""))


def export(data: Path, run_tag: str, output: Path, task: str, compound_check: str | None, overwrite: bool) -> list[str]:
    from ragbench.api import ConfigError
    from ragbench.api.run import check_output, write_atomically

    command = "export dragun-human-labels"
    needed = [data / RUBRICS, data / ASSESSMENTS[task]]
    if task == "dragun_questions":
        if compound_check is None:
            raise ConfigError(
                f"{command}: Task 1's human score counts no compound question (score.py): give --compound-check, "
                "auto_judge.py's auto_compound_question_check.csv of the run"
            )
        needed.append(Path(compound_check))
    for path in needed:
        if not path.exists():
            raise ConfigError(f"{command}: {path} not found: DATA is the resources repository's data/ folder")
    check_output(output, overwrite, command)
    assessed = list(rows(data / ASSESSMENTS[task]))
    if not any(row.get("run_tag") == run_tag for row in assessed):
        tags = ", ".join(sorted({str(row.get("run_tag")) for row in assessed}))
        raise ConfigError(f"{command}: {data / ASSESSMENTS[task]} assesses no run {run_tag!r}: its runs are {tags}")
    try:
        found = rubrics(data / RUBRICS)
        if task == "dragun_report":
            labels, left_out = report_labels(found, assessed, run_tag)
        else:
            labels, left_out = question_labels(found, assessed, list(rows(Path(str(compound_check)))), run_tag)
    except (KeyError, ValueError, TypeError) as exc:  # a column missing, a rank not an integer, a rubric not JSON
        raise ConfigError(
            f"{command}: {data} holds no DRAGUN rubrics and assessments as the track writes them "
            f"({type(exc).__name__}: {exc}); compare the columns score.py reads (docs/benchmarks/dragun.md)"
        ) from None
    write_atomically(output, "".join(json.dumps(label) + "\n" for label in labels))
    topics = len({label["id"] for label in labels})
    lines = [f"DRAGUN human labels of {run_tag} ({task}): {output} ({topics} topics)"]
    if left_out:
        lines.append(f"left out (score.py stops at them): {'; '.join(left_out)}")
    return lines


def report_labels(
    found: dict[str, list[Any]], assessed: list[dict[str, str]], run_tag: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """score.py's human report scores of the run, per topic, and the topics it would stop at."""
    from .scoring import topic_scores

    judged: dict[str, list[tuple[str, str]]] = {}
    for row in assessed:
        if row["run_tag"] == run_tag:
            judged.setdefault(row["topic_id"], []).append((row["answer_id"], row["annotation"]))
    labels, left_out = [], []
    for topic, pairs in judged.items():
        try:
            scores = topic_scores(found[topic], pairs)
        except (KeyError, ValueError) as exc:
            left_out.append(f"{topic} ({type(exc).__name__}: {exc})")
            continue
        labels += [
            {"id": topic, "metric": f"dragun_{key}", "label": scores[key]} for key in ("supportive", "contradictory")
        ]
    return labels, left_out


def question_labels(
    found: dict[str, list[Any]], assessed: list[dict[str, str]], checks: list[dict[str, str]], run_tag: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """score.py's human question scores of the run, per topic (the denominator: the rubric questions assessed on
    the topic for any run), and the topics it would stop at."""
    from .scoring import question_score

    compound: dict[tuple[str, int], list[str]] = {}
    for row in checks:
        if row["run_tag"] == run_tag:
            compound.setdefault((row["topic_id"], int(row["run_question_rank"])), []).append(
                row["auto_compound_question_assessment"]
            )
    ranks: dict[str, set[int]] = {}
    judged: dict[str, list[tuple[int, int, str]]] = {}
    for row in assessed:
        ranks.setdefault(row["topic_id"], set()).add(int(row["rubric_question_rank"]))
        if row["run_tag"] == run_tag:
            pair = (int(row["rubric_question_rank"]), int(row["run_question_rank"]), row["annotation"])
            judged.setdefault(row["topic_id"], []).append(pair)
    labels, left_out = [], []
    for topic, pairs in judged.items():
        by_rank = {rank: decisions for (at, rank), decisions in compound.items() if at == topic}
        try:
            score = question_score(found[topic], by_rank, pairs, ranks[topic])
        except KeyError as exc:
            left_out.append(f"{topic} (no weight or compound check: {exc})")
            continue
        labels.append({"id": topic, "metric": "dragun_question_score", "label": score})
    return labels, left_out
