"""`ragbench estimate`'s figures do not depend on the order its examples finished in: the same samples, whatever
order they were saved in, give the same points and intervals (ragbench._cost.estimate_figures.Totals reads them in
the order of their keys), and `ragbench estimate --seed 5` run twice prints the same figures."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_estimate import options

from ragbench._cost.estimate_figures import Totals
from support.helpers import cli_here

FIGURE = st.floats(0.0, 1e4, allow_nan=False)
EXAMPLE = st.fixed_dictionaries(
    {"llm_calls": st.integers(0, 5).map(float), "completion_tokens": FIGURE, "usd:model": st.floats(0.0, 0.05)}
)


def totals_of(rows: list[tuple[str, dict[str, float], bool, float | None]], rest: float | None) -> Totals:
    totals = Totals()
    for key, figures, finished, length in rows:
        totals.add(key, figures, finished, length)
    totals.rest = rest
    return totals


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(EXAMPLE, st.booleans(), st.integers(1, 500)), min_size=3, max_size=40),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_the_same_samples_in_another_order_give_the_same_figures(
    examples: list[tuple[dict[str, float], bool, int]], counted: bool, shuffle: random.Random
) -> None:
    """Two permutations of the same per-example figures (the order two runs' examples finished in): the same
    points and intervals, exactly, and the same pilot asked for."""
    rows = [
        (f"ex-{i}", figures, i < 2 or done, float(n) if counted else None)
        for i, (figures, done, n) in enumerate(examples)
    ]
    other = shuffle.sample(rows, len(rows))
    rest = 1000.0 if counted else None
    first, second = totals_of(rows, rest), totals_of(other, rest)
    assert first.estimate(50) == second.estimate(50)
    assert first.paid == second.paid
    assert first.pilot_for(200) == second.pilot_for(200)


def test_the_estimate_of_a_run_whose_examples_finished_in_another_order_is_the_same(tmp_path: Path) -> None:
    """A pilot's samples saved in the reverse order (as when its examples finish the other way round): the estimate
    read from them prints the same figures."""
    first = cli_here("estimate", "--pilot", "12", "--seed", "5", "--json", *options(tmp_path))
    assert first.returncode == 0, first.stderr
    samples = tmp_path / "run" / "samples" / "demo.jsonl"
    lines = samples.read_text().splitlines(keepends=True)
    assert len(lines) >= 12
    samples.write_text("".join(reversed(lines)))
    again = cli_here("estimate", "--pilot", "0", "--seed", "5", "--json", *options(tmp_path))
    assert again.returncode == 0, again.stderr
    before, after = json.loads(first.stdout), json.loads(again.stdout)
    assert after["totals"] == before["totals"] and after["paid"] == before["paid"]


def test_estimate_with_the_same_seed_twice_prints_the_same_figures(tmp_path: Path) -> None:
    """`ragbench estimate --seed 5` twice, each in a folder of its own: the same text, but for the folder and the
    wall time (the machine's)."""
    printed = []
    for name in ("one", "two"):
        done = cli_here("estimate", "--seed", "5", "--pilot", "12", *options(tmp_path / name))
        assert done.returncode == 0, done.stderr
        lines = done.stdout.replace(str(tmp_path / name), "FOLDER").splitlines()
        printed.append([line for line in lines if not line.startswith("wall time left")])
    assert printed[0] == printed[1]
