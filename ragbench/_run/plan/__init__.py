"""A run planned before anything heavy loads: its tasks, systems and metrics instantiated from the RunConfig, each
system's options merged from their sources, `--top-k`'s budget, a task's own corpus, and the pre-flight."""
