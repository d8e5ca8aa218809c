"""The shape of each domain's data in the mock KG (store.KgStore loads them from the upstream files)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ragbench.api.data import JsonObject, JsonValue

from .name_search import FastSearch, OkapiSearch


class KgTable(Protocol):
    """What the lookups read of a table: a dict, a pickled upstream dict or a SqliteDict file."""

    def get(self, key: Any, /) -> Any: ...


@dataclass(frozen=True)
class OpenKg:
    kg: dict[str, JsonValue]  # name -> entity, as the kg.N.jsonl.bz2 lines hold them
    search: OkapiSearch


@dataclass(frozen=True)
class MovieCatalogue:
    """movie_db.json or person_db.json: name -> entity, and the BM25 index over the names split on whitespace."""

    entries: dict[str, JsonObject]
    corpus: list[list[str]]
    bm25: Any  # rank_bm25.BM25Okapi (untyped)


@dataclass(frozen=True)
class MovieKg:
    movie: MovieCatalogue
    person: MovieCatalogue
    year: dict[str, JsonValue]
    movie_by_id: dict[int, JsonObject]
    person_by_id: dict[int, JsonObject]


@dataclass(frozen=True)
class FinanceKg:
    names: dict[str, str]  # company name -> ticker
    search: OkapiSearch
    price: KgTable  # a SqliteDict file (store.SqliteValues)
    detailed_price: KgTable
    dividend: KgTable
    marketcap: KgTable
    info: KgTable


@dataclass(frozen=True)
class MusicKg:
    """The upstream pickles (their contents as upstream pickled them) and the two name searches."""

    artist_dict_simplified: Mapping[str, Any]
    song_dict_simplified: Mapping[str, Any]
    grammy_df: Any  # a pandas DataFrame
    rank_dict_hot100: Mapping[str, Any]
    song_dict_hot100: Mapping[str, Any]
    artist_work_dict: Mapping[str, Any]
    artist_search: FastSearch
    song_search: FastSearch


@dataclass(frozen=True)
class SportsKg:
    nba: sqlite3.Connection | None
    soccer: Any  # pandas DataFrame of the soccer match stats, None where not loaded


Domain = OpenKg | MovieKg | FinanceKg | MusicKg | SportsKg
