"""What encoding each question alone costs against batches (issue #28, item 16).

    python -m benchmarks.speed.question_encoding [--questions 100] [--backend torch]

The first --questions MuSiQue questions, no cache, the model loaded first: `encode(alone=True)`
(one forward pass per question, the run's way since item 16) against `encode()` (length-sorted
batches of 64), alternated --repeats times, medians. Results: benchmarks/speed/results/question_encoding.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from benchmarks.common.args import add_out_dir_arg
from benchmarks.common.paths import REPO
from hopbench.data import load_dataset
from hopbench.embed import Encoder

DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--backend", default="torch")
    ap.add_argument("--repeats", type=int, default=3)
    add_out_dir_arg(ap, __file__)
    args = ap.parse_args()
    ds = load_dataset(
        "musique",
        "musique",
        DATA / "musique/musique_train.json",
        DATA / "musique/musique_train_corpus.json",
    )
    texts = [q.text for q in ds.questions[: args.questions]]
    enc = Encoder(cache_dir=None, show_progress=False, backend=args.backend)
    enc.encode(texts[:2])  # load the model
    alone, batched = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        enc.encode(texts, alone=True)
        alone.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        enc.encode(texts)
        batched.append(time.perf_counter() - t0)
    a, b = statistics.median(alone), statistics.median(batched)
    text = (
        "# Encoding questions alone vs in batches (issue #28 item 16)\n\n"
        f"`python -m benchmarks.speed.question_encoding --questions {args.questions} --backend "
        f"{args.backend} --repeats {args.repeats}`; machine shared with other helpers' jobs, "
        f"load average {os.getloadavg()}.\n\n"
        "| questions | alone (s) | batches of 64 (s) | ratio | alone, ms per question |\n"
        "|---|---|---|---|---|\n"
        f"| {len(texts)} | {a:.2f} | {b:.2f} | {a / b:.2f} | {1000 * a / len(texts):.1f} |\n"
    )
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "question_encoding.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
