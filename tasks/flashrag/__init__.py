"""The rest of FlashRAG's benchmark collection (huggingface.co/datasets/RUC-NLPIR/FlashRAG_datasets) as
YAML tasks over the generic loader, each file in FlashRAG's JSONL (`data.format: flashrag`), prompted
with FlashRAG's QA prompt (the `flashrag` prompt style of tasks/open_qa/style.py) and scored with
FlashRAG's evaluator metrics. Its NQ, TriviaQA, WebQuestions, HotpotQA, 2WikiMultihopQA and MuSiQue are
in tasks/open_qa beside their release formats; group `flashrag` holds all of them. docs/benchmarks/flashrag.md says
where to get each file."""
