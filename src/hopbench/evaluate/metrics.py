"""The per-question metric functions: SQuAD-style answer metrics and multi-hop retrieval
metrics (Recall@k, FCR@k, JSR@k, MRR@k, nDCG@k, R@Nt at a token budget), Contain-Acc.

Pure functions of a ranking, gold ids, an answer and gold answers; which of them a run scores,
under which name, and how the report tests them is declared once in
`hopbench.evaluate.metric_registry`. Definitions follow HippoRAG's eval utils and CatRAG's chain
metrics (docs/internals/architecture.md, Metrics; docs/methods/hipporag.md, Evaluation;
docs/methods/catrag.md).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Iterable, Mapping, Sequence

from hopbench.evaluate.token_budget import budget_prefix

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


def contain_accuracy(prediction: str | None, golds: Iterable[str]) -> float:
    """Contain-Acc (LinearRAG's answer metric): 1 when a normalised gold answer (any alias) is a
    substring of the normalised prediction. A plain substring, unlike JSRc's word-bounded test:
    gold "1990" is contained in "19901". A gold that normalises to "" never counts."""
    if prediction is None:
        return 0.0
    p = normalize_answer(prediction)
    return float(any(ng and ng in p for ng in map(normalize_answer, golds)))


def recall_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    gold_set = set(gold)
    return len(set(ranked[:k]) & gold_set) / len(gold_set)


def recall_at_tokens(
    ranked: Sequence[str],
    gold: Sequence[str],
    tokens: Mapping[str, int],
    budget: int,
    spent: int = 0,
) -> float:
    """R@Nt: the share of gold passages in the ranking prefix that fits in `budget` tokens
    after `spent` (what else the method puts in the reader's context, e.g. QAFD's cluster
    notes); `token_budget.budget_prefix`: a unit counts when it fits whole, the first that does
    not ends the prefix. The gold mapping of Recall@k."""
    gold_set = set(gold)
    return len(set(budget_prefix(ranked, tokens, budget, spent)) & gold_set) / len(gold_set)


def full_chain_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """FCR@k: 1 when every gold passage is in the top k."""
    return float(set(gold) <= set(ranked[:k]))


def _gold_ranks(ranked: Sequence[str], gold: Sequence[str], k: int) -> list[int]:
    """The 1-based ranks in the top k that hold a gold passage (a passage counts once, at its
    first rank)."""
    gold_set, seen, ranks = set(gold), set(), []
    for rank, pid in enumerate(ranked[:k], start=1):
        if pid in gold_set and pid not in seen:
            ranks.append(rank)
        seen.add(pid)
    return ranks


def mrr_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Reciprocal rank of the first gold passage in the top k, 0 when none is there: averaged
    over questions, MRR@k (Voorhees, TREC-8 Question Answering Track Report, 1999; @10 as in
    MS MARCO passage ranking, Nguyen et al. 2016)."""
    ranks = _gold_ranks(ranked, gold, k)
    return 1.0 / ranks[0] if ranks else 0.0


def ndcg_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """nDCG@k with binary relevance (a gold passage has gain 1, any other 0): DCG@k =
    sum over ranks i <= k holding a gold passage of 1 / log2(i + 1), divided by the DCG@k of
    the ideal ranking, every gold passage first: sum_{i=1}^{min(|gold|, k)} 1 / log2(i + 1)
    (Järvelin & Kekäläinen, ACM TOIS 20(4), 2002; the log2(i + 1) discount of trec_eval and
    BEIR). 0 for no gold passages."""
    n_ideal = min(len(set(gold)), k)
    if n_ideal == 0:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank in _gold_ranks(ranked, gold, k))
    return dcg / sum(1.0 / math.log2(rank + 1) for rank in range(1, n_ideal + 1))


def claim_accuracy(predicted_label: str | None, gold_label: str) -> float:
    return float(
        predicted_label is not None and predicted_label.strip().upper() == gold_label.upper()
    )


def joint_success(fcr: float, answer_ok: float) -> float:
    """JSR: the full chain was retrieved AND the answer is right."""
    return float(fcr == 1.0 and answer_ok == 1.0)
