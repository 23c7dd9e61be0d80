"""LLM layer: one OpenAI-compatible client (local llama.cpp, OpenAI, any server), SQLite response
cache, schema-checked JSON output, token/latency accounting, and the offline local model."""

from hopbench.llm.build import build_client
from hopbench.llm.client import LLMClient, LLMResult
from hopbench.llm.errors import (
    LLMAuthError,
    LLMContextOverflowError,
    LLMError,
    LLMFormatError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
    LLMUnavailableError,
)

__all__ = [
    "build_client",
    "LLMClient",
    "LLMResult",
    "LLMError",
    "LLMFormatError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "LLMRateLimitError",
    "LLMContextOverflowError",
    "LLMAuthError",
    "LLMServerError",
    "LLMRequestError",
]
