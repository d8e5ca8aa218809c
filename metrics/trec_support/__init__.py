"""TREC 2025 RAG's support (attribution) assessment: each cited segment judged full, partial or no support for its
answer sentence, with the organisers' released prompt and sampling, and the weighted precision and recall of
Thakur et al. (docs/metrics.md, "TREC RAG support")."""
