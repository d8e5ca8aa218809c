"""A tiny mock KG in the upstream file formats (written by us, see tasks/crag/kg/store.py), for tests."""

from __future__ import annotations

import bz2
import json
import pickle
import sqlite3
from pathlib import Path


def _sqlitedict(path: Path, values: dict) -> None:
    """The SqliteDict layout: table "unnamed" (key TEXT PRIMARY KEY, value BLOB), pickled values."""
    connection = sqlite3.connect(path)
    connection.execute('CREATE TABLE IF NOT EXISTS "unnamed" (key TEXT PRIMARY KEY, value BLOB)')
    connection.executemany(
        'REPLACE INTO "unnamed" (key, value) VALUES (?, ?)',
        [(k, pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)) for k, v in values.items()],
    )
    connection.commit()
    connection.close()


FILLER_ARTISTS = 100  # the music BM25 keeps only terms with idf > 4, i.e. in well under 1/55 of names


def write_tiny_kg(root: Path) -> Path:
    import pandas as pd

    (root / "open").mkdir(parents=True)
    entities = [
        [
            "Florida",
            {
                "summary_text": "Florida is a state.",
                "summary_structured": {"capital": "Tallahassee"},
                "raw_mediawiki": "{{Infobox}} Florida",
            },
        ],
        [
            "Florida City, Florida",
            {"summary_text": "Florida City is a city.", "summary_structured": {}, "raw_mediawiki": ""},
        ],
        ["Orlando, Florida", {"summary_text": "Orlando.", "summary_structured": {}, "raw_mediawiki": ""}],
    ]
    entities += [
        [f"Place {i}", {"summary_text": f"Place {i}.", "summary_structured": {}, "raw_mediawiki": ""}]
        for i in range(12)
    ]
    for part, chunk in enumerate((entities[:2], entities[2:])):
        with bz2.open(root / "open" / f"kg.{part}.jsonl.bz2", "wt", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(e) + "\n" for e in chunk))

    (root / "movie").mkdir()
    movies = {
        "the matrix": {
            "title": "The Matrix",
            "id": 603,
            "budget": 63000000,
            "release_date": "1999-03-30",
            "oscar_awards": [],
            "cast": [],
            "crew": [],
        },
        "the matrix reloaded": {"title": "The Matrix Reloaded", "id": 604, "budget": 150000000},
        "inception": {"title": "Inception", "id": 27205, "budget": 160000000},
    }
    persons = {
        "keanu reeves": {
            "name": "Keanu Reeves",
            "id": 6384,
            "acted_movies": [603, 604],
            "birthday": "1964-09-02",
            "oscar_awards": [],
        },
        "lana wachowski": {"name": "Lana Wachowski", "id": 9340, "directed_movies": [603]},
    }
    # rank_bm25's idf is <= 0 for a term in half the names or more: a few fillers keep real names findable
    movies.update({f"filler movie{i}": {"title": f"Filler Movie{i}", "id": 1000 + i} for i in range(10)})
    persons.update({f"filler person{i}": {"name": f"Filler Person{i}", "id": 2000 + i} for i in range(10)})
    years = {
        "1999": {
            "movie_list": [603],
            "oscar_awards": [
                {
                    "year_ceremony": 2000,
                    "category": "FILM EDITING",
                    "name": "Zach Staenberg",
                    "film": "The Matrix",
                    "winner": True,
                }
            ],
        }
    }
    for name, db in (("movie_db", movies), ("person_db", persons), ("year_db", years)):
        (root / "movie" / f"{name}.json").write_text(json.dumps(db))

    (root / "finance").mkdir()
    (root / "finance" / "company_name.dict").write_text(
        "Name,Symbol\nApple Inc. Common Stock,AAPL\nMeta Platforms Inc. Class A Common Stock,META\n"
        "Applied Materials Inc. Common Stock,AMAT\n"
    )
    _sqlitedict(
        root / "finance" / "finance_price.sqlite",
        {
            "META": {
                "2024-02-28 00:00:00 EST": {
                    "Open": 484.0,
                    "High": 487.0,
                    "Low": 481.0,
                    "Close": 484.0,
                    "Volume": 9000000,
                }
            }
        },
    )
    _sqlitedict(
        root / "finance" / "finance_detailed_price.sqlite",
        {
            "META": {
                "2024-02-28 09:30:00 EST": {"Open": 484.1, "High": 484.1, "Low": 484.1, "Close": 484.1, "Volume": 629}
            }
        },
    )
    _sqlitedict(root / "finance" / "finance_dividend.sqlite", {"AAPL": {"2024-02-09 00:00:00 EST": 0.24}})
    _sqlitedict(root / "finance" / "finance_marketcap.sqlite", {"META": 1234000000000.0})
    _sqlitedict(
        root / "finance" / "finance_info.sqlite",
        {"META": {"forwardEps": 21.5, "forwardPE": 22.5, "sector": "Communication Services"}},
    )

    (root / "music").mkdir()
    artists = {
        "Adele": {"country": "NO", "birth_date": "1988-05-05", "end_date": None, "members": []},
        "Maroon 5": {
            "country": "US",
            "birth_date": "1994",
            "end_date": None,
            "members": ["Adam Levine", "James Valentine", "Adam Levine"],
        },
    }
    artists.update(
        {
            f"Filler Artist{i}": {"country": "", "birth_date": "", "end_date": None, "members": []}
            for i in range(FILLER_ARTISTS)
        }
    )
    songs = {"Hello": {"author": "Adele", "country": "GB", "date": "2015-10-23"}}
    songs.update({f"Filler Song{i}": {"author": "", "country": "", "date": ""} for i in range(FILLER_ARTISTS)})
    grammy = pd.DataFrame(
        {
            "year": [2009, 2012, 2016],
            "category": ["Best New Artist", "Album Of The Year", "Song Of The Year"],
            "nominee": ["Adele", "21", "Hello"],
            "artist": ["Adele", "Adele", "Adele"],
            "workers": ["", "Paul Epworth", "Greg Kurstin"],
        }
    )
    ranks = {
        "1": [
            {"Date": "2024-02-24", "Song": "Lovin On Me", "Artist": "Jack Harlow"},
            {"Date": "2024-03-02", "Song": "Texas Hold 'Em", "Artist": "Beyonce"},
        ]
    }
    hot = {"Texas Hold 'Em": {"2024-03-02": ["2024-03-02", "Texas Hold 'Em", "Beyonce", "1", "1", "2", "2"]}}
    works = {"Adele": ["Hello", "21", "25"]}
    for name, value in (
        ("artist_dict_simplified", artists),
        ("song_dict_simplified", songs),
        ("grammy_df", grammy),
        ("rank_dict_hot100", ranks),
        ("song_dict_hot100", hot),
        ("artist_work_dict", works),
    ):
        with open(root / "music" / f"{name}.pickle", "wb") as handle:
            pickle.dump(value, handle)

    (root / "sports").mkdir()
    index = pd.MultiIndex.from_tuples(
        [
            ("ENG-Premier League", "2324", "Everton", "2024-03-09 Manchester Utd-Everton"),
            ("ENG-Premier League", "2324", "Arsenal", "2024-03-09 Arsenal-Brentford"),
        ],
        names=["league", "season", "team", "game"],
    )
    soccer = pd.DataFrame(
        {
            "date": pd.to_datetime(["2024-03-09", "2024-03-09"]),
            "result": ["L", "W"],
            "GF": [0.0, 2.0],
            "GA": [2.0, 1.0],
            "opponent": ["Manchester Utd", "Brentford"],
        },
        index=index,
    )
    soccer.to_pickle(root / "sports" / "soccer_team_match_stats.pkl")
    nba = sqlite3.connect(root / "sports" / "nba.sqlite")
    nba.execute(
        "CREATE TABLE game (season_id TEXT, team_name_home TEXT, game_id TEXT, game_date TIMESTAMP, "
        "pts_home REAL, team_name_away TEXT, pts_away REAL)"
    )
    nba.executemany(
        "INSERT INTO game VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            ("22022", "Chicago Bulls", "0022200547", "2023-01-01 00:00:00", 100.0, "Detroit Pistons", 98.0),
            ("22022", "Boston Celtics", "0022200548", "2023-01-02 00:00:00", 120.0, "Chicago Bulls", 101.0),
        ],
    )
    nba.execute("CREATE TABLE play_by_play (game_id TEXT, eventnum INTEGER, homedescription TEXT)")
    nba.executemany(
        "INSERT INTO play_by_play VALUES (?, ?, ?)",
        [("0022200547", 1, "Jump ball"), ("0022200547", 2, "Shot"), ("0022200548", 1, "Jump ball")],
    )
    nba.commit()
    nba.close()
    return root
