"""Tasks in Self-RAG's evaluation format (question, answers, `ctxs` passages) with its prompts and
answer handling: PopQA, PubHealth and ARC-Challenge from Self-RAG's files, SQuAD as SMART evaluates it,
and the shipped `demo` (PopQA's format). ASQA as Self-RAG evaluates it reads ALCE's file: tasks/alce."""
