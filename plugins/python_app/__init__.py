"""The `python` system: a Python function of the user's (sync or async), called once per example, its answer and
passages scored and its spans captured in process. system.py holds the System class the registry loads.
"""
