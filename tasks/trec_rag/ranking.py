"""`ragbench export trec-rag-agreement RUNS...`: the TREC 2025 RAG overview's agreement between two evaluations of
the same runs, as Kendall's tau-b of the rankings they give (the overview and Thakur et al. rank the submitted runs
by an automatic and a manual evaluation and report the tau between them). Each RUN is a finished run of the task;
METRIC is read from each RUN's results and AGAINST from the same run, or from the run given by `--against-run` in
the same order (the same submissions scored by another evaluation: other judges, or human labels). The file written
is a TSV of each run's two values; the tau is printed."""

from __future__ import annotations

import math
from pathlib import Path

import click


def run_value(run_dir: str, task: str, key: str) -> float:
    from ragbench.api import ConfigError
    from ragbench.api.run import finished_run

    run = finished_run(run_dir, "export trec-rag-agreement")
    value = run.results.results.get(task, {}).get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(
            f"export trec-rag-agreement: {run.path} has no value of {key} for {task} ({value!r}): score it first"
        )
    return float(value)


def agreement(
    runs: list[str], against_runs: list[str], task: str, metric: str, against: str
) -> tuple[list[tuple[str, float, float]], float | None]:
    from ragbench.api import ConfigError, kendall_tau

    if against_runs and len(against_runs) != len(runs):
        raise ConfigError(
            f"export trec-rag-agreement: {len(runs)} RUNS and {len(against_runs)} --against-run: give one per RUN"
        )
    if len(runs) < 2:
        raise ConfigError("export trec-rag-agreement: a ranking needs two RUNS or more")
    rows = [
        (Path(run).name, run_value(run, task, metric), run_value(other, task, against))
        for run, other in zip(runs, against_runs or runs, strict=True)
    ]
    return rows, kendall_tau([a for _, a, _ in rows], [b for _, _, b in rows])


@click.command("trec-rag-agreement")
@click.argument("runs", nargs=-1, required=True, metavar="RUNS...")
@click.option("--task", default="trec_rag25", show_default=True, help="the task whose results are read")
@click.option("--metric", required=True, help="the key of the first evaluation (e.g. nuggetizer_vital_score)")
@click.option("--against", required=True, help="the key of the second evaluation")
@click.option("--against-run", "against_runs", multiple=True, help="the run to read --against from, one per RUN")
@click.option("--output", default=None, help="a TSV of each run's two values (an existing file needs --overwrite)")
@click.option("--overwrite", is_flag=True, help="replace an earlier --output")
def export_trec_rag_agreement(
    runs: tuple[str, ...],
    task: str,
    metric: str,
    against: str,
    against_runs: tuple[str, ...],
    output: str | None,
    overwrite: bool,
) -> None:
    """Kendall's tau-b between the rankings of RUNS by two evaluations (the TREC 2025 RAG agreement analysis)."""
    from ragbench.api.run import check_output, config_errors_exit, write_atomically

    with config_errors_exit("--output"):
        rows, tau = agreement(list(runs), list(against_runs), task, metric, against)
        if output is not None:
            check_output(Path(output), overwrite, "export trec-rag-agreement")
            lines = [f"run\t{metric}\t{against}"] + [f"{name}\t{a!r}\t{b!r}" for name, a, b in rows]
            write_atomically(Path(output), "".join(line + "\n" for line in lines))
    shown = "undefined (a ranking of all ties)" if tau is None else f"{tau:.4f}"
    click.echo(f"Kendall's tau-b of {len(rows)} runs ranked by {metric} and by {against}: {shown}")
