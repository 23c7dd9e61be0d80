"""kg-stats against networkx, and the CLI through Hydra overrides."""

from __future__ import annotations

import networkx as nx

from hopbench.cli import kg_stats as cli
from hopbench.kg.stats import graph_sizes, graph_stats


def test_stats_agree_with_networkx(musique_kg):
    s = graph_stats(musique_kg)
    g = musique_kg.to_networkx()
    assert s["nodes"]["total"] == g.number_of_nodes()
    assert s["components"]["count"] == nx.number_connected_components(g)
    edges = {"relation": 0, "synonym": 0, "context": 0}
    for _, _, d in g.edges(data=True):
        for k in edges:
            edges[k] += k in d
    assert s["edges"] == edges
    isolated = []
    for comp in nx.connected_components(g):
        ps = [n for n in comp if g.nodes[n]["kind"] == "passage"]
        if len(ps) == 1:
            isolated += ps
    assert sorted(s["isolated_passages"]["examples"]) == sorted(isolated)[:10]
    assert s["isolated_passages"]["count"] == len(isolated)
    deg = dict(g.degree())
    assert s["degree"]["entity"]["max"] == max(
        deg[i] for i in musique_kg.node_ids[: musique_kg.n_entities]
    )
    top = s["top_hubs"][0]
    assert top["passages"] == max(musique_kg.entity_passage_counts())


def test_cli_prints_stats(musique_kg, data_dir, cache_dir, capsys):
    rc = cli(
        [
            "dataset=musique_sub",
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert musique_kg.manifest["graph_key"] in out  # the cached graph was loaded, not another
    assert f"{musique_kg.n_entities} entities + 18 passages" in out
    assert "top hubs" in out


def test_cli_reports_bad_overrides(data_dir, tmp_path, capsys):
    base = ["dataset=musique_sub", f"paths.data_dir={data_dir}", f"paths.cache_dir={tmp_path}"]
    assert cli(base + ["graph.synonym.treshold=0.5"]) == 2  # Hydra: no such key
    assert "treshold" in capsys.readouterr().err
    assert cli(base + ["+graph.synonym.treshold=0.5"]) == 2  # added key: rejected by the builder
    assert "graph.synonym.treshold is not a setting" in capsys.readouterr().err


def test_graph_sizes_are_the_counts_kg_stats_prints(musique_kg):
    """The protocol card's graph counts (graph_sizes) are graph_stats' own, not a second count."""
    s, sizes = graph_stats(musique_kg), graph_sizes(musique_kg)
    assert (sizes["entities"], sizes["passages"]) == (s["nodes"]["entity"], s["nodes"]["passage"])
    assert sizes["facts"] == s["facts"] == musique_kg.n_facts
    assert (sizes["relation_edges"], sizes["synonym_edges"], sizes["context_edges"]) == (
        s["edges"]["relation"],
        s["edges"]["synonym"],
        s["edges"]["context"],
    )
