"""A method's defaults (its YAML, the YAMLs it inherits, its class) and the settings of a run
that differ from them: what a run records in metrics.json's `method`."""

from __future__ import annotations

import yaml

from hopbench.core.param_values import diff_label, same_value
from hopbench.harness.method_info import family_of, method_defaults, method_record, params_diff


def test_label_shortening_against_the_method_yaml():
    sa = {
        "decay": 0.3,
        "depth": 3,
        "threshold": 0.01,
        "gate": True,
        "seed_fallback_k": 5,
        "top_paths": 30,
        "path_max_hops": 4,
        "path_budget": 200000,
        "mentions": "spacy",
        "llm_name": "none",
    }
    config = {"llm": {"name": "none"}}
    assert params_diff(sa, "spreading_activation", config) == {"decay": 0.3}
    assert (
        diff_label(params_diff({**sa, "depth": 1}, "spreading_activation", config))
        == "decay=0.3 depth=1"
    )
    assert params_diff({**sa, "decay": 0.7}, "spreading_activation", config) == {}
    # a variant's YAML inherits (`defaults: [spreading_activation, _self_]`) and overrides gate
    assert (
        params_diff({**sa, "decay": 0.7, "gate": False}, "spreading_activation_nogate", config)
        == {}
    )
    assert params_diff(
        {**sa, "decay": 0.7, "gate": True}, "spreading_activation_nogate", config
    ) == {"gate": True}
    assert (
        method_defaults("catrag_code")["synonym_weight"] == 6.0
        and method_defaults("catrag")["synonym_weight"] == 2.0
    )
    # `llm_name: ${llm.name}` follows the run's LLM: shown only when set to something else
    assert (
        params_diff(
            {**sa, "decay": 0.7, "llm_name": "local"},
            "spreading_activation",
            {"llm": {"name": "local"}},
        )
        == {}
    )
    assert params_diff(
        {**sa, "decay": 0.7, "llm_name": "x"}, "spreading_activation", {"llm": {"name": "local"}}
    ) == {"llm_name": "x"}
    # a user's own retriever (no YAML): every parameter
    assert params_diff({"alpha": 1, "beta": "b"}, "my_retriever") == {"alpha": 1, "beta": "b"}
    # equal as parameters across the types a table column gives back
    assert same_value(3, 3.0) and same_value("False", False) and same_value("1e-10", 1e-10)
    assert not same_value(True, 1) and not same_value(0.3, 0.30001)


def test_defaults_from_the_yaml_list_and_the_class(tmp_path):
    (tmp_path / "base.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "base",
                "_target_": "hopbench.retrieve.qasa.spreading_activation.SpreadingActivationRetriever",
                "decay": 0.5,
            }
        )
    )
    (tmp_path / "child.yaml").write_text(
        yaml.safe_dump({"defaults": ["base", "_self_"], "name": "child", "decay": 0.9})
    )
    assert method_defaults("child", tmp_path) == {"decay": 0.9}
    # depth is not in the YAML: the class's __init__ default (3) decides
    assert params_diff({"decay": 0.9, "depth": 3}, "child", config_dir=tmp_path) == {}
    assert params_diff({"decay": 0.5, "depth": 2}, "child", config_dir=tmp_path) == {
        "decay": 0.5,
        "depth": 2,
    }
    # a key neither the YAML nor the class knows is shown
    assert params_diff({"decay": 0.9, "novel": 1}, "child", config_dir=tmp_path) == {"novel": 1}


def test_the_record_a_run_writes():
    config = {"llm": {"name": "none"}}
    rec = method_record(
        {
            "name": "spreading_activation_nogate",
            "_target_": "x",
            "decay": 0.3,
            "gate": False,
            "llm_name": "none",
        },
        config,
        family_of("spreading_activation_nogate"),
    )
    assert rec["family"] == "spreading_activation" and rec["params_diff"] == {"decay": 0.3}
    assert rec["defaults"]["gate"] is False and rec["defaults"]["decay"] == 0.7
    assert rec["defaults"]["llm_name"] == "none"  # '${llm.name}' resolved in the run's config
    assert (
        family_of("catrag_code") == "catrag"
        and family_of("flow_diffusion_code") == "flow_diffusion"
    )
    assert family_of("my_retriever") == "my_retriever"
