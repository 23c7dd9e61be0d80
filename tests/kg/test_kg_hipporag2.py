"""graph.construction=hipporag2 on a tiny triple set checked by hand against HippoRAG 2's code.

The expectations below are derived from OSU-NLP-Group/HippoRAG (PyPI hipporag==2.0.0a4),
src/hipporag/HippoRAG.py and utils/, function by function (named at each assertion), not from
hopbench's output. Floats: weights are float32 in the matrices, compared with atol 1e-6.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage
from hopbench.kg.assembly import assemble_graph
from hopbench.kg.cache_keys import cache_keys
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.hipporag2 import (
    directed_synonyms,
    own_direction_weights,
    split_weights,
    text_processing,
    valid_triples,
)
from hopbench.kg.settings import graph_label, resolve_settings, semantic_settings

ATOL = 1e-6


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


E1, E2, E3, E4 = np.eye(4, dtype=np.float32)
VECTORS = {
    "barack obama": _unit(E1),
    "barack h  obama": _unit(E1 + 0.3 * E2),  # cos 0.958 to "barack obama"
    "u s": _unit(E1 + 0.1 * E4),  # cos 0.995 to "barack obama", 0.953 to "barack h  obama"
    "": _unit(E1),  # same vector as "barack obama", but the empty name
    "hawaii": _unit(E3),
    "obama": _unit(E4),
    "z rich": _unit(E2),
    "switzerland": _unit(E2 - E3),  # cos 0.707 to "z rich": below 0.8
}


class TableEncoder:
    """Vectors from VECTORS; any other text (facts, descriptions, passages) a hash-seeded vector."""

    batch_size = 8
    identity = "table-encoder"

    def encode(self, texts, desc=None):
        out = []
        for t in texts:
            if t in VECTORS:
                out.append(VECTORS[t])
            else:
                seed = int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)
                out.append(_unit(np.random.default_rng(seed).normal(size=4)))
        return np.stack(out).astype(np.float32) if out else np.zeros((0, 4), np.float32)


CORPUS = [
    Passage("p0", "Alpha", "Barack Obama was born in Hawaii."),
    Passage("p1", "Beta", "Barack H. Obama led the U.S."),
    Passage("p2", "Gamma", "No triples here."),
    Passage("p3", "Delta", "Something about Hawaii."),
]
RECORDS = {
    "p0": PassageExtraction(
        "p0",
        entities=["Barack Obama", "Hawaii", "Alpha"],
        triples=[
            ["Barack Obama", "born in", "Hawaii"],
            [
                "Barack Obama",
                "born in",
                "Hawaii",
            ],  # the same raw triple: dropped (filter_invalid_triples)
            [
                "barack obama",
                "Born in",
                "hawaii",
            ],  # another raw triple, the same once processed: counted again
            ["Obama", "is", "obama"],  # subject == object once processed: a fact, no edge
            ["U.S.", "has", "Hawaii"],
            ["x", "y"],  # not three items: dropped
            ["Zürich", "in", "Switzerland"],  # ü is not [A-Za-z0-9 ]: "z rich"
        ],
    ),
    "p1": PassageExtraction(
        "p1",
        entities=["Michelle Obama"],
        triples=[
            ["Barack Obama", "born in", "Hawaii"],
            [
                "Barack H. Obama",
                "president of",
                "U.S.",
            ],  # inner run of spaces kept: "barack h  obama"
        ],
    ),
    "p2": PassageExtraction("p2", entities=["Gamma"], triples=[]),
    "p3": PassageExtraction("p3", entities=[], triples=[["!!!", "is", "Hawaii"]]),  # the empty name
}


@pytest.fixture(scope="module")
def kg():
    settings = resolve_settings({"construction": "hipporag2"})
    enc = TableEncoder()
    return assemble_graph(CORPUS, RECORDS, enc, settings, enc.encode([p.content for p in CORPUS]))


def test_text_processing_and_triple_filter():
    # utils/misc_utils.py text_processing: re.sub('[^A-Za-z0-9 ]', ' ', text.lower()).strip()
    assert text_processing("Barack H. Obama") == "barack h  obama"
    assert text_processing("Zürich") == "z rich"
    assert text_processing(" (U.S.) ") == "u s"
    assert text_processing("!!!") == ""
    # utils/llm_utils.py filter_invalid_triples: three items, str(), first occurrence kept, raw strings
    assert valid_triples(
        [["a", "b", "c"], ["a", "b"], ["a", "b", "c"], ["A", "b", "c"], [1, 2, 3]]
    ) == [["a", "b", "c"], ["A", "b", "c"], ["1", "2", "3"]]


def test_nodes_are_the_triple_arguments_in_sorted_order(kg):
    # HippoRAG.index -> extract_entity_nodes: np.unique of the subjects and objects; no title or
    # NER entity ("Alpha", "Michelle Obama", "Gamma") outside a triple becomes a node
    assert kg.entity_names == [
        "",
        "barack h  obama",
        "barack obama",
        "hawaii",
        "obama",
        "switzerland",
        "u s",
        "z rich",
    ]
    assert kg.n_passages == 4 and kg.n_nodes == 12
    assert kg.manifest["construction"] == "hipporag2"
    assert kg.passage_title_entity.tolist() == [-1, -1, -1, -1]


def test_facts_are_deduplicated_over_the_corpus_and_embedded_as_tuple_strings(kg):
    # flatten_facts: distinct processed tuples; fact_embedding_store.insert_strings([str(fact) ...])
    want = [
        ("barack obama", "born in", "hawaii"),
        ("obama", "is", "obama"),
        ("u s", "has", "hawaii"),
        ("z rich", "in", "switzerland"),
        ("barack h  obama", "president of", "u s"),
        ("", "is", "hawaii"),
    ]
    assert [kg.fact_triple(i) for i in range(kg.n_facts)] == want
    assert kg.fact_texts()[0] == "('barack obama', 'born in', 'hawaii')"
    assert kg.fact_passage.tolist() == [0, 0, 0, 0, 1, 3]
    np.testing.assert_allclose(
        kg.fact_embeddings, TableEncoder().encode([str(t) for t in want]), atol=ATOL
    )


def test_every_passage_of_a_deduplicated_fact_is_kept(kg):
    # ent_node_to_chunk_ids[node][chunk] holds the fact ids of that chunk, so a fact stated in p0
    # and p1 belongs to both (CatRAG's key-fact boost reads it); fact_passage keeps the first only
    want = {0: [0, 1], 1: [0], 2: [0], 3: [0], 4: [1], 5: [3]}
    assert {f: kg.passages_of_fact(f).tolist() for f in range(kg.n_facts)} == want
    assert kg.fact_sources.shape == (kg.n_facts, kg.n_passages)


def test_fact_sources_survive_saving_and_are_derived_for_graphs_saved_without_them(kg, tmp_path):
    from hopbench.kg.extraction import ExtractionLog
    from hopbench.kg.store import load_graph, save_graph

    root = tmp_path / "kg"
    kg.manifest["extraction_key"] = "ext"
    save_graph(kg, root / "graphs" / "g")
    again = load_graph(root / "graphs" / "g")
    assert (again.fact_sources != kg.fact_sources).nnz == 0
    assert (again.relation_own_direction != kg.relation_own_direction).nnz == 0

    kg_old = load_graph(root / "graphs" / "g")
    kg_old.fact_sources = None  # a graph saved before the matrix existed
    save_graph(kg_old, root / "graphs" / "old")
    with pytest.raises(HopbenchError, match="no fact_sources"):
        load_graph(root / "graphs" / "old").passages_of_fact(0)  # no extraction records beside it
    (root / "extractions").mkdir()
    log = ExtractionLog(root / "extractions" / "ext.jsonl")
    for rec in RECORDS.values():
        log.append(rec)
    log.close()
    derived = load_graph(root / "graphs" / "old")
    assert (derived.fact_sources != kg.fact_sources).nnz == 0


def test_passage_entity_edges_are_the_triple_entities_with_weight_1(kg):
    # add_fact_edges (ent_node_to_chunk_ids) and add_passage_edges: node_to_node_stats[(chunk, ent)] = 1.0
    idx = {n: i for i, n in enumerate(kg.entity_names)}
    want = {
        0: {"barack obama", "hawaii", "obama", "u s", "z rich", "switzerland"},
        1: {"barack obama", "hawaii", "barack h  obama", "u s"},
        2: set(),
        3: {"", "hawaii"},
    }
    for p, names in want.items():
        assert {kg.entity_names[e] for e in kg.entities_of_passage(p)} == names
    assert set(kg.context.data.tolist()) == {1.0}
    counts = kg.entity_passage_counts()
    assert (
        counts[idx["hawaii"]] == 3 and counts[idx["barack obama"]] == 2 and counts[idx["u s"]] == 2
    )
    assert counts[idx["obama"]] == 1


def test_edge_weights_are_those_of_hipporags_igraph(kg):
    """adjacency(2, 2, 1) = the sum over both directions of node_to_node_stats (add_new_edges into an
    undirected igraph): fact count per direction unless add_synonymy_edges overwrote it with a cosine."""
    idx = {n: i for i, n in enumerate(kg.entity_names)}
    cos = {(a, b): float(VECTORS[a] @ VECTORS[b]) for a in VECTORS for b in VECTORS}
    a = kg.adjacency(relation=2.0, synonym=2.0, context=1.0).toarray()
    want = np.zeros((kg.n_nodes, kg.n_nodes))

    def put(u, v, w):
        want[idx[u], idx[v]] = want[idx[v], idx[u]] = w

    put(
        "barack obama", "hawaii", 6.0
    )  # 3 occurrences (2 raw triples in p0, 1 in p1) x 2 directions
    put("u s", "hawaii", 2.0)
    put("z rich", "switzerland", 2.0)
    put("", "hawaii", 2.0)
    # "barack h  obama" -> "u s" overwritten by the cosine; "u s" (2 alphanumerics) queries nothing
    put("barack h  obama", "u s", cos[("barack h  obama", "u s")] + 1.0)
    put("barack obama", "u s", cos[("barack obama", "u s")])  # found from one side only
    put("barack obama", "barack h  obama", 2 * cos[("barack obama", "barack h  obama")])
    for p, names in {
        0: ["barack obama", "hawaii", "obama", "u s", "z rich", "switzerland"],
        1: ["barack obama", "hawaii", "barack h  obama", "u s"],
        3: ["", "hawaii"],
    }.items():
        for n in names:
            want[kg.n_entities + p, idx[n]] = want[idx[n], kg.n_entities + p] = 1.0
    np.testing.assert_allclose(a, want, atol=ATOL)
    c = kg.manifest["counts"]
    assert (
        c["fact_pairs"],
        c["synonym_pairs"],
        c["directed_synonym_entries"],
        c["fact_directions_overwritten"],
    ) == (5, 3, 4, 1)


def test_synonym_neighbour_cap_and_eligibility():
    # add_synonymy_edges: names with more than 2 alphanumerics ask; the loop breaks on num_nns > 100,
    # so up to max_neighbors + 1 neighbours are kept, best first; self and '' are skipped
    names = [f"name{i:03d}" for i in range(150)] + ["ab", ""]
    emb = np.tile(_unit(E1), (len(names), 1))
    emb[:150] += (
        np.linspace(0, 0.01, 150, dtype=np.float32)[:, None] * E2
    )  # distinct, all cos > 0.99
    syn = directed_synonyms(emb, names, threshold=0.8, max_neighbors=100)
    per_query = np.bincount([u for u, _ in syn], minlength=len(names))
    assert per_query[:150].tolist() == [101] * 150
    assert per_query[150] == 0 and per_query[151] == 0  # "ab" and "" ask nothing
    assert all(v != 151 for _, v in syn)  # "" is never a neighbour
    assert any(v == 150 for _, v in syn)  # "ab" can be one
    small = directed_synonyms(emb, names, threshold=0.8, max_neighbors=2)
    assert np.bincount([u for u, _ in small], minlength=len(names))[:150].tolist() == [3] * 150
    assert directed_synonyms(emb, names, threshold=1.01) == {}


def test_own_direction_weights_drop_the_fact_direction_a_synonym_overwrote(kg):
    """CatRAG's add_fact_edges adds 2 to (subject, object) only, and add_synonymy_edges then
    overwrites that entry: "barack h  obama" -> "u s" is both the fact's direction and the only
    synonym entry ("u s" has 2 alphanumerics), so the fact weighs nothing there; HippoRAG 2 adds 1
    to both directions, and `relation` keeps the half the synonym left."""
    idx = {n: i for i, n in enumerate(kg.entity_names)}
    own, rel = kg.relation_own_direction.toarray(), kg.relation.toarray()
    b, u = idx["barack h  obama"], idx["u s"]
    assert rel[b, u] == rel[u, b] == 0.5 and own[b, u] == own[u, b] == 0
    rest = np.ones(own.shape, dtype=bool)
    rest[b, u] = rest[u, b] = False
    np.testing.assert_array_equal(own[rest], rel[rest])
    assert own[idx["barack obama"], idx["hawaii"]] == 3


def test_own_direction_weights_keep_the_facts_running_the_other_way():
    directed = {(0, 1): 2, (1, 0): 1, (1, 2): 4}
    syn = {(0, 1): 0.9, (2, 1): 0.8}
    own = own_direction_weights(directed, syn, 3).toarray()
    np.testing.assert_array_equal(own, [[0, 1, 0], [1, 0, 4], [0, 4, 0]])
    rel, _, _ = split_weights({(0, 1): 3, (1, 2): 4}, syn, 3)
    np.testing.assert_allclose(rel.toarray(), [[0, 1.5, 0], [1.5, 0, 2], [0, 2, 0]])


def test_split_weights_doubles_back_to_the_directed_sum():
    counts = {(0, 1): 3, (1, 2): 1}
    syn = {(1, 2): 0.9, (0, 2): 0.85, (2, 0): 0.85}
    rel, s, overwritten = split_weights(counts, syn, 3)
    total = (2 * rel + 2 * s).toarray()
    assert overwritten == 1
    np.testing.assert_allclose(total, [[0, 6, 1.7], [6, 0, 1.9], [1.7, 1.9, 0]], atol=ATOL)
    assert (rel != rel.T).nnz == 0 and (s != s.T).nnz == 0


def test_construction_is_in_the_graph_hash_only_when_not_the_default():
    class Ext:
        def identity(self):
            return {"extractor": "x"}

    class Enc:
        identity = "enc"

    hb = resolve_settings({})
    h2 = resolve_settings({"construction": "hipporag2"})
    _, key_hb, inputs_hb = cache_keys(CORPUS, hb, Ext(), Enc())
    _, key_h2, inputs_h2 = cache_keys(CORPUS, h2, Ext(), Enc())
    assert (
        key_hb != key_h2
        and "construction" not in inputs_hb
        and inputs_h2["construction"] == "hipporag2"
    )
    assert "construction" not in semantic_settings(hb)  # run hashes of existing configs unchanged
    assert semantic_settings(h2)["construction"] == "hipporag2"
    assert graph_label({"extractor": "openie", "construction": "hipporag2"}) == "openie/hipporag2"
    assert graph_label({"extractor": "spacy", "construction": "hopbench"}) == "spacy"
    with pytest.raises(HopbenchError, match="graph.construction"):
        resolve_settings({"construction": "other"})
