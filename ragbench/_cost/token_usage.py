"""The tokens of a run's traced LLM calls added up by the role that answered them, and priced by that role's model
(`TokenUsage`; ragbench._cost.prices says which model answers for each role and its price).

Prompt tokens the vendor's prompt cache served (`Step.cached_prompt_tokens`) are priced at the entry's
`cached_prompt`, those written to it (Anthropic's cache writes) at its `cache_write` (the 5-minute cache) and
`cache_write_1h`; the built-in prices give those their pages list (OpenAI's cached input, Anthropic's cache hits
and writes). An `anthropic:` model's entry without them is priced by Anthropic's documented multipliers of its
`prompt` price (reads 0.1x, writes 1.25x, 1-hour writes 2x), and `price_note` says so. Another model that reported such tokens and whose
entry lacks their price has no money figure (`usd` null, `usd_note` naming the missing price): OpenAI's and
Google's discounts differ by model, and a cached token is never priced at the full rate unsaid. In a batch the
cache prices are halved too (the discounts stack). `prompt_cache` gives the tokens read and written and the
dollars saved against the same calls with no cache (negative where writes cost more than the reads saved).
"""

from __future__ import annotations

from .._types import Step
from .cost_schema import ModelTokens, PromptCache, TokenCost
from .prices import ANTHROPIC_CACHE, PER, ModelPrices, Priced
from .vendor_prices import Price

ANTHROPIC_NOTE = "{model}: prompt cache priced by Anthropic's multipliers of the prompt price ({keys})"
NO_CACHE_PRICE = "{model} reported {what} but its price has no {key}: add it with --price-table FILE"
CACHE_TOKENS = {
    "cached_prompt": "prompt tokens read from its prompt cache",
    "cache_write": "prompt tokens written to its prompt cache",
    "cache_write_1h": "prompt tokens written to its 1-hour prompt cache",
}


class TokenUsage:
    """Traced LLM calls added up - calls, those the response cache answered, those that failed, and the tokens
    of the calls sent by the role that answered them (a failed call's: those its vendor billed for answers not
    taken, also shown apart as `billed_no_answer`) - and priced (`figures`). A role whose calls the cache
    answered (a --resume's, the earlier attempt's calls) is there with none sent: its model named, and its money
    $0 where it has a price, no figure where it has none (not a made-up $0)."""

    def __init__(self) -> None:
        self.calls = self.cached = self.errors = 0
        # role -> [calls sent, prompt, completion, prompt cache reads, writes, 1-hour writes]
        self.tokens: dict[str | None, list[int]] = {}
        self.unanswered = [0, 0, 0]  # failed calls the vendor billed answers for: calls, prompt, completion tokens

    def add(self, step: Step, role: str | None) -> None:
        self.calls += 1
        self.errors += step.error is not None
        sent = self.tokens.setdefault(role, [0] * 6)  # a model the cache answered for is named and priced too
        if step.cached:
            self.cached += 1
            return
        counts = (1, step.prompt_tokens, step.completion_tokens, step.cached_prompt_tokens, step.cache_write_tokens)
        for n, count in enumerate((*counts, step.cache_write_1h_tokens)):
            sent[n] += count
        if step.error is not None and (step.prompt_tokens or step.completion_tokens):  # billed, no answer taken
            for n, count in enumerate(counts[:3]):
                self.unanswered[n] += count

    def figures(self, prices: ModelPrices) -> TokenCost:
        """The counts, the tokens sent and their price in US dollars (null with `usd_note` where a model that
        answered has none); with calls to several models, each one's own (`by_model`)."""
        models = {role: prices.of(role) for role in self.tokens}
        each = {role: _priced_tokens(models[role], sent) for role, sent in self.tokens.items()}
        unpriced = [entry["usd_note"] for entry in each.values() if entry["usd"] is None]
        out: TokenCost = {  # its keys in the order written
            "calls": self.calls,
            "cached": self.cached,
            "errors": self.errors,
            "prompt_tokens": sum(sent[1] for sent in self.tokens.values()),
            "completion_tokens": sum(sent[2] for sent in self.tokens.values()),
            "usd": None if unpriced else round(sum(entry["usd"] or 0.0 for entry in each.values()), 6),
        }
        if unpriced:
            out["usd_note"] = "; ".join(dict.fromkeys(unpriced))
        caches = [entry["prompt_cache"] for entry in each.values() if "prompt_cache" in entry]
        if caches:
            out["prompt_cache"] = {
                "read_tokens": sum(cache["read_tokens"] for cache in caches),
                "write_tokens": sum(cache["write_tokens"] for cache in caches),
                "write_1h_tokens": sum(cache["write_1h_tokens"] for cache in caches),
                "usd_saved": None if unpriced else round(sum(c.get("usd_saved") or 0.0 for c in caches), 6),
            }
        if self.unanswered[0]:
            calls, prompt, completion = self.unanswered
            out["billed_no_answer"] = {"calls": calls, "prompt_tokens": prompt, "completion_tokens": completion}
        notes = [entry["price_note"] for entry in each.values() if "price_note" in entry]
        if notes:
            out["price_note"] = "; ".join(notes)
        if len(each) == 1:
            (model,) = models.values()
            out["model"] = model.model
            if model.price is not None and not unpriced:
                out["price_per_million"] = dict(model.price)
        elif each:
            out["by_model"] = {models[role].label: entry for role, entry in each.items()}
        return out


def usd_of(price: Price, prompt: int, completion: int, read: int = 0, write: int = 0, write_1h: int = 0) -> float:
    """One call's dollars at `price`, as results.json prices them; prompt-cache tokens the entry has no price for at
    the prompt's (a --max-cost counts them at no less: ragbench._cost.spending_cap)."""
    usd = _priced_tokens(Priced("", "", price, None), [1, prompt, completion, read, write, write_1h])["usd"]
    return float(usd) if usd is not None else (prompt * price["prompt"] + completion * price["completion"]) / PER


def _priced_tokens(model: Priced, sent: list[int]) -> ModelTokens:
    """One model's calls, tokens and price; `prompt_cache` where its prompt cache read or wrote tokens."""
    calls, prompt, completion, read, write, write_1h = sent
    out: ModelTokens = {
        "model": model.model,
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "usd": None,
    }
    cache: PromptCache = {"read_tokens": read, "write_tokens": write, "write_1h_tokens": write_1h}
    # the prompt cache's tokens by their price: read, written to the 5-minute cache, to the 1-hour one
    cached = {"cached_prompt": read, "cache_write": write - write_1h, "cache_write_1h": write_1h}
    price = model.price
    missing = [key for key, count in cached.items() if count and price is not None and key not in price]
    if price is None or missing:
        note = model.note or ""  # a model without a price says why
        if missing:
            key = missing[0]
            note = NO_CACHE_PRICE.format(model=model.model, what=f"{cached[key]:,} {CACHE_TOKENS[key]}", key=key)
        out["usd_note"] = note
        if read or write:
            out["prompt_cache"] = cache
        return out
    paid = {"prompt": prompt - read - write, "completion": completion, **cached}
    usd = sum(count * price[key] for key, count in paid.items() if count) / PER
    out["usd"] = round(usd, 6)
    if read or write:
        uncached = (prompt * price["prompt"] + completion * price["completion"]) / PER
        out["prompt_cache"] = {**cache, "usd_saved": round(uncached - usd, 6)}
        derived = [
            f"{key} {ANTHROPIC_CACHE[key]:g}x" for key, count in cached.items() if count and key in model.derived
        ]
        if derived:
            out["price_note"] = ANTHROPIC_NOTE.format(model=model.model, keys=", ".join(derived))
    return out
