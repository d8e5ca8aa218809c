"""DRAGUN's AutoJudge (trec-dragun/resources 4b60fb6, auto_judge/auto_judge.py's auto_report_evaluation) asked of
the run's judge as the released script asks gpt-oss-120b, its assessments scored as utils/score.py scores them
(scoring.py; docs/metrics.md, "DRAGUN AutoJudge")."""
