"""Answer and retrieval metrics, per question and aggregated per run."""
