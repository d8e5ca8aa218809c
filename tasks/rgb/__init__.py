"""RGB (Chen et al., AAAI 2024, chen700564/RGB): its six sets (noise robustness and negative rejection,
information integration, counterfactual robustness; English and Chinese) as YAML tasks whose examples carry
the passages evalue.py shows (sampling.py), with evalue.py's answer check as metrics (metrics.py).
docs/tasks.md says where to get each file."""
