"""A team as a LiteLLM model: ``litellm.completion(model="massgen/<example>", messages=[...])``.

``massgen.register_with_litellm()`` adds a ``massgen`` custom provider. The model name
picks the team, as upstream MassGen 0.1.97 names them:

- ``massgen/<example>``: ``@examples/<example>`` (``massgen/basic/scripted_three_agents``; upstream's
  names such as ``massgen/basic_multi`` resolve to ours, see configs/upstream_examples.py);
- ``massgen/model:<model>``: one agent of that model (``massgen/model:gpt-4o-mini``);
- ``massgen/build``: a team built from ``optional_params`` as ``massgen.build_config`` builds it
  (``models``, or ``model`` and ``num_agents``; ``backend``/``backends``, ``use_docker``,
  ``context_paths``);
- ``massgen/path:<file>``: a config file.

``optional_params`` may also carry ``output_file`` and ``verbose`` (as for ``massgen.run``). The
last user message is the task; earlier user/assistant pairs become the conversation history.

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
from massgen.outcome.errors import ConfigError
from massgen.outcome.result import RunResult

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


_BUILD_PARAMS = ("models", "model", "num_agents", "backend", "backends", "use_docker", "context_paths")
_RUN_PARAMS = ("output_file", "verbose", "enable_logging", "enable_filesystem", "system_message", "base_url")


def _options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The massgen options of a call: LiteLLM hands them over as ``optional_params``, sometimes nested.

    ``base_url=`` or ``api_base=`` given to ``litellm.completion`` arrive as ``api_base``: the server every
    agent that calls a model uses, as ``optional_params={"base_url": ...}`` (upstream 0.1.97 drops it, and
    its agents then call the provider's own endpoint)."""
    options = kwargs.get("optional_params") or {}
    if isinstance(options.get("optional_params"), dict):
        options = options["optional_params"]
    options = dict(options)
    api_base = kwargs.get("api_base")
    if api_base:
        given = options.get("base_url")
        if given and given != api_base:
            raise _llm_error(status_code=400, message=f"two servers given: base_url/api_base {api_base!r} and "
                             f"optional_params base_url {given!r}; give one")
        options["base_url"] = api_base
    return options


def run_arguments(model: str, messages: list[Any], options: dict[str, Any]) -> dict[str, Any]:
    """The ``massgen.run`` arguments for a model name, the messages and the call's options."""
    question, history = conversation(messages)
    name = model.removeprefix(f"{PROVIDER}/")
    arguments: dict[str, Any] = {"query": question, "history": history,
                                 **{k: options[k] for k in _RUN_PARAMS if k in options}}
    if name == "build":
        built = {k: options[k] for k in _BUILD_PARAMS if k in options}
        if not built.get("models") and not built.get("model"):
            raise _llm_error(status_code=400, message="massgen/build needs optional_params with 'models' "
                             "(a list) or 'model' (and 'num_agents')")
        if "model" in built and not built.get("models"):
            built.setdefault("num_agents", 1)
        return {**arguments, **built}
    if name.startswith("model:"):
        return {**arguments, "model": name.removeprefix("model:")}
    return {**arguments, "config": config_ref(model)}


class MassGenLLM(CustomLLM):
    """LiteLLM handler: each call is one full team run (its logs go where ``massgen`` puts them)."""

    def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> ModelResponse:
        arguments = run_arguments(model, messages, _options(kwargs))
        try:
            result = run_sync(**arguments)
        except ConfigError as exc:
            raise _llm_error(status_code=400, message=str(exc)) from None
        return _fill(kwargs.get("model_response") or ModelResponse(), model, result)

    async def acompletion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> ModelResponse:
        arguments = run_arguments(model, messages, _options(kwargs))
        try:
            result = await run(**arguments)
        except ConfigError as exc:
            raise _llm_error(status_code=400, message=str(exc)) from None
        return _fill(kwargs.get("model_response") or ModelResponse(), model, result)

    def streaming(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Iterator[GenericStreamingChunk]:
        arguments = run_arguments(model, messages, _options(kwargs))
        try:
            result = run_sync(**arguments)
        except ConfigError as exc:
            raise _llm_error(status_code=400, message=str(exc)) from None
        yield from _pieces(result)

    async def astreaming(  # type: ignore[override]  # litellm iterates what this returns
        self, model: str, messages: list[Any], *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:
        arguments = run_arguments(model, messages, _options(kwargs))
        try:
            result = await run(**arguments)
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
