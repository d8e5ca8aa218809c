"""`ragbench export umbrela-qrels RUN --qrels QRELS --output FILE`: umbrela's modified qrels from a finished run
that judged the qrels (`--metrics +umbrela --metric-arg umbrela.passages=qrels`), and the nDCG@10 of a run on the
original and on the modified qrels, as umbrela's `evalute_results_with_qrel(result_file=...)` writes and prints
them (modified_qrels.py); added to `ragbench export` (metrics/__init__.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


@click.command("umbrela-qrels")
@click.argument("run_dir", metavar="RUN")
@click.option("--qrels", required=True, help="the qrels file the run judged (the task's --task-arg TASK.qrels)")
@click.option("--output", required=True, help="the modified qrels file to write")
@click.option(
    "--trec-run",
    default=None,
    help="a TREC run file whose nDCG@10 to report (umbrela's result_file; default: the segments RUN showed)",
)
@click.option("--task", default=None, help="the task whose judgments to read (default: the run's one task)")
@click.option("--overwrite", is_flag=True, help="replace an earlier file at --output")
def export_umbrela_qrels(
    run_dir: str, qrels: str, output: str, trec_run: str | None, task: str | None, overwrite: bool
) -> None:
    """umbrela's modified qrels (each pair the judge graded given its grade) and the nDCG@10 of a run on the
    original and on the modified qrels (trec_eval -c -l 2 -m ndcg_cut.10, as umbrela prints it)."""
    from ragbench.api.run import config_errors_exit

    with config_errors_exit("--output"):
        lines = export(run_dir, Path(qrels), Path(output), trec_run, task, overwrite)
    for line in lines:
        click.echo(line)


def export(
    run_dir: str, qrels: Path, output: Path, trec_run: str | None, task: str | None, overwrite: bool
) -> list[str]:
    from ragbench.api import ConfigError
    from ragbench.api.data import given_text
    from ragbench.api.run import check_output, finished_run, write_atomically

    from .modified_qrels import modified, ndcg_at_10, read_pairs

    run = finished_run(run_dir, "export umbrela-qrels")
    if task is None and len(run.results.results) != 1:
        raise ConfigError(f"export umbrela-qrels: {run.path} ran {', '.join(run.results.results)}: give --task")
    task = task or next(iter(run.results.results))
    if task not in run.results.results:
        raise ConfigError(f"export umbrela-qrels: {run.path} did not run {task}")
    if not qrels.is_file():
        raise ConfigError(f"export umbrela-qrels: --qrels {qrels} is not a file")
    if not output.is_symlink() and output.exists() and output.samefile(qrels):
        raise ConfigError(f"export umbrela-qrels: --output {output} is the --qrels file: give another --output")
    check_output(output, overwrite, "export umbrela-qrels")
    records = list(run.records(task, why="the judged qrels pairs"))
    cat, judged = judged_grades(records, f"{run.path} ({task})")
    pairs = read_pairs(qrels)
    check_pairs(pairs, cat, judged, qrels, run.path)
    text = modified(pairs, {pair: grade for pair, (_, grade) in judged.items()})
    scored = read_run(Path(trec_run)) if trec_run else shown_run(records)
    write_atomically(output, text)
    changed = sum(human != grade for human, grade in judged.values())
    original, then = (
        ndcg_at_10(lines, scored) for lines in (given_text(qrels, "qrels", "--qrels").splitlines(), text.splitlines())
    )
    return [
        f"umbrela's modified qrels: {output} ({len(judged)} pairs judged, {changed} given another grade)",
        f"nDCG@10 of {trec_run or 'the segments the run showed'}: original {original}, modified {then} "
        "(trec_eval -c -l 2 -m ndcg_cut.10)",
    ]


def judged_grades(records: list[Any], where: str) -> tuple[set[int], dict[tuple[str, str], tuple[int, int]]]:
    """The judge_cat and each judged pair's (qrels grade, judge's grade), by umbrela's keys, from the samples'
    judge traces (qrels_eval.judged_pairs). A pair judged more than once (--judge-repeats) takes the most frequent
    of its grades, the first seen on a tie, as umbrela's num_samples takes `statistics.mode` of its samples."""
    import statistics

    from ragbench.api import ConfigError

    from .modified_qrels import umbrela_id
    from .qrels_eval import JUDGED_STEP

    cats: set[str] = set()
    grades: dict[tuple[str, str], tuple[int, list[int]]] = {}
    for record in records:
        for step in record.judge_trace:
            if step.kind == "custom" and step.name == JUDGED_STEP and record.id is not None:
                cats.add(step.response["judge_cat"])
                for docid, human, grade in step.response["judged"]:
                    pair = umbrela_id(str(record.id)), umbrela_id(str(docid))
                    grades.setdefault(pair, (int(human), []))[1].append(int(grade))
    if len(cats) != 1:
        raise ConfigError(
            f"export umbrela-qrels: {where} holds {'no' if not cats else 'mixed'} judgments of the qrels: run it "
            "with --metrics +umbrela --metric-arg umbrela.passages=qrels (one judge_cat)"
        )
    return {int(c) for c in cats.pop()}, {pair: (human, statistics.mode(g)) for pair, (human, g) in grades.items()}


def check_pairs(pairs: Any, cat: set[int], judged: dict[tuple[str, str], Any], qrels: Path, run: Path) -> None:
    """Every pair of `qrels` graded in `cat` judged, at the qrels' grade, and no other: else the run judged other
    qrels, or some of its topics failed."""
    from ragbench.api import ConfigError

    wanted = {(q, d): int(label) for q, docs in pairs.items() for d, label in docs.items() if int(label) in cat}
    missing = sorted(set(wanted) - set(judged))
    other = sorted(pair for pair, (human, _) in judged.items() if wanted.get(pair) != human)
    if missing:
        raise ConfigError(
            f"export umbrela-qrels: {len(missing)} pair(s) of {qrels} were not judged in {run} (first: topic "
            f"{missing[0][0]}, docid {missing[0][1]}): a topic failed or is missing (finish it with `ragbench ... "
            f"--resume --output {run}`), or the run judged other qrels"
        )
    if other:
        raise ConfigError(
            f"export umbrela-qrels: {run} judged qrels other than {qrels} (first: topic {other[0][0]}, docid "
            f"{other[0][1]}): give the qrels file the run was given"
        )


def read_run(path: Path) -> dict[str, dict[str, float]]:
    from ragbench.api import ConfigError
    from ragbench.api.retrieval import read_trec_run

    try:
        return read_trec_run(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"export umbrela-qrels: --trec-run {exc}") from None


def shown_run(records: list[Any]) -> dict[str, dict[str, float]]:
    """The segments each topic showed, as `ragbench export trec` writes them in a run file."""
    from ragbench.api.retrieval import trec_ranking

    return {str(r.id): dict(trec_ranking(r.docs)) for r in records if r.id is not None and r.error is None}
