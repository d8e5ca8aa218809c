"""ARGUE report generation (NeuCLIR 2024's and RAGTIME's format: report requests, v3 nugget banks, report JSONL) as
the `argue_report` task (task.py, data.py), scored by the `auto_argue` metric (ragbench.metrics.auto_argue: from
Auto-ARGUE's paper, not parity-checked)."""
