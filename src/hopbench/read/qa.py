"""QA reader: HippoRAG-style, top-5 passages as 'Wikipedia Title: ...', a short extracted answer."""

from __future__ import annotations

from hopbench.llm.prompts import qa
from hopbench.read.base import Reader


class QAReader(Reader):
    name = "qa"
    prompt = qa
    answer_field = "answer"
