"""The mock KG's data and its 38 lookups, with the semantics of facebookresearch/CRAG
mock_api/cragapi/*.py, read from the upstream files in a KG folder:

  open/kg.N.jsonl.bz2                      lines [name, entity]
  movie/{movie,person,year}_db.json
  finance/company_name.dict (CSV Name,Symbol) + finance_{price,detailed_price,dividend,marketcap,info}.sqlite
  music/{artist_dict_simplified,song_dict_simplified,grammy_df,rank_dict_hot100,song_dict_hot100,artist_work_dict}.pickle
  sports/soccer_team_match_stats.pkl, sports/nba.sqlite

Pickles (music, soccer) run code when loaded, so they are read only with `allow_pickle`; the
finance SqliteDict values are pickles of plain data and are read with an unpickler that allows
no imports unless `allow_pickle`. A domain whose files are absent (or refused) is unavailable:
its endpoints answer HTTP 503 saying why.
"""

from __future__ import annotations

import bz2
import csv
import io
import json
import pickle
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.api.data import JsonObject, JsonValue, given_handle, given_text

from .domains import Domain, FinanceKg, KgTable, MovieCatalogue, MovieKg, MusicKg, OpenKg, SportsKg
from .name_search import TOP_N, FastSearch, OkapiSearch, normalize


class DomainUnavailable(RuntimeError):
    pass


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data; serve with --allow-pickle to load it")


def plain_loads(data: bytes) -> Any:
    return _PlainUnpickler(io.BytesIO(data)).load()


class SqliteValues:
    """A SqliteDict file (table "unnamed", pickled values) read without sqlitedict."""

    def __init__(self, path: Path, allow_pickle: bool) -> None:
        self.connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self.loads = pickle.loads if allow_pickle else plain_loads

    def get(self, key: str) -> Any:
        row = self.connection.execute("SELECT value FROM unnamed WHERE key = ?", (key,)).fetchone()
        return None if row is None else self.loads(row[0])


KG_FILE = "a file of CRAG's mock API knowledge graph (cragkg)"


def _load_pickle(path: Path) -> Any:
    with given_handle(path, KG_FILE) as handle:
        return pickle.load(handle)


# The endpoints that answer the entry of one of a domain's tables under the query (cragapi's `table.get(query)`)
TABLE_ENTRIES = {
    "open_get_entity": "kg",
    "movie_get_movie_info_by_id": "movie_by_id",
    "movie_get_person_info_by_id": "person_by_id",
    "finance_get_ticker_by_name": "names",
    "finance_get_price_history": "price",
    "finance_get_detailed_price_history": "detailed_price",
    "finance_get_dividends_history": "dividend",
    "finance_get_market_capitalization": "marketcap",
    "finance_get_info": "info",
    "music_get_artist_all_works": "artist_work_dict",
}
# The name searches: a domain's search over the names of one of its tables
NAME_SEARCHES = {
    "open_search_entity_by_name": "search",
    "finance_get_company_name": "search",
    "music_search_artist_entity_by_name": "artist_search",
    "music_search_song_entity_by_name": "song_search",
}
# The endpoints that answer one field of a table's entry, None where the entry or the field is missing or empty
ENTRY_FIELDS = {
    "music_get_artist_birth_place": ("artist_dict_simplified", "country"),
    "music_get_artist_birth_date": ("artist_dict_simplified", "birth_date"),
    "music_get_song_author": ("song_dict_simplified", "author"),
    "music_get_song_release_country": ("song_dict_simplified", "country"),
    "music_get_song_release_date": ("song_dict_simplified", "date"),
}


DOMAINS = ("open", "movie", "finance", "music", "sports")


class KgStore:
    """All domains of one KG folder; `call(method, body)` answers an endpoint's "result"."""

    def __init__(self, kg_dir: str | Path, allow_pickle: bool = False) -> None:
        self.dir = Path(kg_dir)
        self.allow_pickle = bool(allow_pickle)
        self.unavailable: dict[str, str] = {}
        self.domains: dict[str, Domain] = {}
        for domain in DOMAINS:
            loader: Callable[[Path], Domain] = getattr(self, "_" + domain)
            try:
                self.domains[domain] = loader(self.dir / domain)
            except DomainUnavailable as exc:
                self.unavailable[domain] = str(exc)

    def _need(self, folder: Path, *names: str, pickled: bool = False) -> list[Path]:
        paths = [folder / name for name in names]
        missing = [p.name for p in paths if not p.is_file()]
        if missing:
            raise DomainUnavailable(f"{folder} lacks {', '.join(missing)}")
        if pickled and not self.allow_pickle:
            raise DomainUnavailable(
                f"{folder.name} data is pickled ({', '.join(names)}); loading pickles runs "
                "code from the file, so it needs --allow-pickle"
            )
        return paths

    # --- loading ----------------------------------------------------------------------------
    def _open(self, folder: Path) -> OpenKg:
        files = (
            sorted(folder.glob("kg.*.jsonl.bz2"), key=lambda p: int(p.name.split(".")[1])) if folder.is_dir() else []
        )
        if not files:
            raise DomainUnavailable(f"{folder} has no kg.N.jsonl.bz2")
        kg: dict[str, JsonValue] = {}
        for path in files:
            with given_handle(path, KG_FILE) as raw, bz2.open(raw, "rt", encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        name, entity = json.loads(line)
                        kg[name] = entity
        return OpenKg(kg, OkapiSearch(list(kg), dedupe=True))

    def _movie(self, folder: Path) -> MovieKg:
        movie, person, year = (
            json.loads(given_text(p, KG_FILE))
            for p in self._need(folder, "movie_db.json", "person_db.json", "year_db.json")
        )
        from rank_bm25 import BM25Okapi

        def catalogue(db: dict[str, JsonObject]) -> MovieCatalogue:
            corpus = [key.split() for key in db]
            return MovieCatalogue(db, corpus, BM25Okapi(corpus))

        return MovieKg(
            movie=catalogue(movie),
            person=catalogue(person),
            year=year,
            movie_by_id={v["id"]: v for v in movie.values() if "id" in v},
            person_by_id={v["id"]: v for v in person.values() if "id" in v},
        )

    def _finance(self, folder: Path) -> FinanceKg:
        names = ["price", "detailed_price", "dividend", "marketcap", "info"]
        paths = self._need(folder, "company_name.dict", *[f"finance_{n}.sqlite" for n in names])
        text = given_text(paths[0], KG_FILE)
        name_dict = {row["Name"]: row["Symbol"] for row in csv.DictReader(io.StringIO(text, newline=""))}
        price, detailed_price, dividend, marketcap, info = (SqliteValues(path, self.allow_pickle) for path in paths[1:])
        search = OkapiSearch(list(name_dict), dedupe=False)
        return FinanceKg(name_dict, search, price, detailed_price, dividend, marketcap, info)

    def _music(self, folder: Path) -> MusicKg:
        files = [
            "artist_dict_simplified",
            "song_dict_simplified",
            "grammy_df",
            "rank_dict_hot100",
            "song_dict_hot100",
            "artist_work_dict",
        ]
        data = dict(zip(files, map(_load_pickle, self._need(folder, *[f + ".pickle" for f in files], pickled=True))))
        return MusicKg(
            **data,
            artist_search=FastSearch(list(data["artist_dict_simplified"])),
            song_search=FastSearch(list(data["song_dict_simplified"])),
        )

    def _sports(self, folder: Path) -> SportsKg:
        nba, soccer = None, None
        if (folder / "nba.sqlite").is_file():
            nba = sqlite3.connect(f"file:{folder / 'nba.sqlite'}?mode=ro", uri=True, check_same_thread=False)
        if (folder / "soccer_team_match_stats.pkl").is_file() and self.allow_pickle:
            import pandas as pd

            stats = pd.read_pickle(folder / "soccer_team_match_stats.pkl")
            soccer = stats[stats.index.get_level_values("league").notna()]
        if nba is None and soccer is None:
            self._need(folder, "nba.sqlite", "soccer_team_match_stats.pkl", pickled=True)
        return SportsKg(nba, soccer)

    # --- answering --------------------------------------------------------------------------
    def domain(self, name: str) -> Domain:
        if name not in self.domains:
            raise DomainUnavailable(f"the {name} KG is not loaded: {self.unavailable.get(name, 'unknown domain')}")
        return self.domains[name]

    def call(self, method: str, body: Mapping[str, Any]) -> Any:
        domain = method.split("_", 1)[0]
        data: Any = self.domain(domain)
        if method in TABLE_ENTRIES:
            return _entry(getattr(data, TABLE_ENTRIES[method]), **body)
        if method in NAME_SEARCHES:
            return _search(getattr(data, NAME_SEARCHES[method]), **body)
        if method in ENTRY_FIELDS:
            table, field = ENTRY_FIELDS[method]
            return _entry_field(getattr(data, table), field, **body)
        handler: Callable[..., Any] = getattr(self, "_" + method)
        if domain == "sports":
            key = "nba" if "_nba_" in method else "soccer"
            data = getattr(data, key)
            if data is None:
                raise DomainUnavailable(
                    f"the {key} KG is not loaded (nba.sqlite / soccer_team_match_stats.pkl with --allow-pickle)"
                )
        return handler(data, **body)

    # movie (cragapi/movie.py); index keys are the stored names, split on whitespace
    def _movie_search(self, catalogue: MovieCatalogue, query: Any) -> Any:
        scores = catalogue.bm25.get_scores(normalize(query).split())
        corpus = catalogue.corpus
        top = [" ".join(corpus[i]) for i in np.argsort(scores)[::-1][:TOP_N] if scores[i] != 0]
        return [catalogue.entries[key] for key in top[:TOP_N]]

    def _movie_get_person_info(self, d: MovieKg, query: Any) -> Any:
        return self._movie_search(d.person, query)

    def _movie_get_movie_info(self, d: MovieKg, query: Any) -> Any:
        return self._movie_search(d.movie, query)

    def _movie_get_year_info(self, d: MovieKg, query: Any) -> Any:
        if int(query) not in range(1990, 2022):
            raise ValueError("Year must be between 1990 and 2021")
        return d.year.get(str(query))

    # finance (cragapi/finance.py): a missing company has no EPS or P/E ratio (None); a falsy one is as stored
    def _finance_get_eps(self, d: FinanceKg, query: Any) -> Any:
        return (d.info.get(query) or {}).get("forwardEps")

    def _finance_get_pe_ratio(self, d: FinanceKg, query: Any) -> Any:
        return (d.info.get(query) or {}).get("forwardPE")

    # music (cragapi/music.py)
    def _music_get_billboard_rank_date(self, d: MusicKg, rank: Any, date: Any = None) -> Any:
        entries = d.rank_dict_hot100.get(str(rank))
        if entries is None:
            return [None, None]
        if date:
            for item in entries:
                if item["Date"] == date:
                    return [[item["Song"]], [item["Artist"]]]
            return [[], []]
        return [[item["Song"] for item in entries], [item["Artist"] for item in entries]]

    def _music_get_billboard_attributes(self, d: MusicKg, date: Any, attribute: Any, song_name: Any) -> Any:
        row = d.song_dict_hot100.get(song_name, {}).get(date)
        if row is None:
            return None
        # the row layout differs when rank_last_week is "-" (cragapi/music.py)
        columns = (
            {"rank_last_week": 6, "weeks_in_chart": 5, "top_position": 4}
            if row[6] == "-"
            else {"rank_last_week": 4, "weeks_in_chart": 6, "top_position": 5}
        )
        return row[columns.get(attribute, 3)]

    def _grammy_by_category(self, d: MusicKg, query: Any, category: str) -> Any:
        if query < 1957 or query > 2019:
            return None
        df = d.grammy_df
        return df[(df["category"] == category) & (df["year"] == query)]["nominee"].tolist()

    def _music_grammy_get_best_artist_by_year(self, d: MusicKg, query: Any) -> Any:
        return self._grammy_by_category(d, query, "Best New Artist")

    def _music_grammy_get_best_song_by_year(self, d: MusicKg, query: Any) -> Any:
        return self._grammy_by_category(d, query, "Song Of The Year")

    def _music_grammy_get_best_album_by_year(self, d: MusicKg, query: Any) -> Any:
        return self._grammy_by_category(d, query, "Album Of The Year")

    def _artist_rows(self, d: MusicKg, name: str) -> list[int]:
        return [
            i
            for column in ("nominee", "artist", "workers")
            for i, value in enumerate(d.grammy_df[column])
            if name in str(value)
        ]

    def _music_grammy_get_award_count_by_artist(self, d: MusicKg, query: Any) -> Any:
        return len(self._artist_rows(d, query))

    def _music_grammy_get_award_count_by_song(self, d: MusicKg, query: Any) -> Any:
        return int((d.grammy_df["nominee"] == query).sum())

    def _music_grammy_get_award_date_by_artist(self, d: MusicKg, query: Any) -> Any:
        years = d.grammy_df["year"]
        return [int(x) for x in set(years[i] for i in set(self._artist_rows(d, query)))]

    def _music_grammy_get_all_awarded_artists(self, d: MusicKg) -> Any:
        df = d.grammy_df
        return df[df["category"] == "Best New Artist"]["nominee"].dropna().unique().tolist()

    def _music_get_members(self, d: MusicKg, query: Any) -> Any:
        try:
            return list(set(d.artist_dict_simplified[query]["members"]))
        except (KeyError, TypeError):
            return None

    def _music_get_lifespan(self, d: MusicKg, query: Any) -> Any:
        try:
            artist = d.artist_dict_simplified[query]
            return [artist["birth_date"], artist["end_date"]]
        except (KeyError, TypeError):
            return [None, None]

    # sports (cragapi/sports.py); any error or no rows gives None, as server.py's try/except
    def _sports_soccer_get_games_on_date(self, stats: Any, date: Any, team_name: Any = None) -> Any:
        try:
            rows = stats if team_name is None else stats.loc[(slice(None), slice(None), team_name, slice(None)), :]
            formats = {3: "%Y-%m-%d", 2: "%Y-%m", 1: "%Y"}
            parts = len(date.split("-"))
            if parts not in formats:
                return None
            rows = rows[rows["date"].dt.strftime(formats[parts]) == date]
            return json.loads(rows.to_json(date_format="iso")) if len(rows) else None
        except Exception:
            return None

    @staticmethod
    def _time_condition(date: str) -> tuple[str, tuple[Any, ...]]:
        formats = {3: "%Y-%m-%d", 2: "%Y-%m", 1: "%Y"}
        parts = len(date.split("-"))
        return (f"strftime('{formats[parts]}', game_date) = ?", (date,)) if parts in formats else ("1", ())

    def _nba_frame(self, connection: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> Any:
        import pandas as pd

        try:
            frame = pd.read_sql(sql, connection, params=params)
            return json.loads(frame.to_json(date_format="iso")) if len(frame) else None
        except Exception:
            return None

    def _sports_nba_get_games_on_date(self, connection: sqlite3.Connection, date: Any, team_name: Any = None) -> Any:
        # upstream interpolates strings into the SQL; parameters give the same rows (a quote in a
        # name made upstream's query fail -> null; here it matches nothing -> null)
        condition, params = self._time_condition(date)
        if team_name is not None:
            condition = f"(team_name_home = ? or team_name_away = ?) and {condition}"
            params = (team_name, team_name, *params)
        return self._nba_frame(connection, f"select * from game where {condition}", params)

    def _sports_nba_get_play_by_play_data_by_game_ids(self, connection: sqlite3.Connection, game_ids: Any) -> Any:
        marks = ", ".join("?" for _ in game_ids)
        return self._nba_frame(connection, f"select * from play_by_play where game_id in ({marks})", tuple(game_ids))


def _entry(table: KgTable, query: Any) -> Any:
    return table.get(query)


def _search(names: OkapiSearch | FastSearch, query: Any) -> Any:
    return names.search(query)


def _entry_field(table: KgTable, field: str, query: Any) -> Any:
    """cragapi's `table[query][field]`, None where either is missing or the value is empty."""
    try:
        return table.get(query)[field] or None
    except (KeyError, TypeError):
        return None
