"""BEIR (Thakur et al., NeurIPS 2021 Datasets, beir-cellar/beir): any retrieval test collection in BEIR's
folder format as the `beir` task (task.py), open domain over an index of the folder's corpus.jsonl
(`ragbench index build`), scored by `beir_retrieval` (metrics.py) as EvaluateRetrieval.evaluate scores it.
ViDoRe's page-retrieval datasets (V1's QA table, V2's and V3's BEIR configs) are the `vidore` task (vidore.py),
scored by `vidore_retrieval` (vidore_metrics.py) as vidore-benchmark's evaluators score them."""
