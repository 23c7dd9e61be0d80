"""Multi-hop QA prompt: passages, question -> short reasoning, then a short extracted answer.

Design taken from HippoRAG's `rag_qa_musique` (system instruction, one worked example as a
user/assistant turn, passages as 'Wikipedia Title:' blocks, reasoning before the answer),
with our own wording and example, and JSON output instead of an 'Answer:' line so the
answer is extracted by the schema rather than by string matching. The system prompt and the
example form a fixed prefix that llama.cpp keeps in its KV cache across questions.
"""

from __future__ import annotations

from typing import Sequence

from hopbench.data.schema import Passage
from hopbench.llm.prompts import chat
from hopbench.llm.prompts.passages import example_passages, format_passages

SCHEMA_NAME = "qa_answer"

SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 400},
        "answer": {"type": "string", "minLength": 1, "maxLength": 100},
    },
    "required": ["reasoning", "answer"],
    "additionalProperties": False,
}

SYSTEM = (
    "You answer questions using Wikipedia passages. The answer often needs two or more facts "
    "from different passages: find the first fact, use it to find the next, and so on. "
    'Reply with a JSON object: "reasoning" states the chain of facts in one or two short '
    'sentences; "answer" is only the answer itself (a name, a place, a date, a number, or '
    "yes/no), as short as possible, copied from the passages when it appears there, with no "
    "explanation. If the passages do not settle it, give your best guess."
)

_EXAMPLE_PASSAGES = example_passages("Black Drin", "Lake Ohrid", "Struga")
_EXAMPLE_QUESTION = "In which country is the town where the Black Drin leaves Lake Ohrid?"
_EXAMPLE_REPLY = (
    '{"reasoning": "The Black Drin flows out of Lake Ohrid at Struga. Struga is a '
    'town in North Macedonia.", "answer": "North Macedonia"}'
)


TAKES_NOTES = True  # reader.context_extras: the retriever's notes go before the passages
NOTES_HEADING = "Summaries of related entities in the knowledge graph:"


def format_notes(notes: Sequence[str]) -> str:
    return "\n".join([NOTES_HEADING, *(f"- {n}" for n in notes)])


def user_turn(passages_text: str, question: str) -> str:
    return f"{passages_text}\n\nQuestion: {question}"


def messages(
    question: str, passages: Sequence[Passage], notes: Sequence[str] | None = None
) -> list[dict]:
    """notes (reader.context_extras; QAFD's cluster summaries) precede the passages of the
    question's turn; without notes the messages are the plain reader's, byte for byte."""
    text = format_passages(passages)
    if notes:
        text = f"{format_notes(notes)}\n\n{text}"
    return chat(
        SYSTEM,
        user_turn(_EXAMPLE_PASSAGES, _EXAMPLE_QUESTION),
        _EXAMPLE_REPLY,
        user_turn(text, question),
    )
