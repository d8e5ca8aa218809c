"""The mock KG API as an HTTP server (FastAPI), path- and body-compatible with
facebookresearch/CRAG mock_api/server.py: `GET /` says it runs, every endpoint is POST with a
JSON body and answers `{"result": ...}`; bodies are validated with the same field types (a
string where an int is declared is coerced, "100" -> 100; an int where a string is declared is a
422). A value a lookup refuses (a year outside 1990-2021, a date that is none) is a 422 too, with
`{"detail": "<method>: <why>"}` (upstream answers a bare 500, as for a bug); a domain whose KG is not
loaded is a 503; any other failure a 500 whose JSON `detail` names it.

`ragbench serve crag-kg --kg-dir DIR` runs it in the foreground; `BackgroundServer` runs it in a
thread on a free local port for tasks given `--task-arg kg_dir=DIR`.
"""

import functools
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .endpoints import ENDPOINTS
from .store import DomainUnavailable, KgStore

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import ASGIApp, Receive, Scope, Send

# Field types of the request models in server.py (anything not listed is `query: str`).
_INT_QUERY = {
    "movie_get_movie_info_by_id",
    "movie_get_person_info_by_id",
    "music_grammy_get_best_artist_by_year",
    "music_grammy_get_best_song_by_year",
    "music_grammy_get_best_album_by_year",
}
_FIELD_TYPES: dict[str, Any] = {
    "rank": (int, ...),
    "date": (str, ...),
    "attribute": (str, ...),
    "song_name": (str, ...),
    "team_name": (str | None, None),
    "game_ids": (list[str], ...),
}


def _model(method: str) -> Any:
    from pydantic import create_model

    fields: dict[str, Any] = {}
    for field in ENDPOINTS[method].fields:
        if field == "query":
            fields[field] = (int if method in _INT_QUERY else str, ...)
        elif field == "date" and method == "music_get_billboard_rank_date":
            fields[field] = (str | None, None)
        else:
            fields[field] = _FIELD_TYPES[field]
    return create_model(f"Body_{method}", **fields)


REFUSED = (ValueError, TypeError, KeyError, IndexError, OverflowError)  # what a lookup raises for a body's values


STORE = "ragbench.crag_kg_store"  # the ASGI scope's key of the store a server answers from (`create_app`)


def create_app(store: KgStore) -> "ASGIApp":
    """The ASGI app of a server answering from `store`: the routes made once a process (`_routes`), each request
    given `store` in its scope."""
    routes = _routes()

    async def app(scope: "Scope", receive: "Receive", send: "Send") -> None:
        scope[STORE] = store
        await routes(scope, receive, send)

    return app


@functools.cache
def _routes() -> "FastAPI":  # quoted: this module has no postponed annotations (FastAPI reads them)
    """The API's routes, made once a process: FastAPI reads each endpoint's request model and handler (about a
    tenth of a second of CPU for the ~40 endpoints, which every CRAG run with a KG paid when its server started);
    a handler answers from the store its request's scope holds (`create_app`)."""
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import JSONResponse

    app = FastAPI(title="CRAG API", description="Mock KG API of the CRAG benchmark (ragbench)")

    @app.exception_handler(Exception)
    def failed(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": f"{request.url.path}: {type(exc).__name__}: {exc}"}, status_code=500)

    @app.get("/")
    def root() -> dict[str, str]:
        return {"message": "The CRAG API service is running"}

    def add(method: str) -> None:
        endpoint = ENDPOINTS[method]
        handler: Callable[..., dict[str, Any]]
        if not endpoint.fields:

            def no_body(request: Request) -> dict[str, Any]:
                return answer(request, {})

            handler = no_body
        else:
            Body = _model(method)

            # the request model is made at run time (FastAPI reads it from the annotation): mypy sees no class
            def with_body(body: Body, request: Request) -> dict[str, Any]:  # type: ignore[valid-type]
                return answer(request, body.model_dump())  # type: ignore[attr-defined]

            handler = with_body

        def answer(request: Request, body: dict[str, Any]) -> dict[str, Any]:
            store: KgStore = request.scope[STORE]
            try:
                return {"result": store.call(method, body)}
            except DomainUnavailable as exc:
                raise HTTPException(status_code=503, detail=str(exc)) from exc
            except REFUSED as exc:
                raise HTTPException(status_code=422, detail=f"{method}: {exc}") from exc

        handler.__name__ = method
        # plain `def`: FastAPI runs lookups in its thread pool, so a slow search does not stall others
        app.post(endpoint.path, name=method)(handler)

    for method in ENDPOINTS:
        add(method)
    return app


class BackgroundServer:
    """uvicorn in a daemon thread on 127.0.0.1 and a free port."""

    def __init__(self, server: Any, thread: threading.Thread) -> None:
        self.server, self.thread = server, thread
        host, port = server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"

    @classmethod
    def start(
        cls, kg_dir: str, allow_pickle: bool = False, host: str = "127.0.0.1", port: int = 0, timeout: float = 60.0
    ) -> "BackgroundServer":
        import uvicorn

        app = create_app(KgStore(kg_dir, allow_pickle))
        server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off"))
        thread = threading.Thread(target=server.run, name="crag-kg-server", daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the CRAG KG server for {kg_dir} did not start")
            time.sleep(0.01)
        return cls(server, thread)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def serve(kg_dir: str, host: str, port: int, allow_pickle: bool) -> None:
    """Foreground server for `ragbench serve crag-kg`."""
    import uvicorn

    store = KgStore(kg_dir, allow_pickle)
    for domain, reason in store.unavailable.items():
        print(f"crag-kg: {domain} unavailable: {reason}")
    listening = socket.create_server((host, port))  # bound here so that `--port 0` can say the port it got
    bound_host, bound_port = listening.getsockname()[:2]
    print(f"crag-kg: serving on http://{bound_host}:{bound_port}", flush=True)
    uvicorn.Server(uvicorn.Config(create_app(store), host=host, port=bound_port)).run(sockets=[listening])
