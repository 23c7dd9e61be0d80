"""A run's corpus, registered for the token-budget metrics (R@Nt) when the report reads the run.

Why: R@Nt needs the token count of every ranked passage, and a row holds only passage ids. The
run's config.yaml names its dataset files; when they are at hand (the paths are as the run was
launched, relative to where it ran) the corpus is registered with `token_budget`, so the report
can score R@Nt for runs written before it was declared, and recheck it for the others. When they
are not, R@Nt is left out for that run (absent, not zero) and `run_check` does not recheck the
values the run wrote (it names this exemption).
"""

from __future__ import annotations

import json
import logging

from hopbench.core.errors import HopbenchError
from hopbench.data import load_dataset
from hopbench.evaluate import token_budget

log = logging.getLogger(__name__)

# dataset keys that only cut or order the questions: one corpus whatever their value
_QUESTION_ONLY = ("limit", "sample_seed", "name")
_tried: dict[str, bool] = {}  # dataset settings -> was its corpus registered


def register_run_corpus(config: dict) -> bool:
    """Register the corpus of the run whose config.yaml is `config`; False when it cannot be read."""
    ds = dict((config or {}).get("dataset") or {})
    if not ds.get("format") or not ds.get("questions_path"):
        return False
    key = json.dumps(
        {k: v for k, v in ds.items() if k not in _QUESTION_ONLY}, sort_keys=True, default=str
    )
    if key not in _tried:
        try:
            dataset = load_dataset(**ds)
        except (HopbenchError, OSError, TypeError, ValueError) as exc:
            log.info("R@Nt: the corpus of %s is not at hand (%s)", ds.get("name"), exc)
            _tried[key] = False
        else:
            token_budget.register(dataset.corpus)
            _tried[key] = True
    return _tried[key]
