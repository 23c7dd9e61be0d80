"""What a retriever checks about what the run gives it: the graph matches the corpus, and an
LLM switch (`auto`, true, false) fits the configured `llm=`."""

from __future__ import annotations

from hopbench.core.errors import HopbenchError


def check_graph_matches(kg, services) -> None:
    """The graph's passages must be the run's corpus, in order (scores are read by position)."""
    ids = services.passage_ids
    if list(kg.passage_ids) != ids:
        raise HopbenchError(
            f"knowledge graph passages ({kg.n_passages}) do not match the corpus of "
            f"dataset '{services.dataset.name}' ({len(ids)}); rebuild the graph"
        )


def resolve_llm_switch(setting, llm_name: str | None, key: str, retriever: str) -> bool:
    """`auto` (on when an llm= is configured), true (an LLM is required) or false."""
    has_llm = bool(llm_name) and llm_name != "none"
    if setting in ("auto", None):
        return has_llm
    if isinstance(setting, bool):
        if setting and not has_llm:
            raise HopbenchError(
                f"retriever.{key}=true ({retriever}) needs an LLM: add llm=local "
                f"(offline model), llm=openai or llm=server, or set retriever.{key}=false"
            )
        return setting
    raise HopbenchError(f"retriever.{key} must be auto, true or false, got {setting!r}")
