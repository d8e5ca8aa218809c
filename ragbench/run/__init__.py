"""Running: a RunConfig turned into planned tasks, systems and metrics (planning, options), the pre-flight
that checks everything before anything heavy loads (preflight, checks), the evaluator that streams
examples through the systems and scores them (evaluator, example), the scheduler that pools and
batches every LLM call onto the engines, the worker pool for CPU-bound work, Ctrl-C and engine
lifecycle, progress and the cost of each attempt.
"""
