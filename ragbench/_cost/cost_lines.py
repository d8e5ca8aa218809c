"""What results.json's `model_cost` and `judge_cost` say, as the console's lines and report.md's (the viewer shows the
same lines on a run's page)."""

from __future__ import annotations

from .cost_schema import CostFigures, TokenCost


def money_phrase(cost: TokenCost) -> str:
    """A `TokenCost`'s money: dollars, or why there is no figure; with several models, each one's."""
    money = f"${cost['usd']:.4f}" if cost.get("usd") is not None else f"no money figure ({cost.get('usd_note')})"
    shares = [
        f"{label} {share['model']} " + (f"${share['usd']:.4f}" if share.get("usd") is not None else "not priced")
        for label, share in (cost.get("by_model") or {}).items()
    ]
    return money + (f" ({', '.join(shares)})" if shares else "")


def _calls_phrase(cost: TokenCost) -> str:
    return (
        f"{cost['calls']} calls ({cost['cached']} from the cache, {cost['errors']} failed{_billed_phrase(cost)}), tokens "
        f"{cost['prompt_tokens']} in / {cost['completion_tokens']} out{_prompt_cache_phrase(cost)}, {money_phrase(cost)}"
    )


def _billed_phrase(cost: TokenCost) -> str:
    """Of the failed calls, those whose vendor billed answers not taken, and those tokens (counted in the totals)."""
    billed = cost.get("billed_no_answer")
    if not billed:
        return ""
    return f", {billed['calls']} of them billed with no answer: {billed['prompt_tokens']} in / {billed['completion_tokens']} out"


def _prompt_cache_phrase(cost: TokenCost) -> str:
    """What the vendor's prompt cache read and wrote of the prompt tokens, and saved; nothing where it did neither."""
    cache = cost.get("prompt_cache")
    if not cache:
        return ""
    saved = "" if cache.get("usd_saved") is None else f", ${cache['usd_saved']:.4f} saved"
    return f" ({cache['read_tokens']} read from the prompt cache, {cache['write_tokens']} written{saved})"


def judge_cost_lines(results: CostFigures) -> list[str]:
    """One line per task and judged metric: its judge calls, tokens and money."""
    return [
        f"{task}: judging {name}: {_calls_phrase(cost)}"
        for task, metrics in (results.judge_cost or {}).items()
        for name, cost in metrics.items()
    ]


def model_cost_lines(results: CostFigures) -> list[str]:
    """One line per task: the system's own model calls, tokens and money."""
    return [
        f"{task}: the system's model{'' if cost.get('by_model') else ' ' + (cost.get('model') or '?')}: "
        + _calls_phrase(cost)
        for task, cost in (results.model_cost or {}).items()
    ]
