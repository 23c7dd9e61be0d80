"""Progress a person can read during LLM work: the bar shows calls, tokens and cache hits as they happen."""

from __future__ import annotations

import threading
from typing import Callable

from tqdm import tqdm

from hopbench.core.records import (
    LLM_CACHE_HITS,
    LLM_CALLS,
    LLM_COMPLETION_TOKENS,
    LLM_PROMPT_TOKENS,
)


class LLMProgress:
    """Keeps a progress bar's postfix on the LLM's calls, tokens and cache hits, refreshed from a
    timer thread, so a bar waiting on a slow question still shows the work going on."""

    def __init__(
        self, bar: tqdm, llm, every_s: float = 2.0, extra: Callable[[], str] | None = None
    ):
        self.bar, self.llm, self.every_s, self.extra = bar, llm, every_s, extra
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "LLMProgress":
        if hasattr(self.llm, "stats_dict") and not self.bar.disable:
            self._start = self.llm.stats_dict()
            self._thread.start()
        return self

    def refresh(self) -> None:
        now = self.llm.stats_dict()
        delta = {
            k: now[k] - self._start.get(k, 0)
            for k in (LLM_CALLS, LLM_CACHE_HITS, LLM_PROMPT_TOKENS, LLM_COMPLETION_TOKENS)
        }
        text = (
            f"LLM calls {delta[LLM_CALLS]}, cache hits {delta[LLM_CACHE_HITS]}, "
            f"tokens {delta[LLM_PROMPT_TOKENS] + delta[LLM_COMPLETION_TOKENS]}"
        )
        if self.extra is not None:
            text += f", {self.extra()}"
        self.bar.set_postfix_str(text, refresh=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.refresh()

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
            self.refresh()
