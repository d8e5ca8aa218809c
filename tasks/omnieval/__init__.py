"""OmniEval (RUC-NLPIR/OmniEval): Chinese financial RAG over 5 tasks x 16 topics."""
