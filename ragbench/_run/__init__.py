"""Running: a RunConfig turned into planned tasks, systems and metrics (planning), the pre-flight
that checks everything before anything heavy loads (preflight, checks), the evaluator that streams
examples through the systems and scores them (evaluator, example, reading) with its scheduler
(`ragbench._scheduler`) pooling every LLM call onto the engines, what a run owns and closes (resources: its worker
processes for CPU-bound work and its page caches), its lifetime (lifecycle: the examples' task group,
Ctrl-C and other stop signals; interrupted: what a stopped run says), progress and the cost of each attempt.
"""
