"""The `llatrieval` system: LLatrieval (Li et al., NAACL 2024): the LLM verifies the retrieval result and updates
it until the documents suffice, as BeastyZ/LLM-Verified-Retrieval (commit ac186ac) runs it:
Iterative_retrieval.py for the loop, run.py for the answer. system.py holds the System class the registry
loads; its other modules: prompts.py, tokens.py.
"""
