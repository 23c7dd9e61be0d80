"""SQuAD-style answer metrics and multi-hop retrieval metrics (Recall@k, FCR@k, JSR@k).

Definitions follow HippoRAG's eval utils and CatRAG's chain metrics (docs/architecture.md,
Metrics; docs/methods/hipporag.md, Evaluation; docs/methods/catrag.md).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable, Sequence

RECALL_KS = (1, 2, 5, 10)
FCR_KS = (2, 5, 10)
JSR_K = 5

# The per-question metric names (a row's `metrics`, metrics.json, the report's columns), defined
# here once, in the order the report shows them.
RETRIEVAL_KEYS = [f"recall@{k}" for k in RECALL_KS] + [f"fcr@{k}" for k in FCR_KS]
ANSWER_KEYS = ["em", "f1", f"jsr@{JSR_K}", f"jsr_contain@{JSR_K}"]
CLAIM_KEYS = ["accuracy"]
METRIC_KEYS = RETRIEVAL_KEYS + ANSWER_KEYS + CLAIM_KEYS


def retrieval_scored(metrics: dict) -> bool:
    """A question's `metrics` scored its retrieval (its gold passages are complete)."""
    return RETRIEVAL_KEYS[0] in metrics


def answer_scored(metrics: dict) -> bool:
    """A question's `metrics` scored an answer (a reader ran): EM for a question, accuracy for a claim."""
    return "em" in metrics or "accuracy" in metrics

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def normalize_answer(s: str) -> str:
    """Lower-case, strip ASCII punctuation, drop a/an/the, collapse white space (SQuAD v1.1)."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(prediction: str | None, golds: Iterable[str]) -> float:
    if prediction is None:
        return 0.0
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in golds))


def _token_f1(prediction: str, gold: str) -> float:
    p, g = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str | None, golds: Iterable[str]) -> float:
    if prediction is None:
        return 0.0
    return max((_token_f1(prediction, g) for g in golds), default=0.0)


def answer_contains(prediction: str | None, golds: Iterable[str]) -> float:
    """CatRAG's JSR answer test: the normalised gold occurs word-bounded in the normalised prediction."""
    if prediction is None:
        return 0.0
    p = normalize_answer(prediction)
    for g in golds:
        ng = normalize_answer(g)
        if ng and re.search(rf"(?<!\w){re.escape(ng)}(?!\w)", p):
            return 1.0
    return 0.0


def recall_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    gold_set = set(gold)
    return len(set(ranked[:k]) & gold_set) / len(gold_set)


def full_chain_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """FCR@k: 1 when every gold passage is in the top k."""
    return float(set(gold) <= set(ranked[:k]))


def retrieval_metrics(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    out = {f"recall@{k}": recall_at_k(ranked, gold, k) for k in RECALL_KS}
    out.update({f"fcr@{k}": full_chain_at_k(ranked, gold, k) for k in FCR_KS})
    return out


def answer_metrics(prediction: str | None, golds: Sequence[str]) -> dict[str, float]:
    return {"em": exact_match(prediction, golds), "f1": f1_score(prediction, golds),
            "contain": answer_contains(prediction, golds)}


def claim_accuracy(predicted_label: str | None, gold_label: str) -> float:
    return float(predicted_label is not None and predicted_label.strip().upper() == gold_label.upper())


def joint_success(fcr: float, answer_ok: float) -> float:
    """JSR: the full chain was retrieved AND the answer is right."""
    return float(fcr == 1.0 and answer_ok == 1.0)
