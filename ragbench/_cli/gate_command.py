"""`ragbench gate RUN --baseline BASE`: fail a CI job on a significant regression of RUN against BASE, pass on noise
(ragbench._reports.gate; docs/gate.md). Exit 0: no significant regression; 3: one or more; 2: the options or the
runs refused (nothing gated); 1: a fault of the environment (gate.json could not be written)."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .._config.option_bounds import too_many
from .._errors import ConfigError
from .._storage.files import naming, write_atomically, write_problem
from .outcomes import config_error, environment_error
from .registry import command_registry

if TYPE_CHECKING:
    from .._reports.gate.verdicts import GateRow, GateSettings

EXIT_REGRESSION = 3  # a significant regression (0: none; 2: refused; 1: the environment)
GATE_FILE = "gate.json"


@click.command("gate")
@click.argument("run", metavar="RUN")
@click.option("--baseline", required=True, metavar="RUN", help="the run folder RUN is gated against")
@click.option(
    "--metrics",
    default=None,
    metavar="KEY,...",
    help="the keys to gate  [default: every per-example key with a better direction that both runs score]",
)
@click.option(
    "--alpha",
    default=0.05,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="the chance of failing on noise alone, over all keys gated together (Holm)",
)
@click.option(
    "--min-effect",
    multiple=True,
    metavar="[KEY=]DELTA",
    help="fail only where the estimated worsening is over DELTA as well (repeatable; DELTA alone: every key)",
)
@click.option(
    "--threshold",
    multiple=True,
    metavar="KEY=DELTA",
    help="show beside the gate what a fixed threshold (worse by more than DELTA fails) says on the same pairs; "
    "it never sets the exit code (repeatable)",
)
@click.option(
    "--iterations",
    default=10_000,
    show_default=True,
    type=click.IntRange(min=100),
    help="random sign flips of the test (the interval: `compare`'s 2,000 bootstrap resamples)",
)
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0))
@click.option(
    "--output",
    default=None,
    metavar="FILE",
    help=f"write the verdict as JSON to FILE (a folder: FOLDER/{GATE_FILE}); a file there must be one the gate wrote",
)
def gate_command(
    run: str,
    baseline: str,
    metrics: str | None,
    alpha: float,
    min_effect: tuple[str, ...],
    threshold: tuple[str, ...],
    iterations: int,
    seed: int,
    output: str | None,
) -> None:
    """Gate RUN against the baseline run: a one-sided paired test per metric (the judge's error in it where a judge
    scores), Holm-adjusted across metrics and tasks; exit 3 only on a significant regression, 0 otherwise (2: refused).
    Prints the table and a one-line verdict; under GitHub Actions also an error annotation per regression and the
    step summary."""
    from .._reports.gate.output import gate_json, notes, step_summary, table, verdict_line, workflow_commands
    from .._reports.gate.pairing import paired_runs
    from .._reports.gate.verdicts import EVERY_KEY, GateSettings, gate_report
    from .._reports.results.finished_run import finished_run

    try:
        target = _gate_file(output)
        if problem := too_many("gate --iterations", "bootstrap_iters", iterations):
            raise ConfigError(problem)
        settings = GateSettings(
            alpha=alpha,
            min_effect=assignments(min_effect, "--min-effect", EVERY_KEY),
            thresholds=assignments(threshold, "--threshold", None),
            iterations=iterations,
            seed=seed,
        )
        ours, theirs = finished_run(baseline, "gate"), finished_run(run, "gate")
        wanted = [name.strip() for name in metrics.split(",") if name.strip()] if metrics else None
        paired = paired_runs(ours, theirs, wanted, lambda name: command_registry().metric_class(name))
        report = gate_report(ours.path, theirs.path, paired, settings)
        _checked_keys(report.rows, settings)
    except ConfigError as exc:
        config_error(exc)
    except OSError as exc:  # reading a run folder
        environment_error(exc, options="RUN / --baseline", then="then run the same command again")
    click.echo(table(report))
    for line in notes(report):
        click.echo(f"- {line}")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in workflow_commands(report):
            click.echo(line)
    _append_summary(step_summary(report))
    click.echo(verdict_line(report))
    if target is not None:
        try:
            with naming(target):
                write_atomically(target, json.dumps(gate_json(report), indent=2) + "\n")
        except OSError as exc:
            environment_error(exc, options="--output", then="then run the same command again")
    if report.regressions:
        sys.exit(EXIT_REGRESSION)


def assignments(items: tuple[str, ...], flag: str, bare: str | None) -> dict[str, float]:
    """KEY=DELTA items as {key: delta}; `bare` is the key of a DELTA given alone (None: refused). A delta that is
    not a finite number of at least 0 is a `ConfigError`."""
    out: dict[str, float] = {}
    for item in items:
        key, sign, value = item.rpartition("=")
        if not sign:
            key = bare if bare is not None else ""
        try:
            delta = float(value)
        except ValueError:
            delta = math.nan
        if (not sign and bare is None) or (sign and not key.strip()) or not math.isfinite(delta) or delta < 0:
            shape = "[KEY=]DELTA" if bare is not None else "KEY=DELTA"
            raise ConfigError(
                f"{flag} {item}: expected {shape}, DELTA a number of at least 0 in the key's units, e.g. em=0.02"
            )
        out[key.strip()] = delta
    return out


def _checked_keys(rows: list[GateRow], settings: GateSettings) -> None:
    """A `ConfigError` where a key of --min-effect or --threshold is no key gated, or nothing could be tested."""
    from .._reports.gate.verdicts import EVERY_KEY

    gated = {row.metric for row in rows}
    for flag, given in (("--min-effect", settings.min_effect), ("--threshold", settings.thresholds)):
        unknown = sorted(set(given) - gated - {EVERY_KEY})
        if unknown:
            raise ConfigError(f"gate {flag}: {', '.join(unknown)} is no key gated ({', '.join(sorted(gated))})")
    if not any(row.p is not None for row in rows):
        raise ConfigError("gate: no key has an example scored in both runs: nothing to test")


def _gate_file(output: str | None) -> Path | None:
    """Where gate.json goes (a folder given: inside it); `ConfigError` where it cannot be written or a file there is
    not one the gate wrote (the user's files are never written over)."""
    from .._reports.gate.output import KIND

    if output is None:
        return None
    target = Path(output) / GATE_FILE if Path(output).is_dir() else Path(output)
    if problem := write_problem(target):
        raise ConfigError(f"gate --output {output}: {problem}; give a path that can be written")
    if target.is_symlink() or target.exists():
        try:
            written = json.loads(target.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            written = None
        if not isinstance(written, dict) or written.get("kind") != KIND or target.is_symlink():
            raise ConfigError(
                f"gate --output {output}: {target} is there and is no {GATE_FILE} the gate wrote; "
                "give a new path (the gate writes over only its own)"
            )
    return target


def _append_summary(text: str) -> None:
    """The summary appended to GitHub Actions' step summary file, where $GITHUB_STEP_SUMMARY names one; a fault is
    one warning line (the verdict stands)."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        click.echo(
            f"ragbench: warning: the gate's summary was not added to $GITHUB_STEP_SUMMARY ({path}: "
            f"{exc.strerror or exc}); the verdict stands",
            err=True,
        )
