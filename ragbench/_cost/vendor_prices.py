"""The built-in prices: each vendor's list prices, read from the price lists shipped with ragbench
(ragbench/_cost/price_lists/<vendor>.yaml), and what one model's price entry is (`price_entry`).

A price list is data, not code, so each price says which page it was read from and when:

```yaml
engine: anthropic          # the engine these prices apply to, sent to the vendor (prices.VENDOR_HOSTS)
vendor: Anthropic
lists:                     # one per page read
  - source: https://...    # the vendor's page the prices were read from
    read: 2026-11-28 ...   # when (and, for a stored copy, from what)
    models:                # MODEL (as the engine names it): an entry of --price-table's shape
      claude-opus-5: {prompt: 5.00, completion: 25.00, cached_prompt: 0.50, ...}
```

An entry holds only prices its page gives: a model whose price one entry cannot say exactly (a second price past
a prompt length, as Claude Sonnet 4's over 200K input tokens) is left out, and so unpriced, rather than priced
wrong. The lists are checked when first read: one that does not read (not UTF-8, not YAML, a model given twice in
a list) or is not of this shape is a fault of the installed package, a RuntimeError of one line naming the file,
what is wrong and the fix (reinstall ragbench): `DamagedPriceList`, which a run takes as the reason its models
are not priced (`prices.priced`), not as the end of the run.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from .._yaml_tasks.located import PlainLoader, read_yaml_text

if TYPE_CHECKING:  # importlib.abc's in 3.10, importlib.resources.abc's from 3.11
    from importlib.abc import Traversable

Price = dict[str, float]
PRICE_LISTS = resources.files("ragbench._cost") / "price_lists"  # <vendor>.yaml, one per vendor
BATCH_KEYS = ("batch_prompt", "batch_completion")  # an entry's batch API prices, optional (both or neither)
CACHE_KEYS = ("cached_prompt", "cache_write", "cache_write_1h")  # an entry's prompt cache prices, each optional
LIST_KEYS = {"engine", "vendor", "lists"}
DAMAGED = (  # a price list that does not read or is not of its shape: one line, its file, what, the fix
    "price list {name} (a file of the installed ragbench): {what}; reinstall ragbench "
    "(pip install --force-reinstall ragbench)"
)
SOURCE_KEYS = {"source", "read", "models"}


class DamagedPriceList(RuntimeError):
    """A price list shipped with ragbench that does not read or is not of its shape (`DAMAGED`)."""


def price_entry(entry: object) -> Price | None:
    """A price entry's prices - `prompt` and `completion`, the batch pair or neither, any of the cache prices -
    each a finite number >= 0 (not NaN, not an infinity, not true or false); else None."""
    if not isinstance(entry, dict) or set(entry) - set(CACHE_KEYS) not in (
        {"prompt", "completion"},
        {"prompt", "completion", *BATCH_KEYS},
    ):
        return None
    price = {}
    for key, value in entry.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        try:
            number = float(value)
        except OverflowError:  # an integer past any float
            return None
        if not (math.isfinite(number) and number >= 0):
            return None
        price[str(key)] = number
    return price


@functools.cache
def vendor_prices() -> dict[str, dict[str, Price]]:
    """engine -> model -> its built-in price, from every shipped price list."""
    return read_price_lists(PRICE_LISTS)


def read_price_lists(folder: Traversable) -> dict[str, dict[str, Price]]:
    """The price lists in `folder` (each `*.yaml`), by engine; DamagedPriceList naming the first that is not one."""
    out: dict[str, dict[str, Price]] = {}
    for path in sorted((p for p in folder.iterdir() if p.name.endswith(".yaml")), key=lambda p: p.name):
        engine, models = _price_list(path.name, _listed(path))
        if engine in out:
            raise DamagedPriceList(DAMAGED.format(name=path.name, what=f"a second list for engine {engine!r}"))
        out[engine] = models
    return out


def _listed(path: Traversable) -> Any:
    """A price list's data; DamagedPriceList where it does not read: not UTF-8, not YAML, a key given twice
    (YAML would keep the last price silently)."""
    try:
        return read_yaml_text(path.read_text(encoding="utf-8"), path.name, PlainLoader, "a price list is data")
    except UnicodeDecodeError as exc:
        raise DamagedPriceList(DAMAGED.format(name=path.name, what=f"not UTF-8 (byte at offset {exc.start})")) from None
    except OSError as exc:
        raise DamagedPriceList(DAMAGED.format(name=path.name, what=f"cannot read it ({exc.strerror or exc})")) from None
    except ConfigError as exc:  # `file:line: problem`
        where = str(exc).removeprefix(f"{path.name}:")
        raise DamagedPriceList(DAMAGED.format(name=path.name, what=f"line {where}")) from None


def _price_list(name: str, data: Any) -> tuple[str, dict[str, Price]]:
    def wrong(what: str) -> DamagedPriceList:
        return DamagedPriceList(DAMAGED.format(name=name, what=what))

    if not isinstance(data, dict) or set(data) != LIST_KEYS or not isinstance(data["lists"], list):
        raise wrong(f"expected the keys {sorted(LIST_KEYS)}, `lists` a list")
    if not all(isinstance(data[key], str) and data[key] for key in ("engine", "vendor")):
        raise wrong("`engine` and `vendor` must be names")
    models: dict[str, Price] = {}
    for at, listed in enumerate(data["lists"]):
        if not isinstance(listed, dict) or set(listed) != SOURCE_KEYS:
            raise wrong(f"lists[{at}] must have the keys {sorted(SOURCE_KEYS)}")
        if not (isinstance(listed["source"], str) and listed["source"].startswith("https://")):
            raise wrong(f"lists[{at}] source must be the https:// address of the page read")
        if not (isinstance(listed["read"], str) and listed["read"].strip()):
            raise wrong(f"lists[{at}] must say when its page was `read`")
        if not isinstance(listed["models"], Mapping) or not listed["models"]:
            raise wrong(f"lists[{at}] models must be MODEL: price entries")
        for model, entry in listed["models"].items():
            price = price_entry(entry)
            if price is None:
                raise wrong(f"{model!r} is no price entry (prompt and completion, finite numbers >= 0): {entry!r}")
            if str(model) in models:
                raise wrong(f"{model!r} is priced twice")
            models[str(model)] = price
    return data["engine"], models
