"""What a run owns while it lives and how it ends: its worker processes and resources, its examples as one task group,
and what a run stopped by a signal says."""
