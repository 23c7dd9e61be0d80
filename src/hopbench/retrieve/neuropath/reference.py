"""NeuroPath's path tracking exactly as the authors' code computes it (KennyCaty/NeuroPath c9ed3ac).

Pure steps, no LLM: the retriever (`hopbench.retrieve.neuropath.neuropath`) asks the tracker and hands
the raw reply text here. Every rule below is the reference's (``src/neuropath.py``; line
numbers of that file), including the ones a careful reimplementation would "fix":

* the graph is read as the reference's index files hold it (`FactIndex`): unique triples
  (head, relation, tail), each passage's triples, and a phrase's passages = the passages
  with a triple touching the phrase (L621-625); triples are visited phrase by phrase,
  passage by passage (ascending), triple by triple (ascending), L265-291 and L359-384;
* id lists become Python sets where the reference makes them sets (seed phrases L436-440,
  coreference expansion L220, kept path ids L311/L411), so the order of iteration is
  CPython's for the same integers;
* a path is the text ``head->relation->tail; `` per triple; pruning embeds that text with
  ``->`` replaced by a space and keeps the 30 new paths closest to the goal (L223-256);
* a reply is read with the reference's regex and `json.loads` (L27-39); no ``valid_ids`` key
  gives the empty default reply (L186-202); an id out of range, a missing key, or a value of
  the wrong type drops every path, the chain and the requirement (L305-333, L404-431), so the
  question ends with the dense ranking of the plain question;
* negative ids index from the end, as Python lists do in the reference.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np

# The reference's regex for the first JSON object in a reply (nesting up to three levels).
_JSON_OBJECT = re.compile(r"\{(?:[^{}]|(?:\{(?:[^{}]|(?:\{[^{}]*\})*)*\})*)*\}")
EMPTY_PHRASES = ("NaN", "Null", "")  # phrases the reference never expands (L266, L360)


def processing_phrases(phrase: str) -> str:
    """The reference's mention normalisation (``src/processing.py``): lower case, every
    character other than a-z, 0-9 and space becomes a space, ends stripped."""
    return re.sub("[^A-Za-z0-9 ]", " ", phrase.lower()).strip()


def extract_json_dict(text: str) -> dict:
    """First JSON object in `text` by the reference's regex; {} when none parses."""
    match = _JSON_OBJECT.search(text or "")
    if not match:
        return {}
    try:
        return json.loads(match.group())
    except json.JSONDecodeError:
        return {}


def read_tracker_reply(text: str) -> tuple[dict, str | None]:
    """(reply, problem): the reference replaces a reply without ``valid_ids`` (or with no JSON
    object at all) by an empty one that stops the search."""
    reply = extract_json_dict(text)
    try:
        reply["valid_ids"]
        return reply, None
    except Exception:
        return (
            {
                "valid_ids": [],
                "continue": 0,
                "need_expand_ids": [],
                "current_chain": "",
                "expansion_requirements": "",
            },
            "no_valid_ids",
        )


def read_ner_reply(text: str) -> tuple[list[str], str | None]:
    """(normalised mentions, problem). The reference evaluates the reply as a Python literal
    and takes ``named_entities``; anything that fails gives no mention (L531-549)."""
    import ast

    try:
        names = ast.literal_eval(text)["named_entities"]
        return [processing_phrases(p) for p in names], None
    except Exception as exc:  # the reference catches everything here too
        return [], f"{type(exc).__name__}: {exc}"[:200]


def expand_seed(ids, coref_others: list[list[int]]) -> list[int]:
    """ids + their coreference neighbours, through a set (L209-220)."""
    expanded = [int(i) for i in ids]
    for i in ids:
        expanded.extend(coref_others[int(i)])
    return list(set(expanded))


# ---- the graph as the reference's index files hold it -------------------------------------
@dataclass
class FactIndex:
    phrases: list[str]
    head: list[int]  # unique triples, by first occurrence in the graph's facts
    relation: list[str]
    tail: list[int]
    doc_facts: list[list[int]]  # passage -> its triples, ascending
    phrase_docs: list[list[int]]  # phrase -> passages with a triple touching it, ascending
    fact_of: np.ndarray = field(repr=False, default=None)  # graph fact -> triple id

    def text(self, t: int) -> str:
        return f"{self.phrases[self.head[t]]}->{self.relation[t]}->{self.phrases[self.tail[t]]}; "

    def touches(self, t: int, p: int) -> bool:
        return self.head[t] == p or self.tail[t] == p


def build_fact_index(kg) -> FactIndex:
    """Unique triples of `kg` and the passage/phrase incidence the reference reads."""
    ids: dict[tuple[int, str, int], int] = {}
    head, rel, tail = [], [], []
    fact_of = np.zeros(kg.n_facts, dtype=np.int64)
    doc_sets: list[set[int]] = [set() for _ in range(kg.n_passages)]
    for f in range(kg.n_facts):
        key = (int(kg.fact_subject[f]), kg.fact_relation[f], int(kg.fact_object[f]))
        t = ids.get(key)
        if t is None:
            t = ids[key] = len(head)
            head.append(key[0])
            rel.append(key[1])
            tail.append(key[2])
        fact_of[f] = t
        doc_sets[int(kg.fact_passage[f])].add(t)
    doc_facts = [sorted(s) for s in doc_sets]
    phrase_sets: list[set[int]] = [set() for _ in range(kg.n_entities)]
    for d, ts in enumerate(doc_facts):
        for t in ts:
            phrase_sets[head[t]].add(d)
            phrase_sets[tail[t]].add(d)
    return FactIndex(
        list(kg.entity_names), head, rel, tail, doc_facts, [sorted(s) for s in phrase_sets], fact_of
    )


def coref_neighbours(
    embeddings: np.ndarray, top_k: int = 5, threshold: float = 0.8
) -> list[list[int]]:
    """Each phrase's near names as the reference finds them (L109-124): a faiss inner-product
    search of the L2-normalised phrase vectors for the top_k nearest, kept at score >=
    threshold, the phrase itself left out. faiss as in the reference (its CPU index), because
    which of several exactly tied names makes the cut is faiss's choice, and a different
    choice means different paths."""
    import faiss

    emb = np.array(embeddings, dtype=np.float32, copy=True)
    faiss.normalize_L2(emb)
    index = faiss.IndexFlatIP(emb.shape[1])
    index.add(emb)
    dist, idx = index.search(emb, top_k)
    return [
        [int(j) for j, d in zip(idx[i], dist[i]) if d >= threshold and j != i]
        for i in range(len(emb))
    ]


# ---- one question's path state --------------------------------------------------------------
@dataclass
class PathState:
    paths: list[str] = field(default_factory=list)
    links: list[int] = field(default_factory=list)
    visited: list[list[int]] = field(default_factory=list)
    need_expand: list[str] = field(default_factory=list)
    valid_paths: list[str] = field(default_factory=list)
    valid_docs: list[list[int]] = field(default_factory=list)
    chain: object = ""
    requirement: object = ""

    def drop_all(self) -> None:
        """What the reference does on a reply it cannot apply."""
        self.paths, self.links, self.visited = [], [], []
        self.need_expand, self.valid_paths, self.valid_docs = [], [], []
        self.chain, self.requirement = "", ""


def _walk(index: FactIndex, phrase: int):
    """(passage, triple) pairs where the triple touches `phrase`, in the reference's order."""
    if index.phrases[phrase] in EMPTY_PHRASES:
        return
    for d in index.phrase_docs[phrase]:
        for t in index.doc_facts[d]:
            if index.touches(t, phrase):
                yield d, t


def _other_end(index: FactIndex, t: int, phrase: int) -> int:
    return index.tail[t] if index.head[t] == phrase else index.head[t]


def first_hop(index: FactIndex, seeds, coref_others) -> PathState:
    """Hop 1 (L262-293): every triple touching a seed phrase or its near names, unique by text."""
    st = PathState()
    for p in expand_seed(list(set(int(s) for s in seeds)), coref_others):
        for d, t in _walk(index, p):
            text = index.text(t)
            if text in st.paths:
                continue
            st.paths.append(text)
            st.links.append(_other_end(index, t, p))
            st.visited.append([d])
    return st


def next_hop(index: FactIndex, st: PathState, coref_others) -> tuple[int, list[str]]:
    """Hop > 1 (L339-387): grow every path to expand by each triple at its link phrase (or a
    near name). Returns (number of kept paths, the kept paths shown without a tag)."""
    old_len = len(st.paths)
    locked = [p for p in st.paths if p not in st.need_expand]
    new_paths, new_links, new_visited = [], [], []
    for i in range(old_len):
        if st.paths[i] in locked:
            continue
        path, docs = st.paths[i], st.visited[i]
        for p in expand_seed([st.links[i]], coref_others):
            for d, t in _walk(index, p):
                text = index.text(t)
                if text in st.paths or text in st.need_expand:
                    continue
                new_links.append(_other_end(index, t, p))
                new_paths.append(path + text)
                new_visited.append(docs + [d])
    st.paths.extend(new_paths)
    st.links.extend(new_links)
    st.visited.extend(new_visited)
    return old_len, locked


def prune(st: PathState, old_len: int, goal: str, encode, filter_k: int = 30) -> None:
    """Keep the `filter_k` new paths closest to `goal`, closest first (L223-256)."""
    if len(st.paths) - old_len <= filter_k:
        return
    texts = [goal] + [st.paths[i].replace("->", " ") for i in range(old_len, len(st.paths))]
    vecs = np.asarray(encode(texts), dtype=np.float32)
    sims = np.dot(vecs[1:], vecs[0].reshape(-1, 1)).flatten()
    top = np.argsort(sims)[-filter_k:][::-1]
    keep = list(range(old_len)) + [int(i) + old_len for i in top]
    st.paths = [st.paths[i] for i in keep]
    st.links = [st.links[i] for i in keep]
    st.visited = [st.visited[i] for i in keep]


def path_block(index: FactIndex, st: PathState, locked: list[str] | None, line) -> str:
    """The numbered path lines; on hop 1 every path is expandable (L298-300, L392-399)."""
    out = []
    for i, p in enumerate(st.paths):
        tagged = locked is None or (p not in locked and p not in st.need_expand)
        out.append(line(i, p, index.phrases[st.links[i]] if tagged else None))
    return "".join(out)


def apply_reply(st: PathState, reply: dict) -> tuple[object, str | None]:
    """(continue flag, problem) after applying a parsed reply as the reference does (L305-333,
    L404-431). On any problem every path, the chain and the requirement are dropped, flag 0."""
    try:
        ids = reply["valid_ids"]
        valid_paths = [st.paths[i] for i in ids]
        valid_docs = [st.visited[i] for i in ids]
        expand = reply["need_expand_ids"]
        kept = list(ids)
        kept.extend(expand)
        kept = list(set(kept))
        flag = reply["continue"]
        need_expand = [st.paths[i] for i in expand]
        paths = [st.paths[i] for i in kept]
        links = [st.links[i] for i in kept]
        visited = [st.visited[i] for i in kept]
        chain = reply["current_chain"]
        requirement = reply["expansion_requirements"]
    except IndexError:
        st.drop_all()
        return 0, "id_out_of_range"
    except KeyError as exc:
        st.drop_all()
        return 0, f"missing_key:{exc.args[0]}"
    except Exception as exc:
        st.drop_all()
        return 0, f"bad_value:{type(exc).__name__}"
    st.valid_paths, st.valid_docs, st.need_expand = valid_paths, valid_docs, need_expand
    st.paths, st.links, st.visited = paths, links, visited
    st.chain, st.requirement = chain, requirement
    return flag, None


def candidate_docs(st: PathState) -> list[int]:
    """Passages along the valid paths, first occurrence kept (L466-473)."""
    out: list[int] = []
    for docs in st.valid_docs:
        for d in docs:
            if d not in out:
                out.append(d)
    return out
