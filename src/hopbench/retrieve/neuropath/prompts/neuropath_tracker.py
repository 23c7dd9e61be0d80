"""NeuroPath's path tracker as the reference asks it, in hopbench's own words.

Design after ``llm_path_track`` in KennyCaty/NeuroPath ``src/neuropath.py`` (commit c9ed3ac):
one system message that explains the task and spells out the reply object with its five
keys (current_chain, valid_ids, expansion_requirements, need_expand_ids, continue), an
optional worked example appended to that system message, and one user message with the
question and the numbered paths, ending in an output cue. The reply is requested in JSON
object mode with no schema and no length bounds, as the reference does; the retriever reads
it with the reference's rules (`hopbench.retrieve.neuropath.reference`).

Path lines keep the reference's data layout, because the retriever builds them exactly as the
reference does: ``i: head->relation->tail; `` per triple, and `` <expandable>: [phrase]`` on a
path that may still grow. The prose and the example are ours (a bridge question; the
reference's example is a comparison question). ``prompts: official`` reads the authors' own
text from a checkout instead (`neuropath_official`).
"""

from __future__ import annotations

from collections.abc import Sequence

from hopbench.llm.prompts import chat

SCHEMA_NAME = "neuropath_tracker"
SCHEMA = {"type": "object"}  # JSON object mode, as the reference's response_format

SYSTEM = """You help answer a question by choosing evidence paths from a knowledge graph. Pick the paths that together make a chain of reasoning towards the answer, and say which paths should be followed further.
# What the paths are
Each numbered path is a chain of triples written head->relation->tail. Keep only paths that give a step of the reasoning or evidence for the answer; drop repeated or unrelated ones.
A path marked <expandable> names, in brackets, the phrase at its end where more triples can be attached.
When the paths already answer the question, or nothing useful can be added, do not ask for more.
Reply with one JSON object.
# Reply object
{
    "current_chain": "A string: the reasoning so far, step by step, built from the chosen paths.",
    "valid_ids": [the ids (int) of the useful paths, most useful first],
    "expansion_requirements": "A string: what the next expansion has to find, or an empty string when nothing is needed.",
    "need_expand_ids": [the ids (int) of the paths to follow further, if any],
    "continue": 0 or 1 (1 = follow the paths further, 0 = stop)
}
"""

EXAMPLE = """
# Worked example
Query: In which city was the founder of the company that makes the Velora bicycle born?
Paths:
0: Velora->manufactured by->Brightwheel Cycles; <expandable>: [Brightwheel Cycles]
1: Velora->first sold in->1998; <expandable>: [1998]
2: Velora->frame made of->aluminium; <expandable>: [aluminium]
Output:
{"current_chain": "The Velora bicycle is made by Brightwheel Cycles.", "valid_ids": [0], "expansion_requirements": "Find who founded Brightwheel Cycles and where that person was born.", "need_expand_ids": [0], "continue": 1}
# End of example
"""


def path_line(i: int, path: str, expand: str | None) -> str:
    """One numbered path line, laid out as the reference lays it out."""
    tag = f" <expandable>: [{expand}]" if expand is not None else ""
    return f"{i}: {path}{tag}\n"


def user_message(question: str, path_block: str) -> str:
    return f"Query: {question}\nPaths:\n{path_block}\nOutput:\n"


def messages(question: str, path_block: str, one_shot: bool = False) -> list[dict]:
    """`path_block`: the `path_line`s joined, numbered from 0 as in the reference."""
    return chat(SYSTEM + (EXAMPLE if one_shot else ""), user_message(question, path_block))


def render_paths(paths: Sequence[str], expand: Sequence[str | None]) -> str:
    return "".join(path_line(i, p, e) for i, (p, e) in enumerate(zip(paths, expand)))
