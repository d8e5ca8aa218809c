"""What results.json's `system_stats` and format-adherence lines say of a run of `search_agent`, from its examples'
extras."""

from __future__ import annotations

from collections import Counter
from statistics import mean

from ragbench.api import FormatCheck, SampleRecord
from ragbench.api.data import JsonObject


def statistics(samples: list[SampleRecord]) -> JsonObject | None:
    """How the examples ended, the turns and calls per tool an example took on average (BrowseComp-Plus's
    evaluation reports the calls per tool), and the calls whose arguments did not fit their tool's parameters."""
    ended = [extras for extras in (s.extras for s in samples if s.error is None) if "status" in extras]
    if not ended:
        return None
    tools = sorted({tool for extras in ended for tool in extras["tool_call_counts"]})
    return {
        "examples": len(ended),
        "status": dict(sorted(Counter(extras["status"] for extras in ended).items())),
        "mean_turns": round(mean(extras["turns"] for extras in ended), 3),
        "mean_calls": {tool: round(mean(e["tool_call_counts"].get(tool, 0) for e in ended), 3) for tool in tools},
        "invalid_tool_calls": sum(extras.get("invalid_tool_calls", 0) for extras in ended),
    }


def qwen_call_adherence(samples: list[SampleRecord]) -> list[FormatCheck] | None:
    """qwen_client's calls, read from the text, whose arguments fit the tool's input schema (native calls that
    do not fit are counted, and warned of, by the run itself: results.json's `repeated_work`)."""
    ended = [extras for extras in (s.extras for s in samples if s.error is None) if "invalid_tool_calls" in extras]
    if not ended:
        return None
    calls = sum(item["type"] == "tool_call" for extras in ended for item in extras["result"])
    return [
        {
            "format": "<tool_call> arguments that fit the tool's input schema (a string query or docid)",
            "followed": calls - sum(extras["invalid_tool_calls"] for extras in ended),
            "of": calls,
            "fix": "such calls were answered with the error (docs/agents.md, Invalid tool arguments); use a "
            "model trained to call these tools",
        }
    ]
