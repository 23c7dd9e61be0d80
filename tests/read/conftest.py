from __future__ import annotations

import sys
from pathlib import Path

# The scripted OpenAI-compatible server lives with the LLM tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
