"""TREC 2025 DRAGUN (trec-dragun/resources, trec-dragun/2025-starter-kit): its news-article topics, assessor rubrics
and few-shot examples read from the resources repository's `data/` layout: Task 2 (data.py) as the `dragun_report`
task (task.py), its report submission format (submission.py), scored by the `dragun_autojudge` metric; Task 1
(question_data.py) as the `dragun_questions` task (questions.py), its TSV run format (question_runs.py), scored by
`dragun_question_autojudge` (ragbench.metrics.dragun_autojudge); both exported by `ragbench export dragun`
(commands.py)."""
