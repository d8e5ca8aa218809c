"""CRAG's mock knowledge-graph API: the client the systems call through `ctx.tools`, and a server for
the released KG files (`ragbench serve crag-kg`) with the upstream endpoints and name search."""
