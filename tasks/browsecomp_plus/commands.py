"""`ragbench export browsecomp-plus RUN`: BrowseComp-Plus's leaderboard files from a finished run (leaderboard.py),
added to `ragbench export` through the `ragbench_cli_commands` hook (tasks/__init__.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

TASK = "browsecomp_plus"


@click.group("export")
def export_group() -> None:
    """Write a finished run's files in the formats other tools read."""


@export_group.command("browsecomp-plus")
@click.argument("run_dir", metavar="RUN")
@click.option("--output", default=None, help="the folder to write (default: RUN__browsecomp_plus beside RUN)")
@click.option(
    "--data",
    default=None,
    help="BrowseComp-Plus's checkout (or decrypted queries) whose qrels score the retrieval (default: the run's --data)",
)
@click.option("--llm", default=None, help="the agent submission's \"LLM\" (default: the run's model)")
@click.option("--retriever", default=None, help='"Retriever": the retrieval you ran (default: the run\'s --retriever)')
@click.option("--link", default=None, help='"Link": your paper, project page or model card')
@click.option("--overwrite", is_flag=True, help="replace the files of an earlier export in the output folder")
def export_browsecomp_plus(
    run_dir: str,
    output: str | None,
    data: str | None,
    llm: str | None,
    retriever: str | None,
    link: str | None,
    overwrite: bool,
) -> None:
    """BrowseComp-Plus's leaderboard submissions from a finished run of browsecomp_plus: the agent's
    (evaluation_summary.json, as evaluate_run.py writes it), the retrieval-only one (retrieval_summary.json, from
    trec_eval -c over run.trec and the evidence and gold qrels), run.trec, and each query's run file (runs/)."""
    from ragbench.api.run import echo_lines_of

    echo_lines_of(
        lambda: export(run_dir, output, data, {"LLM": llm, "Retriever": retriever, "Link": link}, overwrite), "--output"
    )


def export(run_dir: str, output: str | None, data: str | None, given: dict[str, Any], overwrite: bool) -> list[str]:
    from ragbench.api import ConfigError
    from ragbench.api.retrieval import run_tag, trec_eval_all, trec_run_text
    from ragbench.api.run import finished_run, run_rankings, write_atomically

    from .leaderboard import TREC_MEASURES, UNSET, agent_submission, retrieval_submission, run_file
    from .metric import MODEL

    run = finished_run(run_dir, "export browsecomp-plus")
    if TASK not in run.results.results:
        raise ConfigError(
            f"export browsecomp-plus: {run.path} did not run {TASK} (it ran {', '.join(run.results.results)})"
        )
    run.every_example_scored(TASK, "example", "a submission counts every query")
    folder = Path(output) if output else run.path.resolve().parent / f"{run.path.resolve().name}__{TASK}"
    if links := [path for path in (folder, folder / "runs") if path.is_symlink()]:
        raise ConfigError(
            f"export browsecomp-plus: {links[0]} is a symbolic link, which ragbench never writes through (into the "
            "folder it leads to): give another --output"
        )
    if folder.exists() and any(folder.iterdir()) and not overwrite:
        raise ConfigError(f"export browsecomp-plus: {folder} is not empty: give --overwrite, or another --output")
    config = run.results.config
    records = [r for r in run.records(TASK) if not r.bad_record and r.id is not None and r.error is None]
    # the run's model; a re-scored run folder's, the first run file's metadata.model (as evaluate_run.py reads it)
    model = str(config.get("model") or "").split(":", 1)[-1] or next(
        (r.extras[MODEL] for r in records if MODEL in r.extras), ""
    )
    retriever = config.get("retriever")
    names = {
        "LLM": given["LLM"] or model or UNSET,
        "Retriever": given["Retriever"] or (retriever if isinstance(retriever, str) else "") or UNSET,
        "Link": given["Link"] or UNSET,
    }
    if not records:
        raise ConfigError(f"export browsecomp-plus: {run.path} has no scored example of {TASK}")
    date = (run.results.date or "")[:10]  # the day the run was scored, as evaluate_run.py dates its summary
    written: dict[str, Any] = {}
    lines = []
    if "accuracy" in run.results.results[TASK]:
        calibration = run.results.results[TASK].get("calibration_error")
        written["evaluation_summary.json"] = agent_submission(records, calibration, names, date)
    else:
        lines.append(f"no agent submission: {run.path} was not scored by the browsecomp_plus metric")
    ranked = run_rankings(run, TASK)
    if ranked.left_out:
        lines.append(f"no retrieval submission: of the run's examples, {ranked.left_out_text()}")
    else:
        recorded = config.get("data")
        path = recorded.get(TASK) if isinstance(recorded, dict) else None
        qrels = qrels_of(data or (path if isinstance(path, str) else None))
        trec_run = {qid: dict(ranking) for qid, ranking in ranked.rankings}
        try:
            written["run.trec"] = trec_run_text(ranked.rankings, run_tag(run.path.resolve().name))
        except ValueError as exc:  # an id the format cannot hold
            raise ConfigError(f"export browsecomp-plus: {exc}") from None
        values = {kind: trec_eval_all(relevant, trec_run, TREC_MEASURES) for kind, relevant in qrels.items()}
        written["retrieval_summary.json"] = retrieval_submission(values, names, date)
        missing = set(qrels["Evidence"]) - set(trec_run)
        if missing:
            lines.append(
                f"{len(missing)} of the evidence qrels' {len(qrels['Evidence'])} queries have no ranking in the run "
                "(not run, or nothing shown): each counts 0, as trec_eval -c counts it"
            )
    for record in records:
        recorded = run_file(record, names["LLM"])
        if recorded is not None:
            written[f"runs/{record.id}.json"] = recorded
    for name, content in written.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content, indent=2, ensure_ascii=False) + "\n"
        write_atomically(folder / name, text)
    files = len([name for name in written if name.startswith("runs/")])
    lines.append(
        f"BrowseComp-Plus submission files: {folder} ({', '.join(n for n in written if '/' not in n)}, {files} run files)"
    )
    return lines


def qrels_of(data: str | None) -> dict[str, dict[str, dict[str, int]]]:
    """The evidence and gold qrels of BrowseComp-Plus's data at `data` (the task's reading: the checkout's
    qrels files, else the queries' own lists), all its queries, as trec_eval reads the README's qrels files."""
    from ragbench.api import ConfigError

    from .leaderboard import binary_qrels
    from .task import BrowseCompPlusTask

    if not data:
        raise ConfigError("export browsecomp-plus: the run does not say where its data is: give --data CHECKOUT")
    examples = [e for e in BrowseCompPlusTask(data).examples() if not isinstance(e, Exception)]
    return {
        kind: binary_qrels((e.id, e.gold[field]) for e in examples)
        for kind, field in (("Evidence", "evidence_docids"), ("Gold", "gold_docids"))
    }
