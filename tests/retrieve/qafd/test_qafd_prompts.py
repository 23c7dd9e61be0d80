"""flow_diffusion's prompts: keyword rendering and parsing, cluster summaries, and the authors'
keyword prompt read from a checkout (a stand-in with made-up text: the repository holds none of theirs)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.qafd.prompts import official_qafd, qafd_clusters, qafd_keywords


def test_keyword_prompt_is_system_examples_then_the_question():
    msgs = qafd_keywords.messages("Who built the bridge?")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[-1]["content"] == "Question: Who built the bridge?"
    for m in msgs[2::2]:  # the worked replies match the schema
        jsonschema.validate(json.loads(m["content"]), qafd_keywords.SCHEMA)
    assert (
        "high_level_keywords" in msgs[0]["content"] and "low_level_keywords" in msgs[0]["content"]
    )


def test_keyword_reply_parsing_cleans_and_dedupes():
    reply = {
        "high_level_keywords": [" Bridge ", "Bridge", ""],
        "low_level_keywords": ["Firth of Forth", " "],
    }
    assert qafd_keywords.parse(reply) == (["Bridge"], ["Firth of Forth"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"keywords": ["x"]}, qafd_keywords.SCHEMA)


def test_cluster_prompt_and_reply():
    msgs = qafd_clusters.messages(
        [
            ("Forth Bridge", [("forth bridge", "a bridge", 0.9), ("fife", "", 0.123)]),
            ("Fife", [("fife", "a council area", 1.0), ("forth bridge", "a bridge", 0.2)]),
        ]
    )
    body = msgs[-1]["content"]
    assert body.startswith(
        "Cluster 1:\nSource entity: Forth Bridge\nMembers:\n- forth bridge: a bridge "
        "(flow strength: 0.900)\n- fife:  (flow strength: 0.123)\n\nCluster 2:"
    )
    text = "Here you go\n**Cluster 2**: links Fife\nto the bridge.\nCluster 1: the bridge."
    assert qafd_clusters.parse(text, 3) == ["the bridge.", "links Fife to the bridge.", None]


def _checkout(tmp_path, body):
    (tmp_path / "src" / "prompts").mkdir(parents=True)
    (tmp_path / "src" / "prompts" / "prompts_qa.py").write_text(body)
    return tmp_path


def test_official_keyword_prompt_from_a_checkout(tmp_path):
    root = _checkout(
        tmp_path,
        'X = {}\nX["other"] = "no"\nX["keywords_extraction"] = "T {examples}/{query}/{language}"\n'
        'X["keywords_extraction_examples"] = ["a", "b"]\n',
    )
    p = official_qafd.load(root)
    assert p.messages("Q?") == [{"role": "user", "content": "T a\nb/Q?/English"}]


def test_official_prompt_errors_say_what_is_missing(tmp_path):
    with pytest.raises(HopbenchError, match="Tarzanagh/QAFD-RAG"):
        official_qafd.load(tmp_path)
    root = _checkout(
        tmp_path,
        'X = {}\nX["keywords_extraction"] = "T"\nX["keywords_extraction_examples"] = [f()]\n',
    )
    with pytest.raises(HopbenchError, match="not a list of strings"):
        official_qafd.load(root)
