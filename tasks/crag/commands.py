"""`ragbench serve crag-kg`: the CRAG mock KG API over HTTP, added to the command line through the
`ragbench_cli_commands` hook (tasks/__init__.py)."""

from __future__ import annotations

import click


@click.group("serve")
def serve_group() -> None:
    """Run a benchmark's service."""


@serve_group.command("crag-kg")
@click.option("--kg-dir", required=True, help="folder of the mock KG files (facebookresearch/CRAG mock_api/cragkg)")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int, help="0: any free port (the one taken is printed)")
@click.option(
    "--allow-pickle", is_flag=True, help="load the music and soccer pickles (loading a pickle runs code from it)"
)
def serve_crag_kg(kg_dir: str, host: str, port: int, allow_pickle: bool) -> None:
    """The CRAG mock KG API (38 endpoints, upstream paths and bodies) over HTTP."""
    from .kg.server import serve

    serve(kg_dir, host, port, allow_pickle)
