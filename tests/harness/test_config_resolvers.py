"""A user's own questions file is filed under its own dataset name, never under the group's."""

from __future__ import annotations

import pytest

from hopbench.harness.compose import load_config
from hopbench.harness.config_resolvers import dataset_name


def _name(*overrides) -> str:
    return load_config(["paths.data_dir=/data", *overrides]).dataset.name


@pytest.mark.parametrize(
    "group", ["musique", "musique_sub", "hotpotqa", "2wikimultihopqa", "hover"]
)
def test_bundled_files_keep_the_group_name(group):
    assert _name(f"dataset={group}") == group
    assert (
        _name(f"dataset={group}", "paths.data_dir=/elsewhere") == group
    )  # the same files elsewhere


def test_a_users_file_gets_its_own_name():
    assert (
        _name("dataset=musique", "dataset.questions_path=/x/musique_ans_v1.0_dev.jsonl")
        == "musique-musique_ans_v1.0_dev"
    )
    assert (
        _name("dataset=musique", "dataset.questions_path=/x/dev.json", "dataset.name=mine")
        == "mine"
    )
    assert (
        _name("dataset=custom", "dataset.format=hotpotqa", "dataset.questions_path=/x/my set.json")
        == "custom-my_set"
    )


def test_dataset_name_rules():
    assert dataset_name("musique", "/d/musique/a.json", "/d/musique/./a.json") == "musique"
    assert dataset_name("musique", None, "/d/a.json") == "musique"
    assert dataset_name("hover", "/u/claims.jsonl", "/d/hover.json") == "hover-claims"
