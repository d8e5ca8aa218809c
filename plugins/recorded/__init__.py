"""The `recorded` system: Outputs made elsewhere, scored as if this system had produced them (`ragbench score`).
system.py holds the System class the registry loads.
"""
