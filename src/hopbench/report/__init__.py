"""Collect complete runs into results tables; show traces."""
