"""The `vanilla` system: Retrieve-then-read with the task's baseline prompt. system.py holds the System class the
registry loads.
"""
