"""The common open-domain and multi-hop QA sets as YAML tasks over the generic loader
(ragbench._yaml_tasks): NQ-open, TriviaQA, WebQuestions, HotpotQA (distractor and fullwiki),
2WikiMultihopQA and MuSiQue, each in its original release format and in FlashRAG's JSONL. They prompt
with FlashRAG's QA prompt (the `flashrag` prompt style of style.py). docs/benchmarks/open-qa.md says where to get
each file."""
