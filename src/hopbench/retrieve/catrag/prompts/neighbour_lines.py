"""CatRAG stage II as the authors designed it: per-neighbour reply lines, parsed as their code does.

Follows the design of CatRAG's ``fact_score_with_sum`` template and ``call_llm_score`` parser
(kwunhang/CatRAG): a scoring rubric with four bands and a "trust the retrieved facts" rule,
two worked examples, then the question, the kept facts, the current (seed) entity and its
numbered neighbours, each with its linking fact(s) and context C(v). The reply has one line
per neighbour, ``ID (Entity Name): Score | reasoning``. The rubric, both examples and every
sentence here are hopbench's own words; the authors' text is read only by ``prompts:
official`` (`official_catrag`), from a checkout the user points to.

Parsing is the code's, step for step (`parse`): scores by line number (``^(\\d+)\\s*\\(.*?\\)
\\s*:\\s*(\\d+)``), else by the name in brackets (``\\((.*?)\\)\\s*:\\s*(\\d+)``, names compared
after HippoRAG's ``text_processing``), else by one name containing the other; a neighbour
none of these finds gets the code's default score 4, which the caller records as a fallback.
A score above 10 counts as 10 (the code maps both to the same weight).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hopbench.llm.prompts import chat
from hopbench.retrieve.catrag.prompts.neighbour_scores import Neighbour  # noqa: F401 (the same item, both prompts)

STEP = "neighbour_lines"  # the step's name in traces and fallbacks (plain text: no schema)
DEFAULT_SCORE = 4  # CatRAG.py call_llm_score: a neighbour the reply does not name

SYSTEM = (
    "You help a search over a knowledge graph. Given a QUERY, the RETRIEVED FACTS found so far "
    "(treat them as true), the CURRENT ENTITY and a numbered list of its NEIGHBORS, rate each "
    "neighbor from 0 to 10 for how much visiting it helps to answer the query.\n"
    "Bands:\n"
    "- 10: the neighbor is the answer, or states it.\n"
    "- 7 to 9: a needed hop: the reasoning has to pass through this neighbor.\n"
    "- 4 to 6: related to the query, but off its main path.\n"
    "- 0 to 3: unrelated, too generic, or in conflict with the retrieved facts (conflict: 0).\n"
    "Write exactly one line per neighbor, in the given order: `ID (Entity Name): Score`, and "
    "for a score of 4 or more add ` | ` and a short reason. Copy each name as written."
)

EXAMPLE_1 = (
    'QUERY: "In which city was the author of The Tin Drum born?"\n'
    'RETRIEVED FACTS: ("the tin drum", "written by", "gunter grass")\n'
    'CURRENT ENTITY: "gunter grass"\n'
    "NEIGHBORS:\n"
    '[1] "danzig" | LINK: ("gunter grass", "born in", "danzig") | ABOUT: Danzig, today Gdansk, '
    "is a port city on the Baltic coast where the writer Gunter Grass was born in 1927.\n"
    '[2] "nobel prize in literature" | LINK: ("gunter grass", "received", "nobel prize in '
    'literature") | ABOUT: An award given each year to an author; Gunter Grass received it in '
    "1999.\n"
    '[3] "the tin drum" | LINK: ("the tin drum", "written by", "gunter grass") | ABOUT: A 1959 '
    "novel by Gunter Grass, later made into a film.\n"
    '[4] "german" | LINK: ("gunter grass", "nationality", "german") | ABOUT: A nationality.\n'
    "One line per neighbor: `ID (Entity Name): Score | reason if Score >= 4`"
)
EXAMPLE_1_REPLY = (
    "1 (danzig): 10 | The link names his birthplace, which is what the query asks for.\n"
    "2 (nobel prize in literature): 2\n"
    "3 (the tin drum): 5 | Already known from the retrieved fact; it does not lead further.\n"
    "4 (german): 1"
)

EXAMPLE_2 = (
    'QUERY: "Who founded the company that operates the Kiruna mine?"\n'
    'RETRIEVED FACTS: ("kiruna mine", "located in", "sweden")\n'
    'CURRENT ENTITY: "kiruna mine"\n'
    "NEIGHBORS:\n"
    '[1] "lkab" | LINK: ("kiruna mine", "operated by", "lkab") | ABOUT: LKAB is a Swedish mining '
    "company, owner and operator of the iron ore mines at Kiruna and Malmberget.\n"
    '[2] "sweden" | LINK: ("kiruna mine", "located in", "sweden") | ABOUT: A Nordic country; its '
    "capital is Stockholm.\n"
    '[3] "iron ore" | LINK: ("kiruna mine", "produces", "iron ore") | ABOUT: Rock from which '
    "iron is extracted.\n"
    '[4] "narvik" | LINK: ("kiruna mine", "ships ore through", "narvik") | ABOUT: A Norwegian '
    "harbour town linked to Kiruna by the Ore Railway.\n"
    "One line per neighbor: `ID (Entity Name): Score | reason if Score >= 4`"
)
EXAMPLE_2_REPLY = (
    "1 (lkab): 9 | The operating company is the bridge: its founder is the answer.\n"
    "2 (sweden): 3\n"
    "3 (iron ore): 2\n"
    "4 (narvik): 1"
)

CLOSING = "One line per neighbor: `ID (Entity Name): Score | reason if Score >= 4`"


def quote_triple(t: tuple[str, str, str]) -> str:
    return f'("{t[0]}", "{t[1]}", "{t[2]}")'


def format_facts(triples: Sequence[tuple[str, str, str]]) -> str:
    """C(v) for an entity with at most tau facts: its facts as sentences, as the code writes them."""
    return "".join(f"{s} {r} {o}. " for s, r, o in triples) or "(no facts)"


def messages(
    question: str,
    retrieved: Sequence[tuple[str, str, str]],
    seed: str,
    neighbours: Sequence[Neighbour],
) -> list[dict]:
    facts = "; ".join(quote_triple(t) for t in retrieved) or "(none)"
    lines = "\n".join(
        f'[{i}] "{n.name}" | LINK: {"; ".join(quote_triple(t) for t in n.links)} | '
        f"ABOUT: {n.context}"
        for i, n in enumerate(neighbours, start=1)
    )
    user = (
        f'QUERY: "{question}"\nRETRIEVED FACTS: {facts}\nCURRENT ENTITY: "{seed}"\n'
        f"NEIGHBORS:\n{lines}\n{CLOSING}"
    )
    return chat(SYSTEM, EXAMPLE_1, EXAMPLE_1_REPLY, EXAMPLE_2, EXAMPLE_2_REPLY, user)


_ID_LINE = re.compile(r"^(\d+)\s*\(.*?\)\s*:\s*(\d+)", re.MULTILINE)
_NAMED = re.compile(r"\((.*?)\)\s*:\s*(\d+)")
_NOT_KEPT = re.compile(r"[^A-Za-z0-9 ]")


def _normalise(name: str) -> str:
    """HippoRAG's text_processing: lower-case, [^A-Za-z0-9 ] to spaces, outer spaces stripped."""
    return _NOT_KEPT.sub(" ", str(name).lower()).strip()


def parse(text: str, names: Sequence[str]) -> list[int | None]:
    """One score per neighbour (in `names` order), None where the reply does not name it."""
    if "Answer:" in text:
        text = text.split("Answer:", 1)[1].strip()
    by_id = {int(i): int(s) for i, s in _ID_LINE.findall(text)}
    by_name = {_normalise(n): int(s) for n, s in _NAMED.findall(text)}
    out: list[int | None] = []
    for i, name in enumerate(names, start=1):
        clean = _normalise(name)
        score = by_id.get(i)
        if score is None:
            score = by_name.get(clean)
        if score is None:
            score = next(
                (s for stored, s in by_name.items() if clean in stored or stored in clean), None
            )
        out.append(None if score is None else min(score, 10))
    return out
