"""Questions in blocks, for runs without an LLM: one `retriever.retrieve_batch` call a block.

Why: a CPU-only retriever's kernels (PPR, spreading activation, the vector searches) cost about
the same for a block of questions as for one, because the pass over the graph or the
embeddings is what costs; a block shares it (issue #59). A retriever opts in by overriding
`Retriever.retrieve_batch` and setting `exact_batches`; the override must give every question
the `Retrieval` that `retrieve` gives it (rankings and scores equal to the last bit:
tests/retrieve/test_batched_rows.py).

Latency stays honest per row: a block's retrieval seconds are shared out equally, each row's
`latency_ms` is the block's time / its number of questions, and its trace records the block's
size (`trace["question_batch"]`), so metrics.json can say how many rows got a shared time
(`question_batch_counts`). Rows are appended one by one after their block, exactly as the
one-question loop appends them: a killed run keeps the rows written, and the resumed run's
first block starts at the first question without a row. The setting `question_batch` is an
execution setting, outside the run hash like `concurrency`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from tqdm import tqdm

from hopbench.core.records import Row
from hopbench.evaluate.score import score_question
from hopbench.retrieve.base import Retriever

QUESTION_BATCH = "question_batch"  # the trace key: the size of the row's block


def batches(cfg, llm, reader, retriever: Retriever) -> int:
    """Questions per block: `question_batch` for a run without an LLM or a reader whose retriever
    has a proven batched path (`Retriever.exact_batches`); 1 (the one-question loop) otherwise."""
    n = int(cfg.get(QUESTION_BATCH, 1))
    if llm is not None or reader is not None or n <= 1:
        return 1
    cls = type(retriever)
    overrides = cls.retrieve_batch is not Retriever.retrieve_batch
    # declared by the class itself: a subclass (CatRAG of HippoRAG) that changes what
    # `retrieve` does is not covered by its parent's proof
    return n if overrides and vars(cls).get("exact_batches", False) else 1


def answer_block(questions: Sequence, *, retriever: Retriever, top_k: int) -> list[Row]:
    """The rows of one block: retrieved together (timed as one), scored one by one, each with
    its share of the block's time."""
    start = time.perf_counter()
    results = retriever.retrieve_batch(list(questions), top_k)
    share_ms = 1000 * (time.perf_counter() - start) / max(len(questions), 1)
    rows = []
    for question, result in zip(questions, results, strict=True):
        result.trace[QUESTION_BATCH] = len(questions)
        rows.append(
            Row.of(
                question,
                result,
                answer=None,
                latency_ms=share_ms,
                metrics=score_question(question, result.passage_ids, None),
            )
        )
    return rows


def run_blocks(
    todo: list,
    answer: Callable[[Sequence], list[Row]],
    on_row: Callable[[Row], None],
    *,
    block: int,
    desc: str = "",
    show: bool = True,
) -> float:
    """`answer(block) -> rows` for consecutive blocks of `todo`, `on_row(row)` for each row in
    question order as soon as its block is done; return the loop's wall seconds."""
    start = time.perf_counter()
    with tqdm(total=len(todo), desc=desc, disable=not show, unit="q") as bar:
        for s in range(0, len(todo), block):
            for row in answer(todo[s : s + block]):
                on_row(row)
                bar.update()
    return time.perf_counter() - start


def question_batch_counts(rows: list[dict]) -> dict:
    """{"question_batch_counts": {"64": 960, "40": 40}}: how many rows got their latency as a
    share of a block of that size; nothing when every row was answered alone."""
    counts: dict[str, int] = {}
    for r in rows:
        size = (r.get("trace") or {}).get(QUESTION_BATCH)
        if size is not None:
            counts[str(size)] = counts.get(str(size), 0) + 1
    return {"question_batch_counts": dict(sorted(counts.items()))} if counts else {}
