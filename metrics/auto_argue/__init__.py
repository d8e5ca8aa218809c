"""Auto-ARGUE's report evaluation (Walden et al., arXiv 2509.26184) as its paper and its repository's README
describe it, not parity-checked: its released package (github.com/hltcoe/auto-argue) could not be had here to run
as a reference (docs/benchmarks/argue.md)."""
