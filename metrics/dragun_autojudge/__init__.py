"""DRAGUN's AutoJudge (trec-dragun/resources 4b60fb6, auto_judge/auto_judge.py) asked of the run's judge as the
released script asks gpt-oss-120b, its assessments scored as utils/score.py scores them (scoring.py): a report
(Task 2, metric.py, `dragun_autojudge`) and a ranked list of questions (Task 1, questions.py,
`dragun_question_autojudge`); docs/metrics.md, "DRAGUN AutoJudge"."""
