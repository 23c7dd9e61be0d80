"""Run-config hash of every retriever config x graph x llm (and a few overrides), as JSON.

Run it with two checkouts' code and compare: a refactor of the configs must leave every hash
(the run folders and results/reference rows are keyed by it) unchanged.

    cd /tmp && PYTHONPATH=<checkout>/src python3 <checkout>/scripts/config_hashes.py out.json
"""

import json
import os
import sys
import types
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hopbench.harness.run_store import config_hash

try:
    from hopbench.core.paths import CONFIG_DIR
    from hopbench.harness.compose import build_retriever
    from hopbench.harness.runner import semantic_config
except ImportError:  # a checkout before the run/assembly split (hopbench.run held them)
    from hopbench.run import CONFIG_DIR, build_retriever, semantic_config

# as the Makefile's DATA_DIR: HOPBENCH_DATA_DIR, else shared/datasets beside the checkout
DATA_DIR = os.environ.get("HOPBENCH_DATA_DIR") or str(
    Path(CONFIG_DIR).parents[1] / "shared" / "datasets"
)
EXTRA = {
    "spreading_activation": ["retriever.decay=0.3", "retriever.depth=2"],
    "hipporag": ["retriever.damping=0.3", "retriever.seeding.filter=false"],
    "flow_diffusion": ["retriever.alpha=2"],
    "catrag": ["retriever.ner=spacy", "retriever.n_seed=3"],
}


def main(out_path: str) -> None:
    out = {}
    names = sorted(p.stem for p in (Path(CONFIG_DIR) / "retriever").glob("*.yaml"))
    dataset = types.SimpleNamespace(fingerprint="fp")  # the same stand-in on both sides
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        for name in names:
            for graph in ("spacy", "llm", "openie", "spacy_fast"):
                for llm in ("none", "local"):
                    for ov in [[]] + [[o] for o in EXTRA.get(name, [])]:
                        key = f"{name}|{graph}|{llm}|{' '.join(ov)}"
                        try:
                            cfg = compose(
                                "config",
                                overrides=[
                                    f"paths.data_dir={DATA_DIR}",
                                    "dataset=musique_sub",
                                    f"retriever={name}",
                                    f"graph={graph}",
                                    f"llm={llm}",
                                    *ov,
                                ],
                            )
                            rc = OmegaConf.to_container(cfg.retriever, resolve=True)
                            try:
                                h = config_hash(semantic_config(cfg, dataset, build_retriever(cfg)))
                            except (
                                Exception
                            ) as e:  # e.g. catrag without an LLM: the message must match too
                                h = f"build error: {type(e).__name__}: {e}"
                            out[key] = {
                                "hash": h,
                                "retriever_cfg_hash": config_hash(rc),
                                "retriever_cfg": rc,
                            }
                        except Exception as e:
                            out[key] = {"hash": f"compose error {type(e).__name__}: {e}"}
    Path(out_path).write_text(json.dumps(out, indent=1, sort_keys=True))
    print(len(out), "configs,", sum("error" in v["hash"] for v in out.values()), "of them errors")


if __name__ == "__main__":
    main(sys.argv[1])
