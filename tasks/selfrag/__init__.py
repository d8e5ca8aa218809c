"""Tasks in Self-RAG's evaluation format (question, answers, `ctxs` passages), declared as YAML over the
generic loader (ragbench._yaml_tasks): PopQA, PubHealth and ARC-Challenge from Self-RAG's files,
SQuAD as SMART evaluates it, and the shipped `demo` (PopQA's format). Self-RAG's prompting protocol is
the prompt styles of style.py. ASQA as Self-RAG evaluates it reads ALCE's file: tasks/alce."""
