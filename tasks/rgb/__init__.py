"""RGB (Chen et al., AAAI 2024, chen700564/RGB): its six sets (noise robustness and negative rejection,
information integration, counterfactual robustness; English and Chinese) as YAML tasks whose examples carry
the passages evalue.py shows (sampling.py, style.py), scored by evalue.py's answer check (metrics.py), with
the LLM-judged rates of reject_evalue.py and fact_evalue.py as opt-in metrics (judge.py).
docs/benchmarks/rgb.md says where to get each file."""
