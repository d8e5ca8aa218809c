"""Statistics and reports: a task's sample records aggregated into its metric values with bootstrap intervals and
slices (`aggregation`), the end-of-run table and report.md (`run_summary`), and results.json written at a run's end
(`run_end`); by family: the statistics (`statistics/`), results.json and a run folder read back (`results/`; what a run
cost is ragbench._cost's), the judges judged (`judging/`), `ragbench compare` (`compare/`) and `ragbench reproduce`
(`reproduce/`).
"""
