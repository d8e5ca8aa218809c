"""fictional_multihop: 300 bridge and comparison questions (2 and 3 hops) over a corpus of 2,940 short passages
about an invented world, written by tools/make_fictional_multihop.py (seed 48) and shipped with ragbench, so a
multi-step system searches a corpus of its own offline (fictional_multihop.yaml; docs/benchmarks/fictional-multihop.md)."""
