"""Coarse POS tags from the attribute_ruler's own patterns, applied as table lookups.

The attribute_ruler of en_core_web_sm runs a Matcher with 179 patterns over every token and
costs about a fifth of the pipeline's time; the extractor needs only `pos_` from it (noun chunks
and the triple rules read it). This component compiles the ruler's POS-setting patterns into
per-tag lookup tables (plus the handful that test DEP or IS_SPACE) and applies them with the
ruler's precedence (a later pattern overrides an earlier one), giving the same POS tags.
Patterns it cannot compile make `use_fast_pos` keep the original ruler.
"""

from __future__ import annotations

from spacy.language import Language

COMPONENT = "hopbench_fast_pos"
_ATTR = {"TAG": "tag_", "LOWER": "lower_", "DEP": "dep_", "IS_SPACE": "is_space"}
_KEYS = set(_ATTR)


def _cond(value):
    """('eq', v) / ('in', set) / ('not_in', set), or raise for anything else."""
    if isinstance(value, (str, bool)):
        return ("eq", value)
    if isinstance(value, dict) and len(value) == 1:
        op, vals = next(iter(value.items()))
        if op in ("IN", "NOT_IN"):
            return (op.lower(), frozenset(vals))
    raise ValueError(f"unsupported condition {value!r}")


def _holds(cond, value) -> bool:
    op, v = cond
    return value == v if op == "eq" else (value in v if op == "in" else value not in v)


def compile_ruler(ruler) -> list[dict]:
    """POS-setting patterns in ruler order: {order, tokens: [{key: cond}], index, pos}."""
    out = []
    for order, entry in enumerate(ruler.patterns):
        pos = entry["attrs"].get("POS")
        if pos is None:
            continue
        for pattern in entry["patterns"]:
            toks = []
            for tok in pattern:
                if not set(tok) <= _KEYS:
                    raise ValueError(f"unsupported keys {sorted(tok)}")
                toks.append({k: _cond(v) for k, v in tok.items()})
            out.append({"order": order, "tokens": toks, "index": entry.get("index", 0), "pos": pos})
    return out


class FastPos:
    def __init__(self, patterns: list[dict]):
        self.base: dict[str, tuple[int, str]] = {}  # tag -> (order, pos)
        self.words: dict[tuple[str, str], tuple[int, str]] = {}  # (tag, lower) -> (order, pos)
        self.special: list[dict] = []
        for p in patterns:
            toks = p["tokens"]
            t = toks[0]
            simple = (
                len(toks) == 1 and t.get("TAG", ("", ""))[0] == "eq" and set(t) <= {"TAG", "LOWER"}
            )
            if simple and "LOWER" not in t:
                self.base[t["TAG"][1]] = max(
                    self.base.get(t["TAG"][1], (-1, "")), (p["order"], p["pos"])
                )
            elif simple and t["LOWER"][0] in ("eq", "in"):
                words = [t["LOWER"][1]] if t["LOWER"][0] == "eq" else t["LOWER"][1]
                for w in words:
                    key = (t["TAG"][1], w)
                    self.words[key] = max(self.words.get(key, (-1, "")), (p["order"], p["pos"]))
            else:
                self.special.append(p)

    @staticmethod
    def _token_matches(tok, conds) -> bool:
        for key, cond in conds.items():
            if not _holds(cond, getattr(tok, _ATTR[key])):
                return False
        return True

    def __call__(self, doc):
        n = len(doc)
        best: list[tuple[int, str]] = [(-1, "X")] * n
        for i, tok in enumerate(doc):
            tag = tok.tag_
            b = self.base.get(tag, (-1, "X"))
            w = self.words.get((tag, tok.lower_))
            best[i] = w if w is not None and w[0] > b[0] else b
        for p in self.special:
            toks = p["tokens"]
            span = len(toks)
            for i in range(n - span + 1):
                if all(self._token_matches(doc[i + k], toks[k]) for k in range(span)):
                    j = i + p["index"]
                    if p["order"] > best[j][0]:
                        best[j] = (p["order"], p["pos"])
        for tok, (_, pos) in zip(doc, best):
            tok.pos_ = pos
        return doc


def use_fast_pos(nlp) -> bool:
    """Swap the attribute_ruler of a loaded pipeline for the compiled lookup (in place)."""
    if "attribute_ruler" not in nlp.pipe_names:
        return False
    try:
        patterns = compile_ruler(nlp.get_pipe("attribute_ruler"))
    except ValueError:
        return False
    nlp.replace_pipe("attribute_ruler", COMPONENT, config={})
    nlp.get_pipe("attribute_ruler").__init__(patterns)
    return True


@Language.factory(COMPONENT)
def _make_fast_pos(nlp, name):
    return FastPos([])
