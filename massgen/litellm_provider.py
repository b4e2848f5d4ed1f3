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

``optional_params`` may also carry ``output_file``, ``verbose`` and ``log_dir`` (as for ``massgen.run``); any
other option, or an OpenAI parameter the team cannot follow (``temperature``), is LiteLLM's
``UnsupportedParamsError`` unless the caller sets ``drop_params``; ``tools`` are refused always (``massgen
serve`` takes them). The call's ``timeout`` bounds the run. Bad input is a ``BadRequestError``. The
last user message is the task; earlier user/assistant pairs become the conversation history.

Streaming yields the final answer once the team has decided: what agents stream
before the vote may be thrown away, so it is not presented as the model's reply.
``litellm`` is an optional extra (``pip install massgen-actors[litellm]``); this
module is loaded only when a caller registers the provider.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

try:
    import litellm
    from litellm.exceptions import BadRequestError, Timeout, UnsupportedParamsError
    from litellm.llms.custom_llm import CustomLLM, CustomLLMError
    from litellm.types.utils import GenericStreamingChunk, ModelResponse
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("massgen.register_with_litellm needs litellm: pip install 'massgen-actors[litellm]'") from exc

from massgen.api import check_arguments, content_text, run, run_sync, upstream_config
from massgen.launch import check_deadline, resolve_config
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


def conversation(messages: list[Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The task (last user message, system text in front) and earlier (user, assistant) pairs. A content is
    text or text parts; any other part (an image, a file) is a ``ConfigError`` naming it (``content_text``)."""
    items = [m if isinstance(m, dict) else dict(m) for m in messages]
    texts = [content_text(m.get("content"), f"messages[{i}].content") for i, m in enumerate(items)]
    system = "\n\n".join(t for m, t in zip(items, texts, strict=True) if m.get("role") in ("system", "developer"))
    turns = [(m.get("role"), t) for m, t in zip(items, texts, strict=True) if m.get("role") in ("user", "assistant")]
    last_user = max((i for i, (role, _) in enumerate(turns) if role == "user"), default=None)
    if last_user is None:
        raise ConfigError("messages: massgen needs at least one user message")
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
_RUN_PARAMS = ("output_file", "verbose", "enable_logging", "enable_filesystem", "system_message", "base_url",
               "log_dir")
_DELIVERY = ("stream", "stream_options")  # how the reply is delivered: litellm's own, followed by this provider
# What a model is asked for that a team's answer cannot be: refused even with drop_params (a caller that offers
# tools reads a tool call as the answer; dropped, it would get prose and never know why).
_TOOLS = ("tools", "tool_choice", "functions", "function_call", "parallel_tool_calls")
_TOOLS_REFUSED = ("this provider does not hand the caller's tools to the team; `massgen serve` does (its "
                  "OpenAI-compatible /v1/chat/completions takes tools and answers with tool_calls)")


def _unsupported(message: str) -> Exception:
    return UnsupportedParamsError(message=message, llm_provider=PROVIDER)


def _options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The massgen options of a call: what LiteLLM hands over as ``optional_params`` (the call's OpenAI
    parameters, with the caller's own ``optional_params={...}`` nested inside), every one of them used or refused.

    ``base_url=`` or ``api_base=`` given to ``litellm.completion`` arrive as ``api_base``: the server every
    agent that calls a model uses, as ``optional_params={"base_url": ...}`` (upstream 0.1.97 drops it, and
    its agents then call the provider's own endpoint). A parameter the team cannot follow (``temperature``,
    ``max_tokens``, an unknown option) is an ``UnsupportedParamsError`` naming it, unless the caller set
    LiteLLM's ``drop_params``; tools are refused always (``_TOOLS``)."""
    given = dict(kwargs.get("optional_params") or {})
    nested = given.pop("optional_params", None)
    if nested is not None and not isinstance(nested, dict):
        raise ConfigError(f"optional_params: must be a dict of massgen options, not {type(nested).__name__}")
    options = {**given, **(nested or {})}
    tools = [name for name in _TOOLS if options.get(name) is not None]
    if tools:
        raise _unsupported(f"{', '.join(tools)}: {_TOOLS_REFUSED}")
    known = {*_BUILD_PARAMS, *_RUN_PARAMS}
    unknown = sorted(set(options) - known - set(_DELIVERY) - set(_TOOLS))
    drop = bool((kwargs.get("litellm_params") or {}).get("drop_params") or litellm.drop_params)
    if unknown and not drop:
        raise _unsupported(f"{', '.join(unknown)}: not an option a massgen team can follow (it takes "
                           f"{', '.join(sorted(known))}); leave it out, or set drop_params=True to have it dropped")
    options = {k: v for k, v in options.items() if k in known}
    api_base = kwargs.get("api_base")
    if api_base:
        given_base = options.get("base_url")
        if given_base and given_base != api_base:
            raise ConfigError(f"two servers given: base_url/api_base {api_base!r} and optional_params base_url "
                              f"{given_base!r}; give one")
        options["base_url"] = api_base
    return options


def run_arguments(model: str, messages: list[Any], options: dict[str, Any]) -> dict[str, Any]:
    """The ``massgen.run`` arguments for a model name, the messages and the call's options."""
    question, history = conversation(messages)
    name = model.removeprefix(f"{PROVIDER}/")
    arguments: dict[str, Any] = {"query": question, "history": history,
                                 **{k: options[k] for k in _RUN_PARAMS if k in options}}
    built = {k: options[k] for k in _BUILD_PARAMS if k in options}
    if name == "build":
        if not built.get("models") and not built.get("model"):
            raise ConfigError("massgen/build needs optional_params with 'models' (a list) or 'model' "
                              "(and 'num_agents')")
        if "model" in built and not built.get("models"):
            built.setdefault("num_agents", 1)
        return {**arguments, **built}
    if built:  # the team is the one the model name names: these would have been ignored without a word
        raise ConfigError(f"{', '.join(built)}: only massgen/build takes them; {PROVIDER}/{name} is a team "
                          "already (give massgen/build with them instead)")
    if name.startswith("model:"):
        return {**arguments, "model": name.removeprefix("model:")}
    return {**arguments, "config": config_ref(model)}


_CONFIG_ARGUMENTS = ("config", "model", "models", "num_agents", "use_docker", "system_message", "base_url",
                     "context_paths", "backend", "backends")


def _within(arguments: dict[str, Any], timeout: object) -> dict[str, Any]:
    """The arguments with the run's deadline cut to LiteLLM's ``timeout`` where that is sooner: the call is
    bounded as any LiteLLM call is (600 s unless the caller says), and a config's own shorter deadline stays."""
    if timeout is None:
        return arguments
    seconds = check_deadline(timeout)  # type: ignore[arg-type]  # checked there: a ConfigError naming it
    check_arguments(**{k: arguments[k] for k in _CONFIG_ARGUMENTS if k in arguments})
    team = resolve_config(upstream_config(**{k: arguments[k] for k in _CONFIG_ARGUMENTS if k in arguments}))
    if seconds >= team.timeout_settings.orchestrator_timeout_seconds:
        return arguments
    return {**arguments, "timeout": seconds}


def _call(model: str, messages: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The run's arguments for one LiteLLM call; bad input is a ``ConfigError`` (turned into a bad request)."""
    return _within(run_arguments(model, messages, _options(kwargs)), kwargs.get("timeout"))


@contextlib.contextmanager
def _as_litellm_errors(model: str, timeout: object) -> Iterator[None]:
    """A massgen error as LiteLLM's own exception of that meaning: bad input is a ``BadRequestError`` (400:
    routers and retries do not send it again), a run cut off by the call's timeout a ``Timeout`` (408)."""
    try:
        yield
    except ConfigError as exc:
        raise BadRequestError(message=str(exc), model=model, llm_provider=PROVIDER) from None
    except _TimedOut as exc:
        raise Timeout(message=f"the massgen team gave no answer within the call's timeout of {timeout:g} s: {exc}",
                      model=model, llm_provider=PROVIDER) from None


class _TimedOut(Exception):
    """The run reached the deadline the call's timeout set, with no answer."""


def _answered(result: RunResult, arguments: dict[str, Any]) -> RunResult:
    # No answer once the deadline the call's timeout set has passed (the run then ends "failed": nothing to give).
    if result.final_answer is None and "timeout" in arguments and result.elapsed_s >= arguments["timeout"]:
        raise _TimedOut(result.reason)
    return result


class MassGenLLM(CustomLLM):
    """LiteLLM handler: each call is one full team run (its logs go where ``massgen`` puts them)."""

    def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> ModelResponse:
        with _as_litellm_errors(model, kwargs.get("timeout")):
            arguments = _call(model, messages, kwargs)
            result = _answered(run_sync(**arguments), arguments)
        return _fill(kwargs.get("model_response") or ModelResponse(), model, result)

    async def acompletion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> ModelResponse:
        with _as_litellm_errors(model, kwargs.get("timeout")):
            arguments = _call(model, messages, kwargs)
            result = _answered(await run(**arguments), arguments)
        return _fill(kwargs.get("model_response") or ModelResponse(), model, result)

    def streaming(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Iterator[GenericStreamingChunk]:
        with _as_litellm_errors(model, kwargs.get("timeout")):
            arguments = _call(model, messages, kwargs)
            result = _answered(run_sync(**arguments), arguments)
        yield from _pieces(result)

    async def astreaming(  # type: ignore[override]  # litellm iterates what this returns
        self, model: str, messages: list[Any], *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:
        with _as_litellm_errors(model, kwargs.get("timeout")):
            arguments = _call(model, messages, kwargs)
            result = _answered(await run(**arguments), arguments)
        for piece in _pieces(result):
            yield piece


def register_with_litellm(provider: str = PROVIDER) -> MassGenLLM:
    """Add (or replace) the ``massgen`` provider in LiteLLM's custom provider map."""
    handler = MassGenLLM()
    others = [entry for entry in litellm.custom_provider_map if entry.get("provider") != provider]
    litellm.custom_provider_map = [*others, {"provider": provider, "custom_handler": handler}]
    return handler
