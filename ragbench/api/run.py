"""What a run or a command lends its plugins: resources, workers, page caches, checks, a command's exits.

    from ragbench.api.run import RunResources, Workers

`RunResources` (what `UsesRunResources.bind` receives and `ctx.resources` is), its `Workers` for CPU-bound
work (`await ctx.resources.workers.run(fn, *args)`; `usable_cores` counts the cores this process may use,
`ready_threads` makes a thread pool with its threads started), the `PageCache` it opens
(`await ctx.resources.page_cache()`) and `content_key` for its entries; the pre-flight's probes
(`probe_data`: a task's first records read; `unreachable`: why a server does not answer; `hub_fetch_problem`: why
a Hugging Face model named by a component cannot be had offline, a caller fetching it holding `HUB_FLAGS`); how a command a
plugin adds ends (`config_errors_exit`, `echo_lines_of`, `exit_if_skipped`); the options of a command writing a track's
submission (`submission_options`: --output, --run-id, --team-id, --overwrite, declared once); a finished run
folder as a command reads one (`finished_run`: its results.json and sample records, `FinishedRun`) and its
retrieval as TREC rankings
(`run_rankings`, `RunRankings`); `check_output` for a file the user names a command to write (refused where one is
there without --overwrite, where it is no file, and inside a run folder) and `write_atomically` to write it (whole or
as it was; a link at the path is replaced, never followed). docs/internals.md, "Who owns what".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._checks import HUB_FLAGS, hub_fetch_problem, probe_data, unreachable
    from ragbench._cli.plugin_commands import config_errors_exit, echo_lines_of, exit_if_skipped
    from ragbench._cli.submission_options import submission_options
    from ragbench._reports.results.finished_run import FinishedRun, finished_run
    from ragbench._reports.results.run_rankings import RunRankings, run_rankings
    from ragbench._run.lifetime.resources import RunResources
    from ragbench._run.lifetime.workers import Workers, ready_threads, usable_cores
    from ragbench._storage.files import write_atomically
    from ragbench._storage.output_files import check_output
    from ragbench._storage.page_cache import PageCache, content_key

_MODULES = {
    "ragbench._run.lifetime.resources": ("RunResources",),
    "ragbench._run.lifetime.workers": ("Workers", "usable_cores", "ready_threads"),
    "ragbench._storage.page_cache": ("PageCache", "content_key"),
    "ragbench._checks": ("probe_data", "unreachable", "hub_fetch_problem", "HUB_FLAGS"),
    "ragbench._cli.plugin_commands": ("config_errors_exit", "echo_lines_of", "exit_if_skipped"),
    "ragbench._cli.submission_options": ("submission_options",),
    "ragbench._reports.results.finished_run": ("finished_run", "FinishedRun"),
    "ragbench._reports.results.run_rankings": ("run_rankings", "RunRankings"),
    "ragbench._storage.files": ("write_atomically",),
    "ragbench._storage.output_files": ("check_output",),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)
