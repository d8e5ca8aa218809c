"""The modes of a run, decided once from its options and folder: a fresh attempt, a resumed one, a finished one, all
working from the run as planned (`PlannedRun`)."""
