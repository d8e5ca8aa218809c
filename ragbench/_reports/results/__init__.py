"""results.json and a run folder read back: the typed schema (its cost and budget sections typed in ragbench._cost), reading and writing the file,
run.json, failures, score columns, slices and provenance."""
