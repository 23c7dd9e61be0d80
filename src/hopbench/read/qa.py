"""QA reader: HippoRAG-style, top-5 passages as 'Wikipedia Title: ...', a short extracted answer."""

from __future__ import annotations

from hopbench.data.schema import Passage, Question
from hopbench.llm.prompts import qa as prompt
from hopbench.read.base import Reader


class QAReader(Reader):
    name = "qa"

    def _ask(self, question: Question, passages: list[Passage], calls: list) -> str:
        data = self._chat_json(prompt.messages, prompt.SCHEMA, prompt.SCHEMA_NAME, question.text,
                               passages, calls)
        if calls:
            calls[-1]["reasoning"] = data["reasoning"]
        return data["answer"].strip()
