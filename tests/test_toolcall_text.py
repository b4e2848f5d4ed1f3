"""Tool calls for servers without native tools: the action schema and the tolerant text parser."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
from wire.harness import NEW_ANSWER, VOTE

from massgen.actors.agent.check_tools import CALCULATOR_SPEC, PYTHON_SPEC
from massgen.backends.toolcall_text import (
    action_schema,
    flatten_messages,
    parse_action_object,
    parse_tool_calls,
    response_format,
)
from massgen.messages.stream import ChatMessage, ToolCall

NAMES = ["new_answer", "vote"]


def ids() -> itertools.count[int]:
    return itertools.count(1)


def parse(text: str) -> list[tuple[str, dict[str, object], bool]]:
    counter = ids()
    return [
        (c.name, c.arguments, c.parse_error is not None)
        for c in parse_tool_calls(text, lambda: f"c{next(counter)}", NAMES)
    ]


def test_schema_has_one_branch_per_action_with_required_fields() -> None:
    schema = action_schema([NEW_ANSWER, VOTE], vote_targets=("agent1", "agent2"))
    answer, vote = schema["oneOf"]
    assert list(answer["properties"]) == ["action", "content"] and answer["required"] == ["action", "content"]
    assert vote["properties"]["agent_id"] == {"type": "string", "enum": ["agent1", "agent2"]}
    assert vote["required"] == ["action", "agent_id", "reason"]
    assert vote["additionalProperties"] is False
    # Nothing to vote for: only the answer branch is left, so the grammar cannot produce a vote.
    assert action_schema([NEW_ANSWER, VOTE])["required"] == ["action", "content"]
    assert response_format(schema, "llamacpp") == {"type": "json_object", "schema": schema}
    assert response_format(schema, "openai")["json_schema"]["schema"] == schema


def test_qwen_tags_fences_and_bare_json() -> None:
    assert parse('<tool_call>\n{"name": "new_answer", "arguments": {"content": "4"}}\n</tool_call>') == [
        ("new_answer", {"content": "4"}, False)
    ]
    assert parse('Done.\n<tool_call>{"name": "vote", "arguments": "{\\"agent_id\\": \\"a\\"}"}') == [
        ("vote", {"agent_id": "a"}, False)
    ]
    assert parse('```json\n{"name": "new_answer", "parameters": {"content": "x"}}\n```') == [
        ("new_answer", {"content": "x"}, False)
    ]
    assert parse('{"function": {"name": "vote", "arguments": {"agent_id": "b", "reason": "r"}}}') == [
        ("vote", {"agent_id": "b", "reason": "r"}, False)
    ]


def test_broken_tagged_json_is_reported_and_noise_is_ignored() -> None:
    assert parse('<tool_call>{"name": "new_answer", "arguments": {"content": "4"</tool_call>') == [
        ("new_answer", {}, True)
    ]
    assert parse("```python\nprint(1)\n```") == []
    assert parse("<tools></tools>") == []
    assert parse('<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>') == []


def test_action_object_with_prose_around_it() -> None:
    counter = ids()
    calls = parse_action_object(
        'Sure: {"action": "vote", "agent_id": "agent2", "reason": "right"} ok',
        lambda: f"c{next(counter)}",
        NAMES,
    )
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c1", "vote", {"agent_id": "agent2", "reason": "right"})
    ]


def test_flatten_turns_tool_history_into_text() -> None:
    call = ToolCall(id="1", name="new_answer", arguments={"content": "4"})
    flat = flatten_messages(
        [
            ChatMessage(role="assistant", content="Here.", tool_calls=(call,)),
            ChatMessage(role="tool", content="ok", tool_call_id="1", name="new_answer"),
        ]
    )
    assert (
        flat[0].content
        == 'Here.\n<tool_call>{"name": "new_answer", "arguments": {"content": "4"}}</tool_call>'
    )
    assert (flat[1].role, flat[1].content) == ("user", "Result of tool new_answer:\nok")


_CONSTRAINED_CALL = """
import json, sys
import llama_cpp.llama_cpp as bindings
from llama_cpp import Llama
# as the model server does (backends/llama_server.py): AMX weight repacking segfaults on the first token
default_params = bindings.llama_model_default_params
def model_params():
    params = default_params()
    params.use_extra_bufts = False
    return params
bindings.llama_model_default_params = model_params
schema = json.loads(sys.stdin.read())["schema"]
llm = Llama(model_path=sys.argv[1], n_ctx=512, n_threads=1, verbose=False)
out = llm.create_chat_completion(messages=[{"role": "user", "content": "Print 2 + 2 with Python."}],
                                 response_format={"type": "json_object", "schema": schema}, max_tokens=8)
print("decoded", out["choices"][0]["message"]["content"])
"""


@pytest.mark.slow
def test_a_long_string_bound_is_left_to_the_argument_check_so_llama_cpp_can_decode_under_the_grammar() -> None:
    # run_python's code may be 20,000 characters: llama.cpp writes that bound as 20,000 nested rules, and the
    # model server died mid-call at every check turn that offered run_python (seen in the bench: a run of
    # 15 failed calls). The grammar gets no bound it cannot hold; the tool's argument check keeps the bound.
    import importlib.util

    from support import unavailable

    if importlib.util.find_spec("llama_cpp") is None:
        unavailable("llama-cpp-python is not installed (pip install -e '.[local]')")
    from massgen.backends.local_model import resolve_model

    schema = action_schema([PYTHON_SPEC])
    assert schema["properties"]["code"]["maxLength"] == 20_000  # the tool still declares it: its check enforces it
    sent = response_format(schema, "llamacpp")
    assert "maxLength" not in sent["schema"]["properties"]["code"]
    short = response_format(action_schema([CALCULATOR_SPEC]), "openai")["json_schema"]["schema"]
    assert short["properties"]["expression"]["maxLength"] == 1_000  # a bound a grammar holds is kept
    decoded = subprocess.run([sys.executable, "-c", _CONSTRAINED_CALL, str(resolve_model("tiny"))],
                             input=json.dumps(sent), text=True, capture_output=True, timeout=240)
    assert decoded.returncode == 0 and '"action"' in decoded.stdout, decoded.stderr[-2000:]
