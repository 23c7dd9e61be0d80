"""`hopbench show RUN QUESTION_ID`: one question of a run, from the question to its scores.

Shows the question, gold answers and passages, whether it fell back, the retriever's trace,
the retrieved list marked HIT / miss, the answer and its scores. The trace is read as a
`hopbench.core.records.Trace`: its common fields (seeds, fallback, LLM cost, timings) are printed
the same way for every method, whatever shape the method wrote them in. The rest of a trace is
the method's own (`Trace.extra`: activations, PPR mass, flow, paths, LLM calls), printed by the
shape of each value: a name->number mapping or a list of (name, number) pairs is a ranking
(top N shown), a list of lists is a set of paths, a list of records is one line per record,
anything else is printed as is.
"""

from __future__ import annotations

import json
from numbers import Number
from pathlib import Path

import yaml

from hopbench.core.errors import HopbenchError
from hopbench.core.records import Row, Seed, Trace
from hopbench.core.run_folders import run_folders
from hopbench.report.run_reader import read_predictions

# Trace keys printed first, in this order (by substring); the rest follow alphabetically.
_PRIORITY = ("seed", "activation", "ppr", "mass", "flow", "score", "path", "llm", "call")
_NAME_KEYS = ("id", "node", "name", "entity", "passage", "passage_id", "title")
_PATH_KEYS = ("path", "nodes", "hops", "chain")
_WIDTH = 160
_LONG = 60  # a string field longer than this gets a line of its own


# ---- locating the run and the question ------------------------------------------------------
def find_run(run: str, runs_dir: str | Path = "runs") -> Path:
    """A run folder given as a path, as a table's `run_dir` cell (relative to runs_dir), or as
    (the start of) a config hash of a complete run in runs_dir, found as `hopbench report` finds
    runs (run_folders: no link out of the runs folder, no `<hash>.bak` copy)."""
    p = Path(run)
    if (p / "predictions.jsonl").exists():
        return p
    if (Path(runs_dir) / p / "predictions.jsonl").exists():
        return Path(runs_dir) / p
    hits = [f for f in run_folders(runs_dir, "hopbench show") if f.name.startswith(run)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise HopbenchError(
            f"'{run}' matches {len(hits)} runs: "
            + ", ".join(str(h) for h in hits[:5])
            + "; give the folder"
        )
    raise HopbenchError(
        f"no run '{run}': not a folder with predictions.jsonl, nor the config hash of a complete "
        f"run under {runs_dir}/<dataset>/<retriever>/"
    )


def find_question(run_dir: Path, question_id: str) -> dict:
    rows = read_predictions(run_dir / "predictions.jsonl")
    for row in rows:
        if str(row["id"]) == question_id:
            return row
    some = ", ".join(str(r["id"]) for r in rows[:5])
    raise HopbenchError(
        f"{run_dir / 'predictions.jsonl'}: no question with id '{question_id}' "
        f"({len(rows)} questions; e.g. {some})"
    )


# ---- passage titles -------------------------------------------------------------------------
def titles_from(obj) -> dict[str, str]:
    """passage id -> title from any '...title...' mapping in a trace or prediction."""
    out: dict[str, str] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            if "title" in str(k).lower() and isinstance(v, dict):
                out.update({str(a): str(b) for a, b in v.items() if isinstance(b, str)})
            elif isinstance(v, (dict, list)):
                out.update(titles_from(v))
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, dict) and isinstance(v.get("title"), str):
                pid = v.get("passage_id") or v.get("id")
                if isinstance(pid, str):
                    out[pid] = v["title"]
            if isinstance(v, (dict, list)):
                out.update(titles_from(v))
    return out


def titles_from_corpus(run_dir: Path, needed: set[str]) -> dict[str, str]:
    """Titles from the corpus named in the run's config.yaml, when its files can be found
    (relative paths are tried from here and from the folder that holds runs/)."""
    cfg_path = run_dir / "config.yaml"
    if not cfg_path.exists() or not needed:
        return {}
    ds = (yaml.safe_load(cfg_path.read_text(encoding="utf-8")) or {}).get("dataset") or {}
    if ds.get("source", "local") != "local" or not ds.get("questions_path"):
        return {}
    from hopbench.data import load_dataset

    for root in (Path.cwd(), run_dir.resolve().parents[3]):
        q, c = (
            root / ds["questions_path"],
            root / ds["corpus_path"] if ds.get("corpus_path") else None,
        )
        if q.exists() and (c is None or c.exists()):
            params = {
                **ds,
                "questions_path": str(q),
                "corpus_path": str(c) if c else None,
                "limit": 1,
            }
            try:
                dataset = load_dataset(**params)
            except HopbenchError:
                return {}
            return {p.id: p.title for p in dataset.corpus if p.id in needed}
    return {}


# ---- generic trace rendering ----------------------------------------------------------------
def _fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    return str(v)


def _clip(s: str) -> str:
    return s if len(s) <= _WIDTH else s[: _WIDTH - 1] + "…"


def _is_num(v) -> bool:
    return isinstance(v, Number) and not isinstance(v, bool)


class _Namer:
    """Adds a passage's title and a [gold] mark to ids it knows."""

    def __init__(self, titles: dict[str, str], gold: set[str]):
        self.titles, self.gold = titles, gold

    def __call__(self, name) -> str:
        s = _fmt(name)
        if s in self.titles:
            s += f" ({self.titles[s]})"
        if _fmt(name) in self.gold:
            s += " [gold]"
        return s


def _ranking(value) -> list[tuple[str, float]] | None:
    """(name, score) pairs when the value is a ranking, else None."""
    if isinstance(value, dict) and value and all(_is_num(v) for v in value.values()):
        return [(k, float(v)) for k, v in value.items()]
    if isinstance(value, list) and value:
        if all(
            isinstance(x, (list, tuple)) and len(x) == 2 and _is_num(x[1]) and not _is_num(x[0])
            for x in value
        ):
            return [(x[0], float(x[1])) for x in value]
        if all(isinstance(x, dict) for x in value):
            names = [next((k for k in _NAME_KEYS if k in x), None) for x in value]
            nums = [[k for k, v in x.items() if _is_num(v)] for x in value]
            if all(names) and all(len(n) == 1 for n in nums):
                return [(x[n], float(x[k[0]])) for x, n, k in zip(value, names, nums, strict=True)]
    return None


def _path_of(x):
    if isinstance(x, list) and x and all(not isinstance(y, (dict, list)) for y in x):
        return x, {}
    if isinstance(x, dict):
        for k in _PATH_KEYS:
            if isinstance(x.get(k), list) and all(not isinstance(y, (dict, list)) for y in x[k]):
                return x[k], {a: b for a, b in x.items() if a != k}
    return None


def render_value(key: str, value, name: _Namer, top: int, indent: str = "  ") -> list[str]:
    ranking = _ranking(value)
    if ranking is not None:
        ranking.sort(key=lambda kv: -kv[1])
        head = f"{indent}{key} (top {min(top, len(ranking))} of {len(ranking)}):"
        width = max(len(_fmt(v)) for _, v in ranking[:top])
        return [head] + [
            _clip(f"{indent}  {_fmt(v):>{width}}  {name(n)}") for n, v in ranking[:top]
        ]
    if (
        isinstance(value, list)
        and value
        and all(_path_of(x) is not None for x in value)
        and any(isinstance(x, (list, dict)) for x in value)
    ):
        lines = [f"{indent}{key} ({len(value)}):"]
        for x in value[:top]:
            nodes, extra = _path_of(x)
            tail = "  " + " ".join(f"{a}={_fmt(b)}" for a, b in extra.items()) if extra else ""
            lines.append(_clip(f"{indent}  " + " -> ".join(name(n) for n in nodes) + tail))
        if len(value) > top:
            lines.append(f"{indent}  … {len(value) - top} more")
        return lines
    if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        lines = [f"{indent}{key} ({len(value)}):"]
        for i, x in enumerate(value[:top], start=1):
            # short fields on the record's line; long texts (an LLM's reasoning) each on its own
            short = {a: b for a, b in x.items() if not (isinstance(b, str) and len(b) > _LONG)}
            lines.append(
                _clip(f"{indent}  {i}. " + " ".join(f"{a}={_fmt(b)}" for a, b in short.items()))
            )
            for a, b in x.items():
                if a not in short:
                    text = " ".join(b.split())
                    lines.append(
                        f"{indent}     {a}: "
                        + (text if len(text) <= 4 * _WIDTH else text[: 4 * _WIDTH - 1] + "…")
                    )
        if len(value) > top:
            lines.append(f"{indent}  … {len(value) - top} more")
        return lines
    if isinstance(value, list):
        shown = ", ".join(name(x) for x in value[:top])
        more = f", … {len(value) - top} more" if len(value) > top else ""
        return [_clip(f"{indent}{key} ({len(value)}): {shown}{more}")]
    if isinstance(value, dict):
        if not value:
            return [f"{indent}{key}: {{}}"]
        lines = [f"{indent}{key}:"]
        for k in _ordered(value):
            lines += render_value(k, value[k], name, top, indent + "  ")
        return lines
    return [_clip(f"{indent}{key}: {name(value) if isinstance(value, str) else _fmt(value)}")]


def _ordered(d: dict) -> list[str]:
    def rank(k: str):
        low = str(k).lower()
        return next((i for i, p in enumerate(_PRIORITY) if p in low), len(_PRIORITY)), str(k)

    return sorted(d, key=rank)


def render_seeds(seeds: list[Seed], name: _Namer, top: int, indent: str = "  ") -> list[str]:
    """Weighted seeds as a ranking (with their other fields on the line), else a list of names."""
    if not seeds:
        return [f"{indent}seeds: none"]
    if any(s.weight is None for s in seeds):
        return render_value("seeds", [s.node for s in seeds], name, top, indent)
    ranked = sorted(seeds, key=lambda s: -s.weight)
    width = max(len(_fmt(s.weight)) for s in ranked[:top])
    lines = [f"{indent}seeds (top {min(top, len(ranked))} of {len(ranked)}):"]
    for s in ranked[:top]:
        tail = "  " + " ".join(f"{a}={_fmt(b)}" for a, b in s.extra.items()) if s.extra else ""
        lines.append(_clip(f"{indent}  {_fmt(s.weight):>{width}}  {name(s.node)}{tail}"))
    return lines


def render_trace(trace: dict, name: _Namer, top: int) -> list[str]:
    """The common fields of a trace (fallbacks are shown above it), then the method's own."""
    if not trace:
        return ["  (empty: this retriever records no trace)"]
    t = Trace.from_dict(trace)
    lines = render_seeds(t.seeds, name, top) if t.seeds is not None else []
    for k in _ordered(t.extra):
        if "title" in str(k).lower() and isinstance(t.extra[k], dict):
            continue  # id -> title maps are shown next to the ids instead
        lines += render_value(k, t.extra[k], name, top)
    if t.timings:
        lines += render_value("timings", t.timings, name, top)
    if t.llm_cost:
        lines.append(
            _clip("  llm_cost: " + " ".join(f"{k}={_fmt(v)}" for k, v in t.llm_cost.items()))
        )
    if t.llm_keys:
        lines.append(
            _clip(f"  llm_keys ({len(t.llm_keys)}): " + " ".join(k[:12] for k in t.llm_keys))
        )
    return lines


def render_fallbacks(row: Row) -> list[str]:
    """'fallback (n):' and one 'part  step: reason' line per entry; nothing when none."""
    entries = [("retrieval", e) for e in row.retrieval.fallback]
    entries += [("reader", e) for e in (row.reading.fallback if row.reading else [])]
    if not entries:
        return []
    return [f"fallback ({len(entries)}):"] + [
        f"  {part:<9}  {e.get('step')}: {' '.join(str(e.get('reason', '')).split())}"
        for part, e in entries
    ]


# ---- the whole page -------------------------------------------------------------------------
def render(run_dir: Path, row: dict | Row, titles: dict[str, str], top: int = 10) -> str:
    row = row if isinstance(row, Row) else Row.from_dict(row)
    gold = [str(g) for g in row.gold_passage_ids]
    name = _Namer(titles, set(gold))
    meta_s = ", ".join(
        f"{k}={_fmt(v)}" for k, v in row.meta.items() if not isinstance(v, (dict, list))
    )
    out = [
        f"run        {run_dir}",
        f"question   {row.id}" + (f"  ({meta_s})" if meta_s else ""),
        f"  {row.question}",
    ]
    if row.kind == "claim":
        out.append(f"gold label {row.label}")
    else:
        out.append("gold answers  " + " | ".join(map(str, row.gold_answers)))
    note = "" if row.gold_complete else "  (incomplete: not scored for retrieval)"
    out.append(f"gold passages ({len(gold)}){note}:")
    out += [f"  {g}  {titles.get(g, '')}".rstrip() for g in gold]
    out += render_fallbacks(row)
    out.append("trace:")
    out += render_trace(row.trace, name, top)
    ranked = [str(p) for p in row.ranked_passage_ids]
    scores = row.scores
    hits = sum(p in set(gold) for p in ranked)
    out.append(f"retrieved ({len(ranked)}; {hits}/{len(gold)} gold found):")
    for i, pid in enumerate(ranked, start=1):
        s = f"{scores[i - 1]:.4f}" if i <= len(scores) and _is_num(scores[i - 1]) else ""
        mark = "HIT " if pid in gold else "miss"
        out.append(f"  {i:>3}  {mark}  {pid}  {s:>8}  {titles.get(pid, '')}".rstrip())
    if row.reader_trace:
        out.append("reader:")
        out += render_trace(row.reader_trace, name, top)
    out.append("answer     " + ("(no reader)" if row.answer is None else repr(row.answer)))
    out.append(
        "scores     "
        + (" ".join(f"{k}={_fmt(float(v))}" for k, v in row.metrics.items()) or "(none apply)")
    )
    if _is_num(row.latency_ms):
        out.append(f"latency    {row.latency_ms:.2f} ms")
    return "\n".join(out) + "\n"
