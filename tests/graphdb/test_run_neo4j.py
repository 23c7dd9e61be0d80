"""`python -m hopbench.run retriever=spreading_activation_neo4j` end to end: same predictions and
quality metrics as the in-memory retriever, timeouts counted in metrics.json."""

from __future__ import annotations

import json

import pytest

from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute

pytestmark = pytest.mark.neo4j

QUALITY = ("recall@1", "recall@2", "recall@5", "recall@10", "fcr@2", "fcr@5", "fcr@10")


def _cfg(tmp_path, data_dir, cache_dir, *overrides):
    return load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "dataset=musique_sub",
            *overrides,
        ]
    )


@pytest.mark.parametrize("variant", ["", "_nogate"])
def test_run_in_neo4j_matches_the_in_memory_run(variant, tmp_path, data_dir, cache_dir, graphdb):
    neo = execute(
        _cfg(
            tmp_path,
            data_dir,
            cache_dir,
            f"retriever=spreading_activation_neo4j{variant}",
            "retriever.form=portable",
        )
    )
    mem = execute(_cfg(tmp_path, data_dir, cache_dir, f"retriever=spreading_activation{variant}"))
    assert neo["n_query_timeouts"] == 0
    for key in QUALITY:
        assert neo[key] == mem[key], key
    runs = {p.parts[-2]: p for p in (tmp_path / "runs" / "musique_sub").glob("*/*/")}
    rows = {
        name: [json.loads(x) for x in (p / "predictions.jsonl").read_text().splitlines()]
        for name, p in runs.items()
    }
    a, b = rows[f"spreading_activation_neo4j{variant}"], rows[f"spreading_activation{variant}"]
    assert [r["ranked_passage_ids"] for r in a] == [r["ranked_passage_ids"] for r in b]
    for ra, rb in zip(a, b):
        assert [e for e, _ in ra["trace"]["activations"]] == [
            e for e, _ in rb["trace"]["activations"]
        ]
        # the default gate is Neo4j's vector.similarity.cosine, computed in float32 (about 1e-7
        # from the float64 cosine of the in-memory run)
        assert [x for _, x in ra["trace"]["activations"]] == pytest.approx(
            [x for _, x in rb["trace"]["activations"]], rel=1e-6, abs=1e-7
        )
