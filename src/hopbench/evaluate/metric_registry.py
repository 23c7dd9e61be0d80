"""Every metric, declared once: what scoring, the paired tests, the leaderboard, the breakdown,
the figures and a run's summary line all read (CONTRIBUTING.md, "Adding a metric").

A declaration (`Metric`) gives a metric's name, its per-question function (of an `Outcome`:
the question's ranking, gold passages, answer, gold answers or label), its kind (`binary`: 0/1
per question, compared by exact McNemar; `continuous`: compared by paired bootstrap), what a
question needs for it to apply (`needs`), its label, and where it is shown. The declarations
at the end of this module are the metrics; their order is the order of the report's columns.
Nothing else lists metric names, so a metric added here reaches every table and test by itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from hopbench.evaluate import token_budget
from hopbench.evaluate.metrics import (
    answer_contains,
    claim_accuracy,
    contain_accuracy,
    exact_match,
    f1_score,
    full_chain_at_k,
    joint_success,
    mrr_at_k,
    ndcg_at_k,
    recall_at_k,
    recall_at_tokens,
)
from hopbench.evaluate.token_budget import NOTES_TOKENS

BINARY, CONTINUOUS = "binary", "continuous"
KINDS = {BINARY: "mcnemar", CONTINUOUS: "paired_bootstrap"}  # kind -> paired test (report.stats)

# What a question needs for a metric to apply (a metric applies when all its needs hold).
RETRIEVAL = "retrieval"  # its gold passages are all in the corpus (Question.retrieval_scorable)
ANSWER = "answer"  # a reader answered it (a question, not a claim)
LABEL = "label"  # a reader labelled it (a claim with a gold label)
READER = "reader"  # ANSWER or LABEL
TOKENS = "tokens"  # every ranked passage has a token count (evaluate.token_budget)
NEEDS = (RETRIEVAL, ANSWER, LABEL, READER, TOKENS)

# Where a metric is shown beyond the csv/parquet tables, which hold every metric.
LEADERBOARD = (
    "leaderboard"  # a headline column of leaderboard.md; its p-values join the Holm family
)
BREAKDOWN = "breakdown"  # a table of breakdown.md (per hop count / question type)
FIGURES = "figures"  # a panel of the quality-vs-latency and sensitivity figures
SUMMARY = "summary"  # the line `hopbench.run` prints when a run ends
# a column of paper_tables.md (every LEADERBOARD metric is one too); a PAPER metric that is not a
# headline one is outside the Holm family, so its Δ carries the unadjusted p
PAPER = "paper_tables"
VIEWS = (LEADERBOARD, BREAKDOWN, FIGURES, SUMMARY, PAPER)


@dataclass(frozen=True)
class Outcome:
    """What a metric sees of one question: from a run's question (`of`) or from a row of
    predictions.jsonl (`from_row`, for a metric declared after the run was written)."""

    ranked: Sequence[str]
    gold_passages: Sequence[str]
    gold_complete: bool
    answer: str | None
    gold_answers: Sequence[str]
    kind: str = "qa"
    label: str | None = None
    passage_tokens: Mapping[str, int] | None = None  # of the ranked passages (TOKENS), or None
    notes_tokens: int = 0  # the retriever's notes in the reader's context (reader trace)

    @classmethod
    def of(
        cls, question, ranked: Sequence[str], answer: str | None, notes_tokens: int = 0
    ) -> "Outcome":
        return cls(
            list(ranked),
            question.gold_passage_ids,
            question.gold_complete,
            answer,
            question.answers,
            question.kind,
            question.label,
            token_budget.known(ranked),
            notes_tokens,
        )

    @classmethod
    def from_row(cls, row: Mapping) -> "Outcome":
        return cls(
            list(row.get("ranked_passage_ids") or []),
            row.get("gold_passage_ids") or [],
            row.get("gold_complete", True),
            row.get("answer"),
            row.get("gold_answers") or [],
            row.get("kind", "qa"),
            row.get("label"),
            token_budget.known(row.get("ranked_passage_ids") or []),
            int((row.get("reader_trace") or {}).get(NOTES_TOKENS) or 0),
        )

    def has(self, need: str) -> bool:
        if need == RETRIEVAL:  # as Question.retrieval_scorable
            return bool(self.gold_complete) and bool(self.gold_passages)
        if need == TOKENS:
            return self.passage_tokens is not None
        answered = self.answer is not None and self.kind != "claim"
        labelled = self.answer is not None and self.kind == "claim" and self.label is not None
        return {ANSWER: answered, LABEL: labelled, READER: answered or labelled}[need]


@dataclass(frozen=True)
class Metric:
    """One metric. `short` is its leaderboard.md header (default: `label`).

    `legacy` marks the metrics that predate this registry, so that the tables of existing runs
    keep their numbers to the last bit: their values are only ever the ones the run wrote, and
    their bootstrap shares one matrix product with the other legacy metrics of the same
    questions, as before. A new metric (legacy False) is computed by the report from a row that
    lacks it (a run written before it was declared), and bootstrapped on its own (same
    resamples), so declaring it moves no other metric's numbers, not even by a rounding."""

    name: str
    fn: Callable[[Outcome], float] = field(repr=False)
    kind: str
    needs: tuple[str, ...]
    label: str
    short: str | None = None
    show: tuple[str, ...] = ()
    legacy: bool = False
    family: str | None = None  # metrics of one function at several k ("recall"), with their k
    k: int | None = None
    beside: str | None = None  # PAPER: its paper-table column follows this metric's

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"metric {self.name}: kind must be one of {sorted(KINDS)}, got {self.kind!r}"
            )
        if not self.needs or set(self.needs) - set(NEEDS):
            raise ValueError(
                f"metric {self.name}: needs must be some of {NEEDS}, got {self.needs!r}"
            )
        if set(self.show) - set(VIEWS):
            raise ValueError(f"metric {self.name}: show must be some of {VIEWS}, got {self.show!r}")

    @property
    def header(self) -> str:
        return self.short or self.label

    @property
    def headline(self) -> bool:
        return LEADERBOARD in self.show

    @property
    def paired_test(self) -> str:
        return KINDS[self.kind]

    @property
    def retrieval_only(self) -> bool:
        """Scored for every question with complete gold passages, reader or not (R@Nt also
        needs its passages' token counts, which every run has)."""
        return RETRIEVAL in self.needs and not set(self.needs) & {ANSWER, LABEL, READER}

    @property
    def reader_only(self) -> bool:
        return RETRIEVAL not in self.needs

    @property
    def counted_by(self) -> str:
        """The leaderboard column that counts the questions it is averaged over."""
        return "n_retrieval_scored" if self.retrieval_only else "n_answer_scored"

    def applies(self, outcome: Outcome) -> bool:
        return all(outcome.has(n) for n in self.needs)

    def value(self, outcome: Outcome) -> float:
        """The question's score; a binary metric that is not 0 or 1 is a wrong declaration."""
        v = float(self.fn(outcome))
        if self.kind == BINARY and v not in (0.0, 1.0):
            raise ValueError(
                f"metric {self.name} is declared binary but scored {v}: declare it "
                "continuous (hopbench.evaluate.metric_registry)"
            )
        return v


def at_k(
    name: str,
    ks: Iterable[int],
    fn: Callable[[Outcome, int], float],
    *,
    label: str,
    short: str | None = None,
    show: Mapping[int, tuple[str, ...]] | None = None,
    **decl,
) -> list[Metric]:
    """One declaration for a metric at several cut-offs: `name`, `label` and `short` hold `{k}`;
    `show` says per k where it is shown."""
    family = name.split("@")[0]
    return [
        Metric(
            name.format(k=k),
            (lambda o, k=k: fn(o, k)),
            label=label.format(k=k),
            short=short.format(k=k) if short else None,
            show=(show or {}).get(k, ()),
            family=family,
            k=k,
            **decl,
        )
        for k in ks
    ]


# ---- the registry ----------------------------------------------------------------------------
_METRICS: dict[str, Metric] = {}


def register(*metrics: Metric | Iterable[Metric]) -> None:
    """Declare metrics (or lists from `at_k`); a name is declared once."""
    for m in metrics:
        for metric in [m] if isinstance(m, Metric) else list(m):
            if metric.name in _METRICS:
                raise ValueError(f"metric {metric.name} is declared twice")
            _METRICS[metric.name] = metric


def declared() -> list[Metric]:
    """Every metric, in the order the report shows them."""
    return list(_METRICS.values())


def names() -> list[str]:
    return list(_METRICS)


def get(name: str) -> Metric:
    try:
        return _METRICS[name]
    except KeyError:
        raise KeyError(
            f"no metric {name!r} is declared (hopbench.evaluate.metric_registry)"
        ) from None


def shown_in(view: str) -> list[str]:
    """The metrics shown in a view (LEADERBOARD: the headline metrics, ...), in order."""
    return [m.name for m in _METRICS.values() if view in m.show]


def paper_columns() -> list[str]:
    """The metrics of the paper tables: the headline ones, each PAPER one right after the metric
    it is declared `beside` (at the end when that one is not shown)."""
    cols = shown_in(LEADERBOARD)
    for m in _METRICS.values():
        if PAPER in m.show and m.name not in cols:
            at = cols.index(m.beside) + 1 if m.beside in cols else len(cols)
            while at < len(cols) and _METRICS[cols[at]].beside == m.beside:
                at += 1  # several beside one metric keep their declared order
            cols.insert(at, m.name)
    return cols


def family_ks(family: str) -> list[int]:
    """The k of every metric of a family (`recall` -> [1, 2, 5, 10])."""
    return [m.k for m in _METRICS.values() if m.family == family]


def score(outcome: Outcome) -> dict[str, float]:
    """Every metric that applies to the question; the others are absent (not zero)."""
    return {m.name: m.value(outcome) for m in _METRICS.values() if m.applies(outcome)}


def backfilled(row: Mapping) -> dict:
    """A row's metrics plus the non-legacy ones it lacks that apply to it (a run written before
    they were declared), from its ranking and answer."""
    metrics = dict(row.get("metrics") or {})
    missing = [m for m in _METRICS.values() if not m.legacy and m.name not in metrics]
    if missing:
        outcome = Outcome.from_row(row)
        metrics.update({m.name: m.value(outcome) for m in missing if m.applies(outcome)})
    return metrics


def retrieval_scored(metrics: Mapping) -> bool:
    """A question's `metrics` scored its retrieval (its gold passages are complete)."""
    return any(m.name in metrics for m in _METRICS.values() if m.retrieval_only)


def answer_scored(metrics: Mapping) -> bool:
    """A question's `metrics` scored an answer (a reader ran): EM for a question, accuracy for a claim."""
    return any(m.name in metrics for m in _METRICS.values() if m.reader_only)


# ---- the metrics -------------------------------------------------------------------------------
# Definitions: docs/internals/architecture.md, Metrics. JSR's k is FCR's (CatRAG's chain metrics).
JSR_K = 5


def _reader_right(o: Outcome, contain: bool = False) -> float:
    """A claim's label, or a question's answer (exact, or contained for CatRAG's JSR)."""
    if o.kind == "claim":
        return claim_accuracy(o.answer, o.label)
    return (answer_contains if contain else exact_match)(o.answer, o.gold_answers)


register(
    at_k(
        "recall@{k}",
        (1, 2, 5, 10),
        lambda o, k: recall_at_k(o.ranked, o.gold_passages, k),
        kind=CONTINUOUS,
        needs=(RETRIEVAL,),
        label="Recall@{k}",
        short="R@{k}",
        legacy=True,
        show={
            2: (LEADERBOARD, SUMMARY),
            5: (LEADERBOARD, BREAKDOWN, FIGURES, SUMMARY),
            10: (LEADERBOARD,),
        },
    ),
    at_k(
        "fcr@{k}",
        (2, 5, 10),
        lambda o, k: full_chain_at_k(o.ranked, o.gold_passages, k),
        kind=BINARY,
        needs=(RETRIEVAL,),
        label="FCR@{k}",
        legacy=True,
        show={5: (LEADERBOARD, BREAKDOWN, SUMMARY)},
    ),
    Metric(
        "mrr@10",
        lambda o: mrr_at_k(o.ranked, o.gold_passages, 10),
        kind=CONTINUOUS,
        needs=(RETRIEVAL,),
        label="MRR@10",
        show=(BREAKDOWN,),
    ),
    Metric(
        "ndcg@10",
        lambda o: ndcg_at_k(o.ranked, o.gold_passages, 10),
        kind=CONTINUOUS,
        needs=(RETRIEVAL,),
        label="nDCG@10",
        show=(BREAKDOWN,),
    ),
    [
        Metric(
            f"recall@{b}t",
            (
                lambda o, b=b: recall_at_tokens(
                    o.ranked, o.gold_passages, o.passage_tokens, b, o.notes_tokens
                )
            ),
            kind=CONTINUOUS,
            needs=(RETRIEVAL, TOKENS),
            label=f"Recall@{b} tokens",
            short=f"R@{b}t",
            family="recall_tokens",
            k=b,
            show=(PAPER,) if b == 1024 else (),
            beside="recall@5" if b == 1024 else None,
        )
        for b in token_budget.BUDGETS
    ],
    Metric(
        "em",
        lambda o: exact_match(o.answer, o.gold_answers),
        kind=BINARY,
        needs=(ANSWER,),
        label="EM",
        legacy=True,
        show=(LEADERBOARD, BREAKDOWN, SUMMARY),
    ),
    Metric(
        "f1",
        lambda o: f1_score(o.answer, o.gold_answers),
        kind=CONTINUOUS,
        needs=(ANSWER,),
        label="F1",
        legacy=True,
        show=(LEADERBOARD, BREAKDOWN, FIGURES, SUMMARY),
    ),
    Metric(
        "contain_acc",
        lambda o: contain_accuracy(o.answer, o.gold_answers),
        kind=BINARY,
        needs=(ANSWER,),  # a question's answer; a claim's label is Accuracy's (not applicable)
        label="Contain-Acc",
        short="CAcc",
        show=(PAPER,),
        beside="f1",
    ),
    Metric(
        f"jsr@{JSR_K}",
        lambda o: joint_success(
            full_chain_at_k(o.ranked, o.gold_passages, JSR_K), _reader_right(o)
        ),
        kind=BINARY,
        needs=(RETRIEVAL, READER),
        label=f"JSR@{JSR_K}",
        legacy=True,
        show=(LEADERBOARD,),
    ),
    Metric(
        f"jsr_contain@{JSR_K}",
        lambda o: joint_success(
            full_chain_at_k(o.ranked, o.gold_passages, JSR_K), _reader_right(o, True)
        ),
        kind=BINARY,
        needs=(RETRIEVAL, READER),
        label=f"JSR (contains)@{JSR_K}",
        short=f"JSRc@{JSR_K}",
        legacy=True,
        show=(LEADERBOARD,),
    ),
    Metric(
        "accuracy",
        lambda o: claim_accuracy(o.answer, o.label),
        kind=BINARY,
        needs=(LABEL,),
        label="Accuracy",
        short="Acc",
        legacy=True,
        show=(LEADERBOARD, BREAKDOWN, FIGURES),
    ),
)
