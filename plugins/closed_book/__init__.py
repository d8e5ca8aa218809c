"""The `closed_book` system: The LLM alone, prompted with the task's own baseline prompt. system.py holds the
System class the registry loads.
"""
