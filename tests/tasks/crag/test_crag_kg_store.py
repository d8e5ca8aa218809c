"""The mock KG store's table endpoints answer as cragapi's code does, for any table and any query: an entry is
`table.get(query)`, a field of one is `table[query][field] or None` (None where either is missing), EPS and P/E
are `(info.get(query) or {}).get(field)` (a falsy value kept)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.tasks.crag.kg.domains import FinanceKg, MusicKg
from ragbench.tasks.crag.kg.name_search import FastSearch, OkapiSearch
from ragbench.tasks.crag.kg.store import ENTRY_FIELDS, TABLE_ENTRIES, KgStore

NAMES = st.sampled_from(["Adele", "adele", "Maroon 5", "", "country", "0"])
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=4)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3))
# an entry: often a record with the fields asked for, sometimes anything else
ENTRIES = st.dictionaries(
    st.sampled_from(["country", "birth_date", "author", "date", "forwardEps", "forwardPE"]), VALUES
)
TABLES = st.dictionaries(NAMES, ENTRIES | VALUES, max_size=4)


def store_with(finance: FinanceKg, music: MusicKg) -> KgStore:
    store = KgStore(Path("/nonexistent/cragkg"))  # no folder: every domain unavailable until set here
    store.domains.update(finance=finance, music=music)
    return store


def upstream_field(table: dict[str, object], name: str, field: str) -> object:
    """cragapi/music.py's `self.artist_dict[name][field]`, an error or an empty value answered None."""
    try:
        return table[name][field] or None  # type: ignore[index]
    except (KeyError, TypeError):
        return None


@settings(max_examples=60, deadline=None)
@given(tables=st.lists(TABLES, min_size=9, max_size=9), query=NAMES)
def test_table_endpoints_answer_as_cragapi(tables, query):
    price, detailed, dividend, marketcap, info, artists, songs, works, names = tables
    finance = FinanceKg(
        {str(k): str(v) for k, v in names.items()},
        OkapiSearch(["Apple Inc."], dedupe=False),
        price,
        detailed,
        dividend,
        marketcap,
        info,
    )
    music = MusicKg(artists, songs, None, {}, {}, works, FastSearch(["Adele"]), FastSearch(["Hello"]))
    store = store_with(finance, music)
    for method, table in TABLE_ENTRIES.items():
        domain = finance if method.startswith("finance") else music if method.startswith("music") else None
        if domain is not None:
            assert store.call(method, {"query": query}) == getattr(domain, table).get(query)
    for method, (table, field) in ENTRY_FIELDS.items():
        assert store.call(method, {"query": query}) == upstream_field(getattr(music, table), query, field)
    for method, field in (("finance_get_eps", "forwardEps"), ("finance_get_pe_ratio", "forwardPE")):
        entry = info.get(query) or {}
        if isinstance(entry, dict):  # another truthy value has no .get: upstream and the store both fail
            assert store.call(method, {"query": query}) == entry.get(field)
