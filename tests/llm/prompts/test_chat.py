"""The few-shot message shape every prompt module builds with `chat`."""

from __future__ import annotations

import pytest

from hopbench.llm.prompts import chat


def test_turns_alternate_after_the_system_message_and_end_with_the_task():
    got = chat("rules", "example in", "example out", "task")
    assert [m["role"] for m in got] == ["system", "user", "assistant", "user"]
    assert [m["content"] for m in got] == ["rules", "example in", "example out", "task"]
    assert chat("rules", "task") == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "task"},
    ]


@pytest.mark.parametrize("turns", [(), ("example in", "example out")])
def test_a_chat_without_a_final_user_turn_is_refused(turns):
    with pytest.raises(ValueError, match="ends with the task's user turn"):
        chat("rules", *turns)
