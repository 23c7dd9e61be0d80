"""Parity with the authors' code: one room per method (README.md)."""
