"""What a run costs as it runs: each attempt's and the whole run's cost, and `--max-cost`'s cap."""
