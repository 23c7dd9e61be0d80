"""Seeded fuzzing of the dataset loaders (issue #54): real small files of every format, mutated
by random truncations, bit flips, spliced bytes, huge and deep values, type swaps and bad
encodings. Every case must end in a loaded dataset that keeps the contract or in one
`HopbenchError` line naming the file; anything else (a traceback) is a failure.

`tests/data/test_fuzz_loaders.py` runs it in a child process (to measure its peak memory);
run it longer by hand with `python -m tests.data.fuzz_loaders --cases 20000 --seed 7`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.data import load_dataset
from hopbench.data.text_limit import DEFAULT_MAX_TEXT_CHARS

MAX_MESSAGE_CHARS = 1_000
_HOLE = "\u0000hole\u0000"  # stands for a value json.dumps cannot write (too deep, too long)


# ---- seed files: small real files of every format ------------------------------------------
def seeds(data_dir: Path) -> list[dict]:
    """(format, questions bytes, corpus bytes or None, file names) of real benchmark data."""

    def read(rel: str) -> bytes:
        return (data_dir / rel).read_bytes()

    def dumps(value) -> bytes:
        return json.dumps(value, ensure_ascii=False).encode()

    musique = read("musique/musique_qa_sub.json")
    hotpot = json.loads(read("hotpotqa/hotpotqa_train.json"))[:2]
    hotpot_corpus = {title: sents for r in hotpot for title, sents in r["context"]}
    linear = json.loads(read("2wikimultihopqa/2wikimultihopqa_questions.json"))[:3]
    evidence = read("hover/programfc_hover_dev_gold_evidence.jsonl").split(b"\n")[:3]
    originals = {json.loads(line)["original"] for line in evidence}
    claims = [
        c for c in json.loads(read("hover/hover_dev_release_v1.1.json")) if c["claim"] in originals
    ]
    jsonl = b"\n".join(dumps(r) for r in json.loads(musique)) + b"\n"
    return [
        {"format": "musique", "q": musique, "c": read("musique/musique_sub_corpus.json")},
        {"format": "musique", "q": musique, "c": None},
        {"format": "musique", "q": jsonl, "c": None, "q_name": "q.jsonl"},
        {"format": "hotpotqa", "q": dumps(hotpot), "c": dumps(hotpot_corpus)},
        {"format": "hotpotqa", "q": dumps(hotpot), "c": None},
        {
            "format": "2wiki",
            "q": read("2wikimultihopqa/2wikimultihopqa_qa_sub.json"),
            "c": read("2wikimultihopqa/2wikimultihopqa_sub_corpus.json"),
        },
        {
            "format": "2wiki_linearrag",
            "q": dumps(linear),
            "c": read("2wikimultihopqa/2wikimultihopqa_sub_corpus.json"),
        },
        {
            "format": "hover",
            "q": dumps(claims),
            "c": b"\n".join(evidence) + b"\n",
            "c_name": "c.jsonl",
        },
    ]


# ---- mutations -----------------------------------------------------------------------------
def _nodes(value) -> list[tuple]:
    """Every (container, key) of a JSON value, walked without recursion."""
    out, todo = [], [value]
    while todo:
        v = todo.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, child in items:
            out.append((v, k))
            todo.append(child)
    return out


def _one_value(raw: bytes, rng: random.Random) -> tuple[list[bytes], int, object] | None:
    """`raw` split into JSON Lines (or one JSON value), a random one's index and its value."""
    lines = raw.split(b"\n") if b"\n{" in raw else [raw]
    k = rng.randrange(len(lines))
    try:
        return lines, k, json.loads(lines[k])
    except ValueError:
        return None


def _with_hole(
    raw: bytes, rng: random.Random, fill: str, strings_only: bool = False
) -> bytes | None:
    """`raw` with one random value replaced by the JSON text `fill`; None when no value qualifies."""
    if (parsed := _one_value(raw, rng)) is None:
        return None
    lines, k, value = parsed
    nodes = [(c, key) for c, key in _nodes(value) if not strings_only or isinstance(c[key], str)]
    if not nodes:
        return None
    container, key = rng.choice(nodes)
    container[key] = _HOLE
    text = json.dumps(value, ensure_ascii=False).replace(json.dumps(_HOLE), fill, 1)
    lines[k] = text.encode("utf-8", "surrogatepass")
    return b"\n".join(lines)


def _without_a_key(raw: bytes, rng: random.Random) -> bytes | None:
    """`raw` with one random object key removed; None when there is none."""
    if (parsed := _one_value(raw, rng)) is None:
        return None
    lines, k, value = parsed
    keys = [(c, key) for c, key in _nodes(value) if isinstance(c, dict)]
    if not keys:
        return None
    container, key = rng.choice(keys)
    del container[key]
    lines[k] = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return b"\n".join(lines)


def mutate(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One random mutation of `raw`: (what was done, the bytes). A (seed, case) pair draws the
    same mutation as before the kinds were split into functions (#58): keep the draws' order."""
    kind = rng.choice(
        ["truncate", "bitflip", "splice", "huge", "deep", "swap", "drop", "encoding", "encoding"]
    )
    return _MUTATIONS[kind](raw, rng)


def _truncate(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    at = rng.randrange(len(raw) + 1)
    return f"truncate at {at}", raw[:at]


def _bitflip(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    out = bytearray(raw)
    n = rng.randint(1, 8)
    for _ in range(n):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return f"{n} bit flips", bytes(out)


def _splice(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    a = rng.randrange(len(raw))
    b = min(len(raw), a + rng.randint(1, 64))
    if rng.random() < 0.5:
        return f"delete {a}:{b}", raw[:a] + raw[b:]
    return f"duplicate {a}:{b}", raw[:b] + raw[a:b] + raw[b:]


def _huge(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    """A value at and past the loaders' limits: text length, int digits, float range, items."""
    what = rng.choice(["string", "string", "digits", "float", "list"])
    if what == "string":
        n = rng.choice([DEFAULT_MAX_TEXT_CHARS, DEFAULT_MAX_TEXT_CHARS + 1, 3_000_000])
        out = _with_hole(raw, rng, json.dumps("word " * (n // 5) + "w" * (n % 5)), True)
        return f"a string of {n:,} characters", out if out is not None else raw
    fill = {
        "digits": "7" * rng.choice([4300, 4301, 100_000]),
        "float": rng.choice(["1e400", "-1e400", "1e-400"]),
        "list": "[" + ",".join(["0"] * 200_000) + "]",
    }[what]
    out = _with_hole(raw, rng, fill)
    return f"huge {what}", out if out is not None else raw


def _deep(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    depth = rng.choice([100, 900, 1100, 5000, 200_000])
    open_, close = rng.choice([("[", "]"), ('{"a":', "}")])
    out = _with_hole(raw, rng, open_ * depth + "0" + close * depth)
    return f"nested {depth} deep", out if out is not None else raw


def _swap(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    fill = rng.choice(["null", "true", "0", "-1", "1.5", '""', '" "', "[]", "{}", '"x"', "[null]"])
    out = _with_hole(raw, rng, fill)
    return f"a value swapped for {fill}", out if out is not None else raw


def _drop(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    out = _without_a_key(raw, rng)
    return "a key dropped", out if out is not None else raw


def _encoding(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Bytes that are not the UTF-8 JSON a loader expects, or text no UTF-8 can hold."""
    how = rng.choice(["utf-16", "utf-8-sig", "latin-1", "0xff", "surrogate", "nul", "empty"])
    if how == "utf-16":
        return "UTF-16", raw.decode("utf-8", "replace").encode("utf-16")
    if how == "utf-8-sig":
        return "UTF-8 with a BOM", b"\xef\xbb\xbf" + raw
    if how == "latin-1":
        return "Latin-1", raw.decode("utf-8", "replace").encode("latin-1", "replace")
    if how == "0xff":
        i = rng.randrange(len(raw) + 1)
        return f"byte 0xff at {i}", raw[:i] + b"\xff" + raw[i:]
    if how == "surrogate":
        out = _with_hole(raw, rng, json.dumps("lone \ud800 surrogate"), True)
        return "a lone surrogate", out if out is not None else raw
    if how == "nul":
        out = _with_hole(raw, rng, json.dumps("nul \u0000 char"), True)
        return "a NUL character", out if out is not None else raw
    return "an empty file", rng.choice([b"", b"   \n", b"\n\n"])


_MUTATIONS = {
    "truncate": _truncate,
    "bitflip": _bitflip,
    "splice": _splice,
    "huge": _huge,
    "deep": _deep,
    "swap": _swap,
    "drop": _drop,
    "encoding": _encoding,
}


# ---- one case --------------------------------------------------------------------------------
def _check_loaded(ds) -> None:
    """The Dataset contract (hopbench.data.schema) a loader must keep whatever its input."""
    ids = {p.id for p in ds.corpus}
    assert ds.questions and ds.corpus and len(ids) == len(ds.corpus)
    for q in ds.questions:
        assert set(q.gold_passage_ids) <= ids, q.id
        for text in (q.id, q.text, *q.answers):
            assert isinstance(text, str) and len(text) <= DEFAULT_MAX_TEXT_CHARS
            text.encode("utf-8")
    for p in ds.corpus:
        for text in (p.title, p.text):
            assert len(text) <= DEFAULT_MAX_TEXT_CHARS
            text.encode("utf-8")


def run_case(seed: dict, rng: random.Random, folder: Path) -> tuple[str, str, str | None]:
    """(mutation, outcome 'loaded' or 'refused', the failure's traceback or None)."""
    target = "c" if seed["c"] is not None and rng.random() < 0.4 else "q"
    what, data = mutate(seed[target], rng)
    files = {}
    for key in ("q", "c"):
        if seed[key] is None:
            files[key] = None
            continue
        path = folder / seed.get(f"{key}_name", f"{key}.json")
        path.write_bytes(data if key == target else seed[key])
        files[key] = path
    what = f"{seed['format']} {files[target].name}: {what}"
    try:
        ds = load_dataset("fuzz", seed["format"], files["q"], files["c"])
    except HopbenchError as exc:
        msg = str(exc)
        if "\n" in msg or not any(msg.startswith(str(p)) for p in files.values() if p):
            return what, "refused", f"not one line naming the file: {msg[:300]!r}"
        try:
            msg.encode("utf-8")  # printable to stderr
        except UnicodeEncodeError:
            return what, "refused", f"a message that cannot be printed: {msg[:300]!r}"
        if len(msg) > MAX_MESSAGE_CHARS:  # a huge value quoted whole is no clear line either
            return what, "refused", f"a message of {len(msg):,} characters: {msg[:300]!r}"
        return what, "refused", None
    except BaseException:  # a traceback is the failure this test exists for
        return what, "crashed", traceback.format_exc(limit=-6)
    try:
        _check_loaded(ds)
    except (AssertionError, UnicodeEncodeError):
        return what, "loaded", "the Dataset breaks its contract:\n" + traceback.format_exc(limit=-2)
    return what, "loaded", None


def peak_rss() -> int:
    """This process's peak resident memory in bytes: VmHWM, its own high-water mark (getrusage's
    ru_maxrss keeps the parent's from before exec: a child of pytest would report pytest's)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))


def _watchdog(bound: int) -> None:
    """End the process (exit 3) once its resident memory passes `bound` bytes."""
    page = os.sysconf("SC_PAGE_SIZE")
    while True:
        with open("/proc/self/statm") as fh:
            rss = int(fh.read().split()[1]) * page
        if rss > bound:
            print(json.dumps({"over_bound": rss}), flush=True)
            os._exit(3)
        time.sleep(0.02)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=54)
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--rss-bound", type=int, default=0, help="bytes; 0: no watchdog")
    args = ap.parse_args(argv)
    if args.rss_bound:
        threading.Thread(target=_watchdog, args=(args.rss_bound,), daemon=True).start()
    rng = random.Random(args.seed)
    start, cpu0 = time.perf_counter(), time.process_time()
    bases = seeds(args.data_dir)
    outcomes: dict[str, int] = {}
    failures = []
    with tempfile.TemporaryDirectory(prefix="hopbench-fuzz-") as tmp:
        for i in range(args.cases):
            folder = Path(tmp) / str(i % 4)
            folder.mkdir(exist_ok=True)
            what, outcome, failure = run_case(bases[i % len(bases)], rng, folder)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if failure:
                failures.append({"case": i, "what": what, "failure": failure})
    summary = {
        "seed": args.seed,
        "cases": args.cases,
        "outcomes": outcomes,
        "failures": failures[:20],
        "n_failures": len(failures),
        "seconds": round(time.perf_counter() - start, 2),
        "cpu_seconds": round(time.process_time() - cpu0, 2),
        "max_rss": peak_rss(),
    }
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    sys.exit(1 if main()["n_failures"] else 0)
