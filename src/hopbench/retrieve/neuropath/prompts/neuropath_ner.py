"""NeuroPath's query NER as the reference asks it, in hopbench's own words.

Design after ``ner_vtp_extraction`` in KennyCaty/NeuroPath ``src/query_ner_vtp_parallel.py``
(commit c9ed3ac): a system message with the instruction and two worked examples (a question
and its ``{"named_entities": [...]}`` object), then a user message holding the question and an
output cue. JSON object mode, up to 1000 reply tokens, as the reference requests. The
examples here are ours. ``prompts: official`` reads the authors' text from a checkout
(`neuropath_official`).
"""

from __future__ import annotations

from hopbench.llm.prompts import chat

SCHEMA_NAME = "neuropath_ner"
SCHEMA = {"type": "object"}  # JSON object mode, as the reference's response_format
MAX_TOKENS = 1000  # the reference's max_tokens for this call

SYSTEM = """List the named entities in the question that matter for answering it.
Give them as a JSON object.

# Example 1
Question: Which river is longer, the Danube or the Rhine?
Output:
{
    "named_entities": ["Danube", "Rhine"]
}
# Example 2
Question: What year did the author of "Dune" die?
Output:
{
    "named_entities": ["Dune"]
}
"""


def user_message(question: str) -> str:
    return f"Question: {question}\nOutput:\n"


def messages(question: str) -> list[dict]:
    return chat(SYSTEM, user_message(question))
