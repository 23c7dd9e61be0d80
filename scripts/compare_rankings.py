"""Compare two runs folders question by question: same top-10 ranking and same answer.

For a refactor that must leave every number as it was: rerun the committed runs with the new
code into another folder, then

    python3 scripts/compare_rankings.py OLD_RUNS_DIR NEW_RUNS_DIR [DATASET ...]

Runs are paired by dataset, retriever, graph extractor, retriever settings, limit and reader
(not by config hash, so a renamed or re-keyed config still pairs); a pre-#15 ``hipporag`` run is
paired with ``hipporag_hb`` (report/legacy.py). Exit code 1 when any question differs.
"""

import json
import sys
from pathlib import Path

import yaml
from hopbench.report.legacy import current_name


def rows(run: Path) -> dict:
    out = {}
    for line in open(run / "predictions.jsonl"):
        r = json.loads(line)
        out[r["id"]] = (r["ranked_passage_ids"], r.get("prediction"))
    return out


def key(run: Path) -> tuple:
    c = yaml.safe_load(open(run / "config.yaml"))
    params = {k: v for k, v in (c.get("retriever") or {}).items() if k != "name"}
    name, params = current_name(run.parent.name, params)
    return (
        run.parent.parent.name,
        name,
        (c.get("graph") or {}).get("extractor"),
        json.dumps(params, sort_keys=True, default=str),
        (c.get("dataset") or {}).get("limit"),
        (c.get("reader") or {}).get("name"),
    )


def complete(root: Path, datasets: list[str]) -> list[Path]:
    return sorted(
        m.parent
        for ds in datasets
        for m in root.glob(f"{ds}/*/*/metrics.json")
        if not m.parent.name.startswith(".")
    )


def main(old_root: str, new_root: str, *datasets: str) -> int:
    datasets = list(datasets) or ["*"]
    old = {key(d): d for d in complete(Path(old_root), datasets)}
    runs = same = total = 0
    for d in complete(Path(new_root), datasets):
        k = key(d)
        if k not in old:
            print(f"{d}: no run of the same settings in {old_root}")
            continue
        a, b = rows(old[k]), rows(d)
        n = sum(a[q] == b.get(q) for q in a)
        runs, same, total = runs + 1, same + n, total + len(a)
        print(
            f"{k[0]:16s} {k[1]:28s} {k[2] or '-':7s} {old[k].name} -> {d.name}: {n}/{len(a)} identical"
        )
    print(f"{runs} runs, {same}/{total} questions with the same ranking and answer")
    return 0 if same == total else 1


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
