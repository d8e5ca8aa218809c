"""What a run imports before its first LLM call: only what it uses by then. Statistics (numpy), the report,
`compare`, Jinja2 templates, downloads and index builds load when a run needs them, not at every start
(docs/performance.md, "Start-up"). A fresh process is the point here: in the test process they are imported."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ragbench.api.run import PageCache

# Imported by nothing a `demo` run does before its first call (its task has the `selfrag` prompt style, its
# passages are the examples' own, its data file is shipped, its model the scripted engine).
UNUSED_AT_FIRST_CALL = (
    "numpy",
    "scipy",
    "pandas",
    "matplotlib",
    "jinja2",
    "datasets",
    "httpx",
    "openai",
    "torch",
    "transformers",
    "tqdm",
    "urllib.request",
    "ragbench._reports.compare.comparison",
    "ragbench._reports.run_summary",
    "ragbench._statistics.bootstrap",
    "ragbench._reports.results.score_columns",
    "ragbench._reports.results.slice_plots",
    "ragbench._retrieval.index.built",
    "ragbench._retrieval.index.cache",
    "ragbench._view",
)

FIRST_CALL = """
import json, sys
from ragbench._cli.main import main
from ragbench._engines.scripted import echo

FIRST = []

def answer(request):
    if not FIRST:
        FIRST.append(sorted(name for name in json.loads(sys.argv[1]) if name in sys.modules))
    return echo(request)

sys.modules["first_call"] = sys.modules["__main__"]
main.main(["--tasks", "demo", "--system", "vanilla", "--model", "scripted:first_call:answer", "--limit", "1",
           "--output", sys.argv[2], "--no-progress"], standalone_mode=False)
print(json.dumps({"at_first_call": FIRST[0], "at_end": [m for m in ("numpy",) if m in sys.modules]}))
"""


def test_a_demo_run_imports_no_statistics_report_or_templates_before_its_first_llm_call(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL, json.dumps(UNUSED_AT_FIRST_CALL), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert imported["at_first_call"] == []
    assert imported["at_end"] == ["numpy"]  # the run's end (its bootstrap intervals) loads it: the check can see it
    assert (tmp_path / "run" / "results.json").is_file()


@given(
    st.one_of(
        hnp.arrays(st.sampled_from([np.float32, np.float64, np.int64]), hnp.array_shapes(min_dims=1, max_dims=2)),
        st.recursive(
            st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
            max_leaves=8,
        ),
    )
)
def test_the_page_cache_gives_back_arrays_and_json_values_as_stored(value):
    """Stored, the cache closed and opened again: the value read back is the value stored (numpy arrays included,
    which the page cache keeps without importing numpy at start-up)."""
    with tempfile.TemporaryDirectory() as folder:
        written = PageCache(Path(folder) / "pages.sqlite")
        written.put_many([("page:k", value)])
        written.close()
        reopened = PageCache(Path(folder) / "pages.sqlite")
        [back] = asyncio.run(reopened.get_many(["page:k"]))
        reopened.close()
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value, equal_nan=value.dtype.kind == "f")
    else:
        assert back == value
