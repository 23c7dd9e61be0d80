"""prompts=official reads the authors' strings from a checkout with `ast` (a stand-in checkout
here: the repository holds none of their text) and lays the messages out as the reference."""

from __future__ import annotations

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.neuropath.prompts import neuropath_official

TRACKER_SRC = '''
class NeuroPath:
    def llm_path_track(self, path_prompt, query, one_shot=False):
        sys_prompt = """SYSTEM TEXT"""
        if one_shot == True:
            sys_prompt += """ EXAMPLE TEXT"""
        prompt = f"Query: {query}"
'''
NER_SRC = '''
sys_prompt = """NER SYSTEM"""
input_frame = """Q={}
Out:
"""
'''


def _checkout(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "neuropath.py").write_text(TRACKER_SRC)
    (tmp_path / "src" / "query_ner_vtp_parallel.py").write_text(NER_SRC)
    return str(tmp_path)


def test_strings_come_from_the_checkout(tmp_path):
    p = neuropath_official.load(_checkout(tmp_path))
    block = "0: a->r->b;  <expandable>: [b]\n"
    assert p.tracker_messages("Q?", block) == [
        {"role": "system", "content": "SYSTEM TEXT"},
        {"role": "user", "content": "Query: Q?\nPaths:\n" + block + "\nOutput:\n"},
    ]
    assert (
        p.tracker_messages("Q?", block, one_shot=True)[0]["content"] == "SYSTEM TEXT EXAMPLE TEXT"
    )
    assert p.ner_messages("Who?") == [
        {"role": "system", "content": "NER SYSTEM"},
        {"role": "user", "content": "Q=Who?\nOut:\n"},
    ]


def test_a_missing_checkout_is_one_clear_error(tmp_path):
    with pytest.raises(HopbenchError, match="neuropath.py not found"):
        neuropath_official.load(str(tmp_path / "nowhere"))
