"""FRAMES (Krishna et al., 2024, "Fact, Fetch, and Reason"; google/frames-benchmark on the Hugging Face hub): 824
multi-hop questions over Wikipedia as the YAML task `frames` over its released test.tsv, open domain (the
Wikipedia corpus the user indexes), scored by the paper's auto-rater prompt (`llm_judge` preset `frames`).
docs/benchmarks/frames.md says where to get the file."""
