"""The call pool: every in-flight example's LLM calls (and a retriever's searches) batched onto their engines
(`Scheduler`, scheduler.py), each engine's queue (engine_queue.py), the answers as they arrive (answers.py), what it
counts (`CallStats`, stats.py) and the spending gate it asks (spend_gate.py)."""

from .scheduler import AGE_LIMIT, Scheduler
from .stats import CallStats

__all__ = ["AGE_LIMIT", "CallStats", "Scheduler"]
