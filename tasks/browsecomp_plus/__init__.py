"""BrowseComp-Plus (Chen et al., 2025, texttron/BrowseComp-Plus): BrowseComp's questions over a fixed corpus
of about 100K documents, as the `browsecomp_plus` task (task.py over the released files, data.py), scored by
`browsecomp_plus` (metric.py: scripts_evaluation/evaluate_run.py's judge and measures, grading.py).
docs/benchmarks/browsecomp-plus.md says how to get and decrypt the data."""
