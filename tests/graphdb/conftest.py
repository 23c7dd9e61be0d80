"""Graphs for the Neo4j export and spreading-activation tests (built once per cache)."""

from __future__ import annotations

import uuid

import pytest

from hopbench.data import load_dataset
from hopbench.retrieve.base import Services


def make_services(dataset, encoder, graphdb_settings) -> Services:
    s = Services(
        dataset=dataset,
        encoder=encoder,
        graphdb={
            "uri": graphdb_settings.uri,
            "user": graphdb_settings.user,
            "password": graphdb_settings.password,
        },
    )
    s.encode_questions(dataset.questions)
    return s


@pytest.fixture(scope="session")
def wiki_sub(data_dir):
    """The first 2 2Wiki questions with the 20 passages of their contexts (a second small graph)."""
    return load_dataset(
        "2wikimultihopqa_sub", "2wiki", data_dir / "2wikimultihopqa/2wikimultihopqa_qa_sub.json"
    )


@pytest.fixture(scope="session")
def wiki_kg(wiki_sub, encoder, cache_dir):
    from hopbench.kg import load_or_build

    return load_or_build(wiki_sub, None, encoder=encoder, cache_dir=cache_dir)


def probe_questions(dataset, n_titles: int = 6) -> list:
    """The dataset's questions plus one per passage title (more seeds and spreads to compare)."""
    from hopbench.data.schema import Question

    titles = [p.title for p in dataset.corpus[:n_titles]]
    return list(dataset.questions) + [
        Question(id=f"title-{j}", text=f"What is known about {t}?", answers=["-"])
        for j, t in enumerate(titles)
    ]


def sa_results(neo, questions, k: int = 10) -> dict:
    """question id -> the raw result of the one-query spreading activation (seeds, activation, ranked)."""
    return {q.id: neo.run_query(neo.parameters(q, k)) for q in questions}


@pytest.fixture
def user_data(graphdb, musique_kg):
    """A user's own nodes in the same database, made to collide with hopbench's old schema:
    `:Entity` / `:Passage` nodes with hopbench's names, ids, idx values and relationship types,
    duplicate names (which the old `:Entity(name)` constraint would have refused), and an
    unrelated `:Person`. Yields a function that snapshots them (ids, labels, properties,
    relationships); removes them afterwards."""
    tag = f"user-{uuid.uuid4().hex}"
    names, pid = musique_kg.entity_names, musique_kg.passage_ids[0]
    graphdb.query(
        "CREATE (a:Entity {owner: $tag, name: $n0, note: 'mine'}), (b:Entity {owner: $tag, name: $n0}), "
        "(c:Entity {owner: $tag, name: $n1, idx: 0, desc_norm: 1.0, desc_emb: [1.0, 0.0]}), "
        "(p:Passage {owner: $tag, id: $pid, idx: 0, emb: [0.0, 1.0]}), (x:Person {owner: $tag, name: 'Ada'}), "
        "(p)-[:MENTIONS]->(a), (a)-[:RELATES_TO {count: 5.0}]->(c), (x)-[:KNOWS]->(a)",
        {"tag": tag, "n0": names[0], "n1": names[1], "pid": pid},
    )

    def snapshot() -> list:
        return graphdb.query(
            "MATCH (n) WHERE n.owner = $tag OPTIONAL MATCH (n)-[r]->(m) "
            "WITH n, r, m ORDER BY type(r), elementId(m) "
            "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props, "
            "collect([type(r), properties(r), elementId(m)]) AS out ORDER BY id",
            {"tag": tag},
        )

    before = snapshot()
    assert len(before) == 5
    yield snapshot
    graphdb.query("MATCH (n) WHERE n.owner = $tag DETACH DELETE n", {"tag": tag})
