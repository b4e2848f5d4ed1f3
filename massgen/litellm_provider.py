"""A team as a LiteLLM model: ``litellm.completion(model="massgen/<example>", messages=[...])``.

``massgen.register_with_litellm()`` adds a ``massgen`` custom provider. The model name
picks the team: ``massgen/basic/scripted_three_agents`` is ``@examples/basic/...``,
``massgen/path:/abs/team.yaml`` a config file. The last user message is the task;
earlier user/assistant pairs become the conversation history the team sees.

Streaming yields the final answer once the team has decided: what agents stream
before the vote may be thrown away, so it is not presented as the model's reply.
``litellm`` is an optional extra (``pip install massgen-actors[litellm]``); this
module is loaded only when a caller registers the provider.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

try:
    import litellm
    from litellm.llms.custom_llm import CustomLLM, CustomLLMError
    from litellm.types.utils import GenericStreamingChunk, ModelResponse
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("massgen.register_with_litellm needs litellm: pip install 'massgen-actors[litellm]'") from exc

from massgen.api import run, run_sync
from massgen.errors import ConfigError
from massgen.result import RunResult

PROVIDER = "massgen"
_llm_error: Callable[..., Exception] = CustomLLMError  # litellm leaves its __init__ untyped
_PIECE_CHARS = 200


def config_ref(model: str) -> str:
    """``basic/x`` -> ``@examples/basic/x``; ``path:/a/b.yaml`` -> ``/a/b.yaml``."""
    name = model.removeprefix(f"{PROVIDER}/")
    if name.startswith("path:"):
        return name.removeprefix("path:")
    return name if name.startswith("@examples/") else f"@examples/{name}"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def conversation(messages: list[Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The task (last user message, system text in front) and earlier (user, assistant) pairs."""
    items = [m if isinstance(m, dict) else dict(m) for m in messages]
    system = "\n\n".join(_text(m.get("content")) for m in items if m.get("role") in ("system", "developer"))
    turns = [(m.get("role"), _text(m.get("content"))) for m in items if m.get("role") in ("user", "assistant")]
    last_user = max((i for i, (role, _) in enumerate(turns) if role == "user"), default=None)
    if last_user is None:
        raise _llm_error(status_code=400, message="massgen needs at least one user message")
    history: list[tuple[str, str]] = []
    pending: str | None = None
    for role, text in turns[:last_user]:
        if role == "user":
            pending = text if pending is None else f"{pending}\n\n{text}"
        elif pending is not None:
            history.append((pending, text))
            pending = None
    question = turns[last_user][1] if pending is None else f"{pending}\n\n{turns[last_user][1]}"
    return (f"{system}\n\n{question}" if system else question), tuple(history)


def _answer(result: RunResult) -> str:
    if result.final_answer is None:
        raise _llm_error(status_code=500, message=f"the massgen team gave no answer: {result.reason}")
    return result.final_answer


def _usage(result: RunResult) -> dict[str, int]:
    prompt = int(result.usage.get("input_tokens", 0))
    completion = int(result.usage.get("output_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _fill(response: ModelResponse, model: str, result: RunResult) -> ModelResponse:
    response.choices[0].message.content = _answer(result)
    response.choices[0].finish_reason = "stop"
    response.model = f"{PROVIDER}/{model}"
    response.created = int(time.time())
    usage = _usage(result)
    response.usage = litellm.Usage(  # type: ignore[attr-defined]
        prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
        total_tokens=usage["total_tokens"],
    )
    # Where the team's record is, for callers who want more than the answer.
    response._hidden_params["massgen"] = {k: v for k, v in result.as_dict().items() if k != "answers"}
    return response


def _pieces(result: RunResult) -> Iterator[GenericStreamingChunk]:
    text = _answer(result)
    for start in range(0, len(text), _PIECE_CHARS):
        yield GenericStreamingChunk(text=text[start:start + _PIECE_CHARS], is_finished=False, finish_reason="",
                                    usage=None, index=0, tool_use=None)
    yield GenericStreamingChunk(text="", is_finished=True, finish_reason="stop", index=0, tool_use=None,
                                usage={**_usage(result)})  # type: ignore[typeddict-item]


def _run_args(model: str, messages: list[Any]) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    question, history = conversation(messages)
    return question, config_ref(model), history


class MassGenLLM(CustomLLM):
    """LiteLLM handler: each call is one full team run (its logs go where ``massgen`` puts them)."""

    def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> ModelResponse:
        question, ref, history = _run_args(model, messages)
        try:
            result = run_sync(question, ref, history=history)
        except ConfigError as exc:
            raise _llm_error(status_code=400, message=str(exc)) from None
        return _fill(kwargs.get("model_response") or ModelResponse(), model, result)

    async def acompletion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> ModelResponse:
        question, ref, history = _run_args(model, messages)
        try:
            result = await run(question, ref, history=history)
        except ConfigError as exc:
            raise _llm_error(status_code=400, message=str(exc)) from None
        return _fill(kwargs.get("model_response") or ModelResponse(), model, result)

    def streaming(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Iterator[GenericStreamingChunk]:
        question, ref, history = _run_args(model, messages)
        try:
            result = run_sync(question, ref, history=history)
        except ConfigError as exc:
            raise _llm_error(status_code=400, message=str(exc)) from None
        yield from _pieces(result)

    async def astreaming(  # type: ignore[override]  # litellm iterates what this returns
        self, model: str, messages: list[Any], *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:
        question, ref, history = _run_args(model, messages)
        try:
            result = await run(question, ref, history=history)
        except ConfigError as exc:
            raise _llm_error(status_code=400, message=str(exc)) from None
        for piece in _pieces(result):
            yield piece


def register_with_litellm(provider: str = PROVIDER) -> MassGenLLM:
    """Add (or replace) the ``massgen`` provider in LiteLLM's custom provider map."""
    handler = MassGenLLM()
    others = [entry for entry in litellm.custom_provider_map if entry.get("provider") != provider]
    litellm.custom_provider_map = [*others, {"provider": provider, "custom_handler": handler}]
    return handler
