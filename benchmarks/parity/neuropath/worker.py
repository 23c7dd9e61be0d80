"""Runs the authors' NeuroPath class (KennyCaty/NeuroPath) offline on hopbench's inputs; started by
`compare.py` inside its own virtual environment. Not part of hopbench: it imports no hopbench
module, and hopbench never imports it.

    PYTHONPATH=OFFICIAL_SRC:<repository> <venv>/bin/python -m benchmarks.parity.neuropath.worker \\
        OFFICIAL_SRC WORK_DIR

OFFICIAL_SRC (a checkout of KennyCaty/NeuroPath) is imported from PYTHONPATH, where compare.py
puts it; the argument only names it.

WORK_DIR holds what the driver wrote: the index files in the reference's own format and names
under WORK_DIR/output and WORK_DIR/data (phrases, unique facts, passage-fact and fact-phrase
matrices, passage and phrase vectors), `vectors.npz` (every text hopbench embedded and its
vector), and `questions.json` (per question: the text and hopbench's recorded LLM replies with
the path lists they answered). Writes `official.json`.

What is replaced, and only that (placeholder modules registered before the import):
* ``src.langchain_util.init_langchain_model`` returns a client that answers from the recorded
  replies: the NER reply as recorded; each tracker reply with its path ids renumbered from
  hopbench's path list to the one in the official prompt, matched by path text (the reply's
  bytes are unchanged when the numbering already agrees);
* ``src.lm_wrapper.util.init_embedding_model`` returns a lookup of hopbench's vectors (an
  unknown text is reported and the question skipped, so both sides embed the same texts);
* faiss's GPU index: faiss-cpu's flat index is used as is (``index_cpu_to_gpu`` returns it);
* the file-name parse in ``load_index_files`` that cannot work at this commit (see main()).
Everything else, from ``NeuroPath.__init__`` to ``rank_docs``, is the authors' code.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
import types

import numpy as np

CORPUS = "musique"
INDEX_LLM = "hopbench"
RETRIEVER = "sentence-transformers/all-MiniLM-L6-v2"
PATH_LINE = re.compile(r"^(\d+): (.*?)(?: <expandable>: \[.*\])?$")


class MissingVector(Exception):
    pass


class LookupEncoder:
    """The official code's ``embed_model``: hopbench's vectors by text."""

    def __init__(self, texts, vecs):
        self.table = {t: v for t, v in zip(texts, vecs)}
        self.missing: list[str] = []

    def encode(self, texts, **kwargs):
        if isinstance(texts, str):
            texts = [texts]
        out = []
        for t in texts:
            if t not in self.table:
                self.missing.append(t)
                raise MissingVector(t)
            out.append(self.table[t])
        return np.asarray(out, dtype=np.float32)


class Reply:
    def __init__(self, content):
        self.content = content
        self.response_metadata = {"token_usage": {"total_tokens": 0}}


def _json_object(text):
    pat = re.compile(r"\{(?:[^{}]|(?:\{(?:[^{}]|(?:\{[^{}]*\})*)*\})*)*\}")
    m = pat.search(text or "")
    if not m:
        return None
    try:
        return json.loads(m.group())
    except json.JSONDecodeError:
        return None


class RecordedClient:
    """The official code's LLM client: hopbench's recorded replies for the current question."""

    def __init__(self):
        self.q = None
        self.log: list[dict] = []

    def start(self, q):
        self.q, self.hop = q, 0
        self.log = []

    def invoke(self, messages, **kwargs):
        human = messages[-1].content
        system = messages[0].content
        digest = prompt_digest([m.content for m in messages])
        if not human.startswith("Query: "):  # query NER
            self.log.append({"call": "ner", "system_len": len(system), "prompt_sha": digest})
            return Reply(self.q["ner_reply"])
        hops = self.q["hops"]
        if self.hop >= len(hops):
            self.log.append({"call": "tracker", "hop": self.hop + 1, "unrecorded": True})
            raise RuntimeError("no recorded tracker reply for this hop")
        rec = hops[self.hop]
        self.hop += 1
        body = human.split("Paths:\n", 1)[1].rsplit("\nOutput:\n", 1)[0]
        official_paths = [PATH_LINE.match(line).group(2) for line in body.splitlines() if line]
        text, note = remap(rec["reply_text"], rec["paths"], official_paths)
        self.log.append(
            {
                "call": "tracker",
                "hop": self.hop,
                "same_paths": official_paths == rec["paths"],
                "same_path_set": sorted(official_paths) == sorted(rec["paths"]),
                "n_official": len(official_paths),
                "n_hopbench": len(rec["paths"]),
                "remap": note,
                "system_len": len(system),
                "prompt_sha": digest,
            }
        )
        return Reply(text)


def prompt_digest(contents: list[str]) -> str:
    """sha256 of a request's message texts in order (compare.py computes the same
    from the requests hopbench's cache recorded, to check `prompts: official` sends their text)."""
    return hashlib.sha256("\x00".join(contents).encode("utf-8")).hexdigest()


def remap(text, hb_paths, off_paths):
    """The reply with hopbench's path ids replaced by the official ids of the same path texts."""
    if text is None:
        return "", "no reply"
    reply = _json_object(text)
    if not isinstance(reply, dict) or hb_paths == off_paths:
        return text, "identity"
    first = {}
    for i, p in enumerate(off_paths):
        first.setdefault(p, i)
    unmapped = []
    for key in ("valid_ids", "need_expand_ids"):
        ids = reply.get(key)
        if not isinstance(ids, list):
            continue
        new = []
        for i in ids:
            if (
                isinstance(i, int)
                and not isinstance(i, bool)
                and -len(hb_paths) <= i < len(hb_paths)
            ):
                p = hb_paths[i]
                if p in first:
                    new.append(first[p])
                else:
                    unmapped.append(p)
                    new.append(i)
            else:
                new.append(i)
        reply[key] = new
    return json.dumps(reply), ("unmapped: %d" % len(unmapped)) if unmapped else "renumbered"


def install_placeholders(client, encoder):
    import faiss

    lc = types.ModuleType("src.langchain_util")
    lc.init_langchain_model = lambda *a, **k: client
    sys.modules["src.langchain_util"] = lc
    wrapper = types.ModuleType("src.lm_wrapper")
    wrapper.__path__ = []
    util = types.ModuleType("src.lm_wrapper.util")
    util.init_embedding_model = lambda name: encoder
    sys.modules["src.lm_wrapper"] = wrapper
    sys.modules["src.lm_wrapper.util"] = util
    if not hasattr(faiss, "StandardGpuResources"):
        faiss.StandardGpuResources = lambda: None
        faiss.index_cpu_to_gpu = lambda res, device, index: index


def main() -> int:
    work = sys.argv[2]  # sys.argv[1], the checkout, is on PYTHONPATH
    vz = np.load(os.path.join(work, "vectors.npz"), allow_pickle=False)
    encoder = LookupEncoder([str(t) for t in vz["texts"]], vz["vecs"])
    client = RecordedClient()
    install_placeholders(client, encoder)
    os.chdir(work)
    import src.neuropath as reference
    from src.neuropath import NeuroPath

    # load_index_files (L560-566) parses the sample count after the first "<model>_" in the
    # file name, but since L65 the name holds the model twice, so the parse fails for every
    # model name; the index file is found as the authors meant it (the only patch).
    real_glob = reference.glob
    reference.glob = lambda pattern: (
        [f"{INDEX_LLM}_" + f.rsplit("_", 1)[1] for f in real_glob(pattern)]
        if "openie_" in pattern
        else real_glob(pattern)
    )

    t0 = time.perf_counter()
    rag = NeuroPath(
        CORPUS,
        index_llm="openai",
        index_llm_model=INDEX_LLM,
        rag_llm="openai",
        rag_llm_model="recorded",
        graph_creating_retriever_name=RETRIEVER,
        graph_type="facts",
        dpr_only=False,
        max_hop=2,
    )
    init_s = time.perf_counter() - t0
    questions = json.load(open("questions.json"))
    one_shot = bool(json.load(open("settings.json")).get("one_shot", False))
    out = []
    for q in questions:
        client.start(q)
        miss_before = len(encoder.missing)
        t = time.perf_counter()
        try:
            ids, scores, cand, paths, _, _ = rag.rank_docs(q["text"], top_k=10, one_shot=one_shot)
            row = {
                "id": q["id"],
                "top": [int(i) for i in ids],
                "scores": [float(s) for s in scores],
                "candidate_docs": [int(d) for d in cand],
                "valid_paths": list(paths),
            }
        except MissingVector:
            row = {"id": q["id"], "missing_vectors": encoder.missing[miss_before:]}
        except (
            Exception
        ) as exc:  # the authors' run skips a question that raises (rag_neuropath L271)
            row = {"id": q["id"], "error": f"{type(exc).__name__}: {exc}"}
        row["seconds"] = time.perf_counter() - t
        row["calls"] = client.log
        out.append(row)
    json.dump(
        {
            "init_seconds": init_s,
            "rows": out,
            "coref": [list(map(int, c)) for c in rag.coreference_resolution],
        },
        open("official.json", "w"),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
