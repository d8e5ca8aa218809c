"""Statistics and reports: per-task aggregation with bootstrap intervals and slices (results, bootstrap),
paired comparison of runs (compare), the end-of-run table and report.md (summary, slice_plots),
failures grouped by cause, provenance of a number, and `ragbench reproduce`'s paper-beside-ours rows.
"""
