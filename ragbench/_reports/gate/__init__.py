"""`ragbench gate`: a candidate run against its baseline, failed only on a significant regression: the examples
paired per task (failed and missing ones counted, and scored), a one-sided paired test per metric with the judge's
error where a judge scores, Holm's adjustment over them, a fixed threshold's verdict beside it, and the outputs (the
table, gate.json, GitHub Actions' annotations and step summary)."""
