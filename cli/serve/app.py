"""The HTTP routes of ``massgen serve``: health, models, chat completions.

Every route goes through ``_endpoint``: it settles the request id, checks the Host and
Origin (``same_origin.py``: no DNS-rebinding page or other site's page gets an answer), the bearer
key, and turns ``ApiError`` and any unexpected exception into OpenAI-shaped JSON, so
no input can produce a bare 500 page or take the server down. Runs are started and
counted by ``RunRegistry``; the team itself never sees HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive

from massgen import RunResult, __version__
from massgen.cli.serve import body_guard, sse
from massgen.cli.serve.auth import check_bearer, request_id
from massgen.cli.serve.catalog import Catalog
from massgen.cli.serve.completions import Progress, completion, now
from massgen.cli.serve.errors import ApiError, answered, error_response, internal_error
from massgen.cli.serve.models import Limits, parse_request, to_conversation
from massgen.cli.serve.runs import RunRegistry, ServedRun
from massgen.cli.serve.same_origin import check_host, check_origin, require_json

log = logging.getLogger("massgen.serve")
Handler = Callable[[Request, str], Awaitable[Response]]


@dataclass
class ServerState:
    """Everything the routes share; built once by ``serve.main``."""

    catalog: Catalog
    registry: RunRegistry
    limits: Limits = field(default_factory=Limits)
    api_key: str | None = None
    bind_host: str = "127.0.0.1"  # the --host it listens on: the names a request's Host may give
    keepalive_s: float = 15.0
    shutdown_grace_s: float = 30.0
    drain_timeout_s: float = 15.0
    extra_routes: list[Route] = field(default_factory=list)  # the Web UI's, with --ui


async def _until_disconnect(receive: Receive) -> None:
    with contextlib.suppress(Exception):  # a broken receive channel means the client is gone too
        while (await receive())["type"] != "http.disconnect":
            pass


async def _wait_or_disconnect(request: Request, run: ServedRun) -> RunResult | None:
    """The run's result, or None (and the run cancelled) if the client goes away first."""
    watcher = asyncio.ensure_future(_until_disconnect(request.receive))
    try:
        either: set[asyncio.Future[Any]] = {run.result, watcher}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not run.result.done():  # the client left, or this handler was cancelled at shutdown
            run.cancel("the client disconnected")
    return run.result.result() if run.result.done() else None


async def _http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 (unknown route, wrong method) in OpenAI's shape."""
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    error = ApiError(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}",
                     code=codes.get(exc.status_code), headers=dict(exc.headers or {}))
    return error_response(error, request_id(request))


async def _unhandled(request: Request, exc: Exception) -> Response:
    log.error("unhandled %s on %s %s", type(exc).__name__, request.method, request.url.path)
    return internal_error(request_id(request))


def build_app(state: ServerState) -> Starlette:
    def endpoint(handler: Handler, *, auth: bool = True) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            rid = request_id(request)
            request.state.request_id = rid

            async def call() -> Response:
                check_host(request, state.bind_host)  # before the key: a rebinding page learns nothing
                check_origin(request, required=False)
                if auth:
                    check_bearer(request, state.api_key)
                return await handler(request, rid)

            return await answered(request, rid, call)

        return wrapped

    async def health(request: Request, rid: str) -> Response:
        registry = state.registry
        body = {"status": "shutting_down" if registry.shutting_down else "ok", "version": __version__,
                "runs_in_progress": registry.in_progress, "max_concurrent_runs": registry.max_runs}
        return JSONResponse(body, status_code=503 if registry.shutting_down else 200)

    def model_object(model_id: str) -> dict[str, Any]:
        return {"id": model_id, "object": "model", "created": now(), "owned_by": "massgen"}

    async def models(request: Request, rid: str) -> Response:
        return JSONResponse({"object": "list", "data": [model_object(m) for m in state.catalog.model_ids()]})

    async def model(request: Request, rid: str) -> Response:
        model_id = request.path_params["model"]
        if model_id not in state.catalog.model_ids():
            raise ApiError(404, f"the model {model_id!r} is not listed here", code="model_not_found",
                           param="model")
        return JSONResponse(model_object(model_id))

    async def chat_completions(request: Request, rid: str) -> Response:
        require_json(request)  # a cross-site page may post text/plain without asking; JSON it may not
        body = await body_guard.read_body(request, state.limits.max_body_bytes, state.limits.body_timeout_s,
                                          limit_name="the server's --max-body-bytes")
        chat = parse_request(body, state.limits)
        # Off the loop: a config file is parsed and validated here (bounded, but it may take a
        # moment), and /health, other requests and a SIGTERM must not wait for it.
        model, config = await asyncio.to_thread(state.catalog.resolve, chat.model)
        conversation = to_conversation(chat)
        describe = Progress(content=not conversation.client_tools) if chat.stream else None
        run = state.registry.admit(config, conversation, model=model, request_id=rid, describe=describe)
        if chat.stream:
            settings = sse.StreamSettings(
                include_usage=bool(chat.stream_options and chat.stream_options.include_usage),
                keepalive_s=state.keepalive_s,
                shutdown_grace_s=state.shutdown_grace_s + state.drain_timeout_s,
            )
            return sse.response(run, settings, {"x-request-id": rid})
        result = await _wait_or_disconnect(request, run)
        if result is None:
            return Response(status_code=499)  # nobody is listening any more
        if result.final_answer is None:
            raise run.no_answer(result, shutting_down=state.registry.shutting_down)
        return JSONResponse(completion(result, model, rid))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await state.registry.drain(state.drain_timeout_s)

    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        HTTPException: _http_exception,
        Exception: _unhandled,
    }
    routes = [
        Route("/health", endpoint(health, auth=False), methods=["GET"]),
        Route("/v1/models", endpoint(models), methods=["GET"]),
        Route("/v1/models/{model:path}", endpoint(model), methods=["GET"]),
        Route("/v1/chat/completions", endpoint(chat_completions), methods=["POST"]),
        *state.extra_routes,
    ]
    return Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
