"""Runs the authors' CatRAG code (kwunhang/CatRAG ce06b459, ``src/catrag/CatRAG.py``) offline on
hopbench's triples, vectors and recorded LLM decisions; started by `compare.py` inside its
virtual environment (`hipporag==2.0.0a4` --no-deps and the pins of parity/hipporag/compare.py).
Not part of hopbench: imports no hopbench module.

    PYTHONPATH=WORK_DIR/pkg:<repository> <venv>/bin/python -m benchmarks.parity.catrag.worker \\
        WORK_DIR OFFICIAL_SRC

OFFICIAL_SRC holds ``catrag/CatRAG.py``, ``catrag/rerank.py`` and ``catrag/utils/config_utils.py``
of that commit (kept outside the repository). The modules CatRAG.py imports from its HippoRAG
fork (embedding store, utils, linking, OpenIE, LLM and embedding registries) come from the
official hipporag package, through one-line re-export modules this worker writes. WORK_DIR
holds what the driver wrote (the HippoRAG worker's files: docs.json, queries.json, vectors.npz,
the OpenIE file) plus ``decisions.json``: per question, hopbench's recorded LLM decisions.

What is replaced, and only that (benchmarks/common/hipporag_offline.py's stand-ins, as for HippoRAG):
* vllm, gritlm, litellm: placeholder modules; the embedding model: the precomputed vectors;
* the prompt templates: ``render`` returns its arguments (name and values), since no model reads
  them; the LLM: `DecisionReplay`, which writes hopbench's recorded decision for the request in
  the format the code parses (DSPy ``fact_after_filter`` field, ``{"named_entities": [...]}``,
  one ``ID (Entity Name): Score`` line per neighbour). A neighbour hopbench never scored gets no
  line, so the code's own default (4) applies, and is counted;
* node summaries: an empty summary file (a summary only feeds the prompt text, which the
  replay does not read).
Everything else, from ``index`` to ``graph_search_with_fact_entities``, ``call_llm_score``'s
parser and ``run_ppr`` (igraph prpack, directed), is the authors' code.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import time
from pathlib import Path

from benchmarks.common.shims import install_placeholders

install_placeholders(purpose="the offline comparison")

from benchmarks.common import hipporag_offline as offline
from benchmarks.common.versions import package_versions

WORK = Path(sys.argv[1])
SRC = Path(sys.argv[2])
TOP = 20
REPEATS = int(os.environ.get("HOPBENCH_TIMING_REPEATS", "3"))
VERSIONS = ("hipporag", "igraph", "torch", "numpy", "transformers", "tenacity")

SHIMS = {  # catrag module -> what it re-exports from the official hipporag package
    "llm/__init__.py": "from hipporag.llm import *\nfrom hipporag.llm import _get_llm_class, BaseLLM\n",
    "embedding_model/__init__.py": "from hipporag.embedding_model import "
    "_get_embedding_model_class, BaseEmbeddingModel\n",
    "embedding_store.py": "from hipporag.embedding_store import *\n",
    "information_extraction/__init__.py": "from hipporag.information_extraction import OpenIE\n",
    "evaluation/__init__.py": "",
    "evaluation/retrieval_eval.py": "from hipporag.evaluation.retrieval_eval import "
    "RetrievalRecall\nChainRecall = None\n",
    "evaluation/qa_eval.py": "from hipporag.evaluation.qa_eval import QAExactMatch, "
    "QAF1Score\nQAAccuracy = QAJSRScore = None\n",
    "prompts/__init__.py": "",
    "prompts/linking.py": "from hipporag.prompts.linking import *\n",
    "prompts/filter_default_prompt.py": "from hipporag.prompts.filter_default_prompt import *\n",
    "prompts/prompt_template_manager.py": "from hipporag.prompts.prompt_template_manager import *\n",
    "utils/__init__.py": "",
    "utils/misc_utils.py": "from hipporag.utils.misc_utils import *\n",
    "utils/embed_utils.py": "from hipporag.utils.embed_utils import *\n",
    "utils/typing.py": "from hipporag.utils.typing import *\n",
    "utils/logging_utils.py": "from hipporag.utils.logging_utils import *\n",
    "__init__.py": "",
}
AUTHORS = ("CatRAG.py", "rerank.py", "utils/config_utils.py")


def build_package() -> Path:
    """WORK/pkg/catrag: the authors' files beside the re-export modules (compare.py puts
    WORK/pkg on this process's PYTHONPATH)."""
    root = WORK / "pkg"
    pkg = root / "catrag"
    for rel, text in SHIMS.items():
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for rel in AUTHORS:
        src = SRC / "catrag" / rel
        if not src.exists():
            raise SystemExit(
                f"{src}: missing (OFFICIAL_SRC must hold catrag/{rel} of kwunhang/CatRAG ce06b459)"
            )
        (pkg / rel).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    return root


class Templates:
    """Stands in for PromptTemplateManager: a rendered prompt is its name and values."""

    def __init__(self, role_mapping=None):
        pass

    def is_template_name_valid(self, name):
        return True

    def render(self, name, **values):
        return {"template": name, **values}


_NEIGHBOUR = re.compile(r'^\[(\d+)\] "(.*?)" \| LINKING FACT:', re.MULTILINE)
_QUESTION = re.compile(r"\[\[ ## question ## \]\]\n(.*?)\n\n\[\[ ## fact_before_filter", re.DOTALL)


class DecisionReplay:
    """The LLM: hopbench's recorded decisions, written as the code's parsers expect them."""

    def __init__(self, decisions: dict):
        self.d = decisions
        self.count = {"filter": 0, "ner": 0, "score_calls": 0, "neighbours": 0, "undecided": 0}
        self.undecided: list = []
        self.asked: dict = {}  # question -> the nodes whose neighbours were scored, in call order

    def infer(self, messages=None, **kwargs):
        if isinstance(messages, dict) and messages.get("template") == "ner_query":
            self.count["ner"] += 1
            ents = self.d[messages["query"]]["entities"]
            return json.dumps({"named_entities": ents}), {}, False
        q = _QUESTION.search(messages[-1]["content"]).group(1)
        self.count["filter"] += 1
        facts = self.d[q]["facts"]
        return (
            (
                "[[ ## fact_after_filter ## ]]\n"
                + json.dumps({"fact": facts})
                + "\n\n[[ ## completed ## ]]"
            ),
            {},
            False,
        )

    def batch_infer_async(self, prompts, **kwargs):
        out = []
        for p in prompts:
            self.count["score_calls"] += 1
            q, seed = p["query"], p["seed_entity"]
            self.asked.setdefault(q, [])
            if seed not in self.asked[q]:
                self.asked[q].append(seed)
            scores = self.d[q]["scores"].get(seed, {})
            lines = []
            for i, name in _NEIGHBOUR.findall(p["neighbor_entities"]):
                self.count["neighbours"] += 1
                if name in scores:
                    lines.append(f"{i} ({name}): {scores[name]}")
                else:
                    self.count["undecided"] += 1
                    self.undecided.append([q, seed, name])
            out.append(("\n".join(lines), {}, False))
        return out


def main() -> int:
    build_package()
    importlib.invalidate_caches()  # WORK/pkg was listed before catrag/ was written into it
    t_import = time.perf_counter()
    import hipporag  # noqa: F401
    from catrag.utils.config_utils import BaseConfig

    C = __import__("catrag.CatRAG", fromlist=["CatRAG"])
    import_s = time.perf_counter() - t_import
    decisions = json.loads((WORK / "decisions.json").read_text(encoding="utf-8"))
    replay = DecisionReplay(decisions)
    offline.replace_models(C, offline.precomputed_vectors(WORK / "vectors.npz"), replay)
    C.PromptTemplateManager = Templates

    docs = json.loads((WORK / "docs.json").read_text(encoding="utf-8"))
    queries = json.loads((WORK / "queries.json").read_text(encoding="utf-8"))
    save_dir = offline.openie_save_dir(WORK, offline.hash_seed_dir(WORK, "official_catrag"))
    (save_dir / "node_summaries_final_musique.json").write_text("{}")
    cfg = offline.openie_config(
        BaseConfig,
        save_dir,
        embedding_model_name="all-MiniLM-L6-v2-precomputed",
        retrieval_top_k=TOP,
        dataset="musique",
        cache_dir=str(save_dir),
    )
    cr, index_s = offline.index_for_retrieval(lambda: C.CatRAG(global_config=cfg), docs, queries)
    g = cr.graph
    _, contents, kinds = offline.save_edges(g, WORK / "official_catrag_edges.npz")

    def one(q):
        """The body of CatRAG.retrieve's loop for one question (its two threads run in turn)."""
        scores, idx, facts, _ = cr.get_top_fact_rerank(q)
        ner = cr.ner_query(q)
        if len(facts) == 0:
            return cr.dense_passage_retrieval(q), facts, ner
        return (
            cr.graph_search_with_fact_entities(
                query=q,
                link_top_k=cr.global_config.linking_top_k,
                query_fact_scores=scores,
                top_k_facts=facts,
                top_k_fact_indices=idx,
                ner_node_indices=ner,
                passage_node_weight=cr.global_config.passage_node_weight,
            ),
            facts,
            ner,
        )

    resets, run_ppr = offline.recording_resets(cr)
    ent_index = [i for i, k in enumerate(kinds) if k == "entity"]
    rows = []
    for q in queries:
        resets.clear()
        ranked, facts, ner = one(q)
        row = offline.question_row(ranked, facts, resets, contents, ent_index, TOP)
        rows.append({**row, "anchors": [contents[i] for i in ner]})
    for q, row in zip(queries, rows):
        row["asked_seeds"] = list(replay.asked.get(q, []))
        row["undecided"] = sum(1 for u in replay.undecided if u[0] == q)
    counts = dict(replay.count)
    cr.run_ppr = run_ppr
    ms = offline.median_ms(one, queries, REPEATS)
    out = {
        "hash_seed": os.environ.get("PYTHONHASHSEED"),
        "questions": rows,
        "replay": counts,
        "undecided": replay.undecided,
        "ms": ms,
        "index_seconds": index_s,
        "import_seconds": import_s,
        "graph": {
            "vertices": g.vcount(),
            "edges": g.ecount(),
            "entities": len(ent_index),
            "facts": len(cr.fact_node_keys),
        },
        "versions": package_versions(VERSIONS),
    }
    (WORK / f"official_catrag_{os.environ.get('PYTHONHASHSEED', 'random')}.json").write_text(
        json.dumps(out), encoding="utf-8"
    )
    print(json.dumps({"graph": out["graph"], "replay": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
