"""BEIR (Thakur et al., NeurIPS 2021 Datasets, beir-cellar/beir): any retrieval test collection in BEIR's
folder format as the `beir` task (task.py), open domain over an index of the folder's corpus.jsonl
(`ragbench index build`), scored by `beir_retrieval` (metrics.py) as EvaluateRetrieval.evaluate scores it."""
