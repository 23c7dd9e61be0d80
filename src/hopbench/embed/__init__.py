"""Sentence embeddings with an on-disk content-addressed cache."""

from hopbench.embed.encoder import Encoder

__all__ = ["Encoder"]
