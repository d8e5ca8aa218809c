"""TREC 2025 DRAGUN (trec-dragun/resources, trec-dragun/2025-starter-kit): its news-article topics, assessor rubrics
and few-shot example reports read from the resources repository's `data/` layout (data.py) as the `dragun_report`
task (task.py), its report submission format (submission.py, `ragbench export dragun`, commands.py), scored by the
`dragun_autojudge` metric (ragbench.metrics.dragun_autojudge)."""
