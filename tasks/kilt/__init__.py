"""KILT (Petroni et al., 2021, facebookresearch/KILT): its eleven dev sets as YAML tasks over the generic
loader, all in KILT's one JSONL schema, open domain (systems retrieve from a corpus; KILT's knowledge
source is 2019 Wikipedia), with KILT's downstream and page-level retrieval metrics (metrics.py).
docs/benchmarks/kilt.md says where to get each file."""
