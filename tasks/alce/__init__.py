"""ALCE (ASQA, QAMPARI, ELI5): data loading and ALCE's verifiable-generation prompts."""
