"""benchmarks.common.hipporag_offline and .versions: the stand-ins the HippoRAG, index-timing and
CatRAG workers give the official package, shared in one module.

Why: these decide what the authors' side computes with. A vector looked up for the wrong text, a
filter that drops a fact, or a save folder that reuses a previous index would change the
official figures the parity tables compare against, and nothing on hopbench's side would show it.
"""

from __future__ import annotations

import os
import types
from importlib import metadata

import igraph as ig
import numpy as np
import pytest
from benchmarks.common import hipporag_offline as ho
from benchmarks.common.versions import package_versions


def test_precomputed_vectors_look_up_by_text_and_refuse_an_unknown_text(tmp_path):
    vecs = np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float64)
    np.savez(tmp_path / "v.npz", texts=np.array(["a", "b", "c"]), vectors=vecs)
    model = ho.precomputed_vectors(tmp_path / "v.npz")(global_config=None)
    assert model.embedding_dim == 2
    out = model.batch_encode(["c", "a"])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [1, 0]], atol=1e-7)
    np.testing.assert_allclose(model.batch_encode("b"), [[0, 1]], atol=0)
    with pytest.raises(KeyError, match="1 texts have no precomputed vector"):
        model.batch_encode(["a", "z"])


def test_the_bypassed_filter_keeps_the_candidates_and_the_index_filter_refuses():
    kept = ho.FilterBypassed(None)("q", ["f1", "f2", "f3"], [7, 8, 9])
    assert kept == ([7, 8, 9], ["f1", "f2", "f3"], {"bypassed": True})
    assert ho.FilterBypassed(None)("q", ["f1", "f2", "f3"], [7, 8, 9], 2)[:2] == (
        [7, 8],
        ["f1", "f2"],
    )
    with pytest.raises(RuntimeError, match="fact filter was called while indexing"):
        ho.FilterNeverCalled(None)("q", ["f1"], [1])
    with pytest.raises(RuntimeError, match="the LLM was called: this test must not use it"):
        ho.NoLLM("this test").infer([{"role": "user", "content": "hi"}])


def test_replace_models_points_the_module_at_the_stand_ins():
    module = types.SimpleNamespace(DSPyFilter="theirs")
    llm = ho.NoLLM("x")
    ho.replace_models(module, dict, llm)
    assert module._get_embedding_model_class("any-name") is dict
    assert module._get_llm_class(object()) is llm
    assert module.DSPyFilter == "theirs"  # no filter given: theirs stays
    ho.replace_models(module, dict, llm, ho.FilterBypassed)
    assert module.DSPyFilter is ho.FilterBypassed


def test_the_save_folder_links_the_openie_file_and_a_cold_one_must_be_new(tmp_path, monkeypatch):
    name = f"openie_results_ner_{ho.LLM_NAME}.json"
    (tmp_path / name).write_text("{}")
    monkeypatch.setenv("PYTHONHASHSEED", "3")
    save = ho.hash_seed_dir(tmp_path, "official")
    assert save == tmp_path / "official_3"
    assert ho.openie_save_dir(tmp_path, save) == save
    assert os.readlink(save / name) == str(tmp_path / name)
    ho.openie_save_dir(tmp_path, save)  # warm: the folder and its link are reused
    with pytest.raises(FileExistsError):
        ho.openie_save_dir(tmp_path, save, cold=True)


def test_saved_edges_and_the_seeds_of_the_last_reset(tmp_path):
    g = ig.Graph(n=3, edges=[(0, 1), (1, 2)], directed=False)
    g.vs["name"] = ["entity-a", "passage-x", "entity-b"]
    g.vs["content"] = ["a", "x text", "b"]
    g.es["weight"] = [0.5, 2.0]
    names, contents, kinds = ho.save_edges(g, tmp_path / "e.npz")
    assert kinds == ["entity", "passage", "entity"]
    z = np.load(tmp_path / "e.npz")
    assert z["src"].tolist() == [0, 1] and z["dst"].tolist() == [1, 2]
    np.testing.assert_allclose(z["weight"], [0.5, 2.0], atol=0)

    owner = types.SimpleNamespace(run_ppr=lambda reset, damping=0.5: ("ranked", damping))
    resets, original = ho.recording_resets(owner)
    assert owner.run_ppr([0.0, 1.0, 0.0]) == ("ranked", 0.5)
    assert owner.run_ppr(np.array([0.25, 0.5, 0.0]), damping=0.3) == ("ranked", 0.3)
    assert len(resets) == 2 and original is not owner.run_ppr
    seeds = ho.seeds_from(resets, contents, [0, 2])
    assert seeds == pytest.approx({"a": 0.25}, abs=1e-12)  # passages and zero weights left out
    assert ho.seeds_from([], contents, [0, 2]) == {}


def test_median_ms_times_each_item_once_per_pass():
    calls: list = []
    ms = ho.median_ms(calls.append, ["q1", "q2"], repeats=3)
    assert calls == ["q1", "q2"] * 3  # passes over the items, not one item repeated in place
    assert len(ms) == 2 and all(t >= 0 for t in ms)


def test_package_versions_names_what_is_installed_and_none_for_the_rest():
    out = package_versions(["numpy", "no-such-distribution-hb"], python=True)
    assert out["numpy"] == metadata.version("numpy")
    assert out["no-such-distribution-hb"] is None
    assert out["python"].count(".") == 2


def test_the_config_indexes_from_the_openie_file_and_writes_nothing_back(tmp_path):
    cfg = ho.openie_config(dict, tmp_path, retrieval_top_k=20)
    assert cfg == {
        "save_dir": str(tmp_path),
        "llm_name": ho.LLM_NAME,
        "openie_mode": "online",
        "force_index_from_scratch": True,
        "force_openie_from_scratch": False,
        "save_openie": False,
        "retrieval_top_k": 20,
    }


def test_a_question_row_keeps_the_top_and_says_when_no_ppr_ran():
    ranked = (np.array([4, 2, 9]), np.array([0.9, 0.5, 0.1]))
    facts = [("a", "r", "b")]
    row = ho.question_row(ranked, facts, [np.array([0.0, 0.7])], ["x", "a"], [1], top=2)
    assert row["top"] == [4, 2] and row["scores"] == pytest.approx([0.9, 0.5], abs=1e-12)
    assert row["facts"] == ["('a', 'r', 'b')"]
    assert row["seeds"] == pytest.approx({"a": 0.7}, abs=1e-12) and row["dense"] is False
    dense = ho.question_row(ranked, [], [], ["x", "a"], [1], top=5)
    assert dense["dense"] is True and dense["seeds"] == {} and len(dense["top"]) == 3


def test_indexing_for_retrieval_prepares_in_the_packages_order():
    calls: list = []

    class Rag:
        def index(self, docs):
            calls.append(("index", docs))

        def prepare_retrieval_objects(self):
            calls.append(("prepare",))

        def get_query_embeddings(self, queries):
            calls.append(("queries", queries))

    rag, seconds = ho.index_for_retrieval(Rag, ["d1"], ["q1"])
    assert isinstance(rag, Rag)
    assert calls == [("index", ["d1"]), ("prepare",), ("queries", ["q1"])]
    assert seconds >= 0


def test_the_worker_side_modules_load_in_an_authors_venv():
    """What the workers import from benchmarks.common imports, at module level, only the standard
    library and numpy (an authors' venv has nothing of hopbench's)."""
    import ast
    import sys
    from pathlib import Path

    common = Path(ho.__file__).parent
    for name in ("shims", "hipporag_offline", "versions"):
        tree = ast.parse((common / f"{name}.py").read_text())
        roots = {
            a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names
        }
        roots |= {
            (n.module or "").split(".")[0]
            for n in tree.body
            if isinstance(n, ast.ImportFrom) and n.level == 0
        }
        foreign = roots - set(sys.stdlib_module_names) - {"numpy", "__future__"}
        assert not foreign, f"benchmarks/common/{name}.py imports {sorted(foreign)} at load"
