"""The 38 mock KG API endpoints (facebookresearch/CRAG mock_api/server.py), shared by the server
and the client: client method name, HTTP path, and the JSON body fields in argument order.

Every endpoint is POST with a JSON body and answers `{"result": ...}`. Most take `{"query": x}`;
the others are listed with their own fields (a field with a default may be omitted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Endpoint:
    method: str  # client method name, as in mock_api/apiwrapper/pycragapi.py
    path: str
    fields: tuple[str, ...] = ("query",)
    defaults: tuple[tuple[str, Any], ...] = ()

    def body(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        values = dict(self.defaults)
        values.update(zip(self.fields, args))
        values.update(kwargs)
        missing = [f for f in self.fields if f not in values]
        if missing or len(args) > len(self.fields) or set(kwargs) - set(self.fields):
            raise TypeError(f"{self.method}() takes ({', '.join(self.fields)})")
        return {field: values[field] for field in self.fields}


_QUERY = [
    ("open_search_entity_by_name", "/open/search_entity_by_name"),
    ("open_get_entity", "/open/get_entity"),
    ("movie_get_person_info", "/movie/get_person_info"),
    ("movie_get_movie_info", "/movie/get_movie_info"),
    ("movie_get_year_info", "/movie/get_year_info"),
    ("movie_get_movie_info_by_id", "/movie/get_movie_info_by_id"),
    ("movie_get_person_info_by_id", "/movie/get_person_info_by_id"),
    ("finance_get_company_name", "/finance/get_company_name"),
    ("finance_get_ticker_by_name", "/finance/get_ticker_by_name"),
    ("finance_get_price_history", "/finance/get_price_history"),
    ("finance_get_detailed_price_history", "/finance/get_detailed_price_history"),
    ("finance_get_dividends_history", "/finance/get_dividends_history"),
    ("finance_get_market_capitalization", "/finance/get_market_capitalization"),
    ("finance_get_eps", "/finance/get_eps"),
    ("finance_get_pe_ratio", "/finance/get_pe_ratio"),
    ("finance_get_info", "/finance/get_info"),
    ("music_search_artist_entity_by_name", "/music/search_artist_entity_by_name"),
    ("music_search_song_entity_by_name", "/music/search_song_entity_by_name"),
    ("music_grammy_get_best_artist_by_year", "/music/grammy_get_best_artist_by_year"),
    ("music_grammy_get_award_count_by_artist", "/music/grammy_get_award_count_by_artist"),
    ("music_grammy_get_award_count_by_song", "/music/grammy_get_award_count_by_song"),
    ("music_grammy_get_best_song_by_year", "/music/grammy_get_best_song_by_year"),
    ("music_grammy_get_award_date_by_artist", "/music/grammy_get_award_date_by_artist"),
    ("music_grammy_get_best_album_by_year", "/music/grammy_get_best_album_by_year"),
    ("music_get_artist_birth_place", "/music/get_artist_birth_place"),
    ("music_get_artist_birth_date", "/music/get_artist_birth_date"),
    ("music_get_members", "/music/get_members"),
    ("music_get_lifespan", "/music/get_lifespan"),
    ("music_get_song_author", "/music/get_song_author"),
    ("music_get_song_release_country", "/music/get_song_release_country"),
    ("music_get_song_release_date", "/music/get_song_release_date"),
    ("music_get_artist_all_works", "/music/get_artist_all_works"),
]

ENDPOINTS: dict[str, Endpoint] = {method: Endpoint(method, path) for method, path in _QUERY}
ENDPOINTS.update(
    {
        e.method: e
        for e in (
            Endpoint(
                "music_get_billboard_rank_date", "/music/get_billboard_rank_date", ("rank", "date"), (("date", None),)
            ),
            Endpoint(
                "music_get_billboard_attributes", "/music/get_billboard_attributes", ("date", "attribute", "song_name")
            ),
            Endpoint("music_grammy_get_all_awarded_artists", "/music/grammy_get_all_awarded_artists", ()),
            Endpoint(
                "sports_soccer_get_games_on_date",
                "/sports/soccer/get_games_on_date",
                ("date", "team_name"),
                (("team_name", None),),
            ),
            Endpoint(
                "sports_nba_get_games_on_date",
                "/sports/nba/get_games_on_date",
                ("date", "team_name"),
                (("team_name", None),),
            ),
            Endpoint(
                "sports_nba_get_play_by_play_data_by_game_ids",
                "/sports/nba/get_play_by_play_data_by_game_ids",
                ("game_ids",),
            ),
        )
    }
)
assert len(ENDPOINTS) == 38
