"""configs/paper.yaml to rows: each run of the grid as the overrides `python -m hopbench.run` takes."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from omegaconf import OmegaConf

from hopbench.core.paths import CONFIG_DIR

GRID_PATH = Path(CONFIG_DIR) / "paper.yaml"


@dataclass(frozen=True)
class Row:
    """One run of the grid, as the overrides `python -m hopbench.run` takes."""

    kind: str  # cpu | llm | sweep
    dataset: str
    retriever: str
    overrides: tuple[str, ...]
    uses_llm: bool
    n_extra: int = 0  # the last overrides are the command line's, passed to every run

    def override(self, key: str) -> str | None:
        for o in reversed(self.overrides):
            if o.startswith(key + "="):
                return o.split("=", 1)[1]
        return None

    @property
    def reader(self) -> str:
        return self.override("reader") or "none"

    @property
    def shown(self) -> str:
        """The overrides beyond dataset= and retriever=, as the plan prints them."""
        own = self.overrides[: len(self.overrides) - self.n_extra]
        return " ".join(o for o in own if not o.startswith(("dataset=", "retriever=")))


def load_grid(settings: Iterable[str] = (), path: str | Path | None = None):
    """configs/paper.yaml with `paper.KEY=VALUE` settings applied."""
    grid = OmegaConf.load(path or GRID_PATH)
    settings = list(settings)
    if settings:
        grid = OmegaConf.merge(grid, OmegaConf.from_dotlist(settings))
    return grid


def expand(
    grid,
    extra: Iterable[str] = (),
    sizes: Callable[[str], int] | None = None,
    llm_extra: Iterable[str] = (),
) -> list[Row]:
    """Every row of the grid (before hashing: rows that come to the same run are merged later).
    `sizes(dataset)` gives the number of questions of a bundled set (an LLM row takes all of a
    set no larger than paper.llm_questions, without a limit, as the reference runs did)."""
    extra, llm_extra = tuple(extra), tuple(extra) + tuple(llm_extra)  # llm.X=...: the LLM rows only
    n_llm = int(grid.paper.llm_questions)
    rows: list[Row] = []
    for ds, spec in grid.datasets.items():
        rows += _cpu_rows(grid, ds, spec, extra)
        limit = () if sizes is not None and sizes(ds) <= n_llm else (f"dataset.limit={n_llm}",)
        rows += _llm_rows(grid, ds, spec, limit, llm_extra)
    for sw in grid.get("sweeps") or ():
        rows += _sweep_rows(sw, extra)
    return rows


def _graphs(spec) -> list[str]:
    return list(spec.get("graphs") or ["spacy"])


def _cpu_rows(grid, ds: str, spec, extra: tuple[str, ...]) -> list[Row]:
    """The grid's `cpu` entries on one dataset, once per graph: no LLM, no reader."""
    cpu_ov = tuple(spec.get("cpu_overrides") or ())
    return [
        Row(
            "cpu",
            ds,
            item.retriever,
            (
                f"dataset={ds}",
                f"retriever={item.retriever}",
                f"graph={g}",
                "reader=none",
                "llm=none",
                *cpu_ov,
                *(item.get("overrides") or ()),
                *extra,
            ),
            False,
            len(extra),
        )
        for item in grid.get("cpu") or ()
        for g in _graphs(spec)
    ]


def _llm_rows(grid, ds: str, spec, limit: tuple[str, ...], llm_extra: tuple[str, ...]) -> list[Row]:
    """The grid's `llm` entries on one dataset, once per graph, with the grid's LLM and the
    dataset's reader (or the entry's own)."""
    rows = []
    for item in grid.get("llm") or ():
        reader = spec.reader if item.get("reader", "dataset") == "dataset" else item.reader
        rows += [
            Row(
                "llm",
                ds,
                item.retriever,
                (
                    f"dataset={ds}",
                    f"retriever={item.retriever}",
                    f"graph={g}",
                    f"reader={reader}",
                    f"llm={grid.paper.llm}",
                    *limit,
                    *(item.get("overrides") or ()),
                    *llm_extra,
                ),
                True,
                len(llm_extra),
            )
            for g in _graphs(spec)
        ]
    return rows


def _sweep_rows(sw, extra: tuple[str, ...]) -> list[Row]:
    """One sweep: a row per combination of its parameters' values (spaCy graph, no LLM)."""
    keys = list(sw.params)
    return [
        Row(
            "sweep",
            sw.dataset,
            sw.retriever,
            (
                f"dataset={sw.dataset}",
                f"retriever={sw.retriever}",
                "graph=spacy",
                "reader=none",
                "llm=none",
                *(sw.get("overrides") or ()),
                *(f"{k}={v}" for k, v in zip(keys, values)),
                *extra,
            ),
            False,
            len(extra),
        )
        for values in itertools.product(*(list(sw.params[k]) for k in keys))
    ]
