"""Recording and replay: every external call of a run (model, judge, NLI, tools, retrieval) written to the
run folder's calls/ once, referred to rather than copied, so that `ragbench --replay RUN_DIR` re-executes
the run offline (rerun) and a judge's or a tool's answers can be served again.
"""
