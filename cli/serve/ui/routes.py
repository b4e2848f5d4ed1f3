"""The ``/ui`` routes: the page, its static files, the run list, the event stream and the controls.

Every route checks ``UiAccess`` first: ``/ui/api`` wants the UI token in the ``Authorization``
header; the page and its static files (no data in them) want only this server's Host. Controls
are POSTs that become typed messages to the run's supervisor through ``Team`` (cancel, answer
now, kill, restart, note); their effects come back as trace records on every tab's stream, so
no route answers with state of its own. A run started here is not tied to the tab that started it.
"""

from __future__ import annotations

import logging
import mimetypes
import re
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from massgen import TraceRecord, messages
from massgen.cli.serve import body_guard
from massgen.cli.serve.auth import request_id
from massgen.cli.serve.errors import ApiError, answered
from massgen.cli.serve.models import Conversation
from massgen.cli.serve.runs import ServedRun
from massgen.cli.serve.same_origin import require_json
from massgen.cli.serve.ui.access import UiAccess
from massgen.cli.serve.ui.runlog import RecordLog, RunIndex, run_id_of, summary
from massgen.cli.serve.ui.stream import StreamSettings, events

log = logging.getLogger("massgen.serve")
_MAX_BODY = 64 * 1024
_MAX_NOTE = 4000
_MAX_QUESTION = 20000
_MAX_DEPTH = 64  # nesting of a control's body; the controls take flat objects
_STATIC = resources.files("massgen.cli.serve.ui") / "static"
# The page loads only its own files and talks only to this server.
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_NO_STORE = {"cache-control": "no-store"}
# A trace seq: ASCII digits only (str.isdigit() also takes "²", which int() refuses), and short.
_SEQ = re.compile(r"[0-9]{1,18}")


class WebUI:
    """The UI's state on the server: access rules, the run index, and the live runs' handles."""

    def __init__(self, state: Any, access: UiAccess, settings: StreamSettings) -> None:
        from massgen import default_log_base

        self.state = state  # the app's ServerState: catalog and run registry
        self.access = access
        self.settings = settings
        self.index = RunIndex(root=(state.registry.log_base or default_log_base()).resolve())
        self.served: dict[str, ServedRun] = {}
        state.registry.observers.append(self._observe)

    # -- live runs ----------------------------------------------------------------------------

    def _observe(self, run: ServedRun) -> None:
        """A run was admitted (here or by /v1/chat/completions): keep its records for the tabs."""
        run_id = run_id_of(self.index.root, run.log_dir)
        if run_id is None:
            log.warning("run %s logs outside the UI's log root; the UI will not show it", run.log_dir)
            return
        record_log = RecordLog()
        self.index.live[run_id] = record_log
        self.served[run_id] = run
        loop = run.loop

        def watch(record: TraceRecord) -> None:  # the trace writer's thread
            try:  # the page reads records as written (JSON), so the log holds that form
                loop.call_soon_threadsafe(record_log.append, record.as_dict())
            except RuntimeError:
                pass

        def ended(_future: object) -> None:  # after every record was queued (see ServedRun)
            self.served.pop(run_id, None)
            self.index.retire(run_id)

        run.watchers.append(watch)
        run.result.add_done_callback(ended)

    def _live(self, run_id: str) -> ServedRun:
        run = self.served.get(run_id)
        if run is None:
            if self.index.directory(run_id) is None:
                raise ApiError(404, f"no run {run_id!r}", code="run_not_found")
            raise ApiError(409, "the run has finished", code="run_finished")
        return run

    # -- routes ---------------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        guard = self._guard
        return [
            Route("/ui", guard(self.page, page=True), methods=["GET"]),
            Route("/ui/", guard(self.page, page=True), methods=["GET"]),
            Route("/ui/static/{name:path}", guard(self.static, page=True), methods=["GET"]),
            Route("/ui/api/session", guard(self.sign_in, page=True), methods=["POST"]),
            Route("/ui/api/runs", guard(self.list_runs), methods=["GET"]),
            Route("/ui/api/runs", guard(self.start_run), methods=["POST"]),
            Route("/ui/api/runs/{id}", guard(self.run_info), methods=["GET"]),
            Route("/ui/api/runs/{id}/events", guard(self.run_events), methods=["GET"]),
            Route("/ui/api/runs/{id}/answers/{label}", guard(self.answer), methods=["GET"]),
            Route("/ui/api/runs/{id}/cancel", guard(self.cancel), methods=["POST"]),
            Route("/ui/api/runs/{id}/answer_now", guard(self.answer_now), methods=["POST"]),
            Route("/ui/api/runs/{id}/agents/{agent}/kill", guard(self.kill), methods=["POST"]),
            Route("/ui/api/runs/{id}/agents/{agent}/restart", guard(self.restart), methods=["POST"]),
            Route("/ui/api/runs/{id}/notes", guard(self.note), methods=["POST"]),
        ]

    def _guard(self, handler: Callable[[Request], Awaitable[Response]], *,
               page: bool = False) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            async def call() -> Response:
                if page:
                    self.access.check_page(request)
                else:
                    self.access.check(request)
                return await handler(request)

            return await answered(request, request_id(request), call)

        return wrapped

    async def sign_in(self, request: Request) -> Response:
        """The page trades the printed token (or the API key) for the UI token it keeps and sends."""
        data = await self._body(request)
        return JSONResponse({"token": self.access.trade(request, data.get("token"))}, headers=_NO_STORE)

    async def page(self, request: Request) -> Response:
        html = (_STATIC / "index.html").read_text(encoding="utf-8")
        return Response(html, media_type="text/html; charset=utf-8",
                        headers={"content-security-policy": _CSP, **_NO_STORE, "referrer-policy": "no-referrer"})

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        parts = name.split("/")
        if not name or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
            raise ApiError(404, "no such file", code="not_found")
        target = _STATIC.joinpath(*parts)
        try:
            found = target.is_file()
        except OSError:  # a name too long for the file system (ENAMETOOLONG) names no file either
            found = False
        if not found:
            raise ApiError(404, "no such file", code="not_found")
        media = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if name.endswith((".js", ".mjs")):
            media = "text/javascript"
        return Response(target.read_bytes(), media_type=media,
                        headers={"x-content-type-options": "nosniff", **_NO_STORE})

    async def list_runs(self, request: Request) -> Response:
        runs = [summary(run_id, path, run_id in self.served) for run_id, path in self.index.on_disk()]
        listed = {r["id"] for r in runs}
        runs = [summary(rid, run.log_dir, True) for rid, run in self.served.items() if rid not in listed] + runs
        for entry in runs:  # a live run's first record may not be on disk yet; its log in memory has it
            live_log = self.index.live.get(entry["id"])
            if entry["live"] and not entry["question"] and live_log is not None and live_log.records:
                entry["question"] = live_log.records[0]["payload"].get("question", "")
        return JSONResponse({"runs": runs, "configs": self.state.catalog.model_ids()}, headers=_NO_STORE)

    async def run_info(self, request: Request) -> Response:
        run_id = request.path_params["id"]
        path = self.index.directory(run_id)
        if path is None:
            raise ApiError(404, f"no run {run_id!r}", code="run_not_found")
        return JSONResponse(summary(run_id, path, run_id in self.served), headers=_NO_STORE)

    async def run_events(self, request: Request) -> Response:
        run_id = request.path_params["id"]
        record_log = self.index.log(run_id)
        if record_log is None:
            raise ApiError(404, f"no run {run_id!r}", code="run_not_found")
        return StreamingResponse(events(record_log, _resume_after(request), self.settings),
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-cache", "x-accel-buffering": "no"})

    async def answer(self, request: Request) -> Response:
        run_id, label = request.path_params["id"], request.path_params["label"]
        record_log = self.index.log(run_id)
        if record_log is None:
            raise ApiError(404, f"no run {run_id!r}", code="run_not_found")
        for record in record_log.records:
            if messages.message_class(record) is messages.AnswerAccepted and record["payload"].get("label") == label:
                return JSONResponse({**record["payload"], "seq": record["seq"]}, headers=_NO_STORE)
        raise ApiError(404, f"no answer {label!r} in run {run_id!r}", code="answer_not_found")

    # -- controls ---------------------------------------------------------------------------------

    async def _body(self, request: Request) -> dict[str, Any]:
        """A control's JSON object, read and parsed as ``/v1``'s body is (``body_guard``): refused
        with 413 once past 64 KiB, before the rest arrives, and with 408 when it stalls."""
        require_json(request)
        raw = await body_guard.read_body(request, _MAX_BODY, self.state.limits.body_timeout_s,
                                         limit_name="the Web UI's limit for a control")
        return body_guard.json_object(raw or b"{}", _MAX_DEPTH)

    @staticmethod
    def _text(data: dict[str, Any], name: str, limit: int) -> str:
        value = data.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ApiError(422, f"'{name}' must be a non-empty string", param=name, code="invalid_value")
        if len(value) > limit:
            raise ApiError(422, f"'{name}' is longer than {limit} characters", param=name, code="invalid_value")
        return value.strip()

    @staticmethod
    def _name(data: dict[str, Any], name: str) -> str | None:
        """An optional name field (a config, an agent): a string, or None when absent, null or empty.
        Anything else is a 422 here, not a lookup that fails on an unhashable value or a number."""
        value = data.get(name)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise ApiError(422, f"'{name}' must be a string or null, not {_json_kind(value)}",
                           param=name, code="invalid_value")
        return value

    async def start_run(self, request: Request) -> Response:
        data = await self._body(request)
        question = self._text(data, "question", _MAX_QUESTION)
        configs = self.state.catalog.model_ids()
        name = self._name(data, "config") or (configs[0] if configs else "")
        if name not in configs:
            raise ApiError(422, f"'config' must be one of the served configs: {', '.join(configs)}",
                           param="config", code="invalid_value")
        run_id, run = self.start(question, name, request_id(request))
        return JSONResponse({"id": run_id, "log_dir": str(run.log_dir)}, status_code=201)

    def start(self, question: str, config_name: str, rid: str) -> tuple[str | None, ServedRun]:
        """Start a run of a served config (on the loop); its id in the UI and its handle."""
        model, config = self.state.catalog.resolve(config_name)
        run = self.state.registry.admit(config, Conversation(task=question, history=(), client_tools=()),
                                        model=model, request_id=rid, describe=None)
        return run_id_of(self.index.root, run.log_dir), run

    async def cancel(self, request: Request) -> Response:
        run = self._live(request.path_params["id"])
        run.cancel("cancelled in the web UI")
        return JSONResponse({"accepted": True}, status_code=202)

    async def answer_now(self, request: Request) -> Response:
        run = self._live(request.path_params["id"])
        return JSONResponse({"accepted": run.team.answer_now()}, status_code=202)

    def _agent(self, request: Request, run: ServedRun) -> str:
        agent = request.path_params.get("agent")
        if agent not in {a.id for a in run.team.config.agents}:
            raise ApiError(404, f"no agent {agent!r} in this run", code="agent_not_found")
        return str(agent)

    async def kill(self, request: Request) -> Response:
        run = self._live(request.path_params["id"])
        return JSONResponse({"accepted": run.team.kill_agent(self._agent(request, run))}, status_code=202)

    async def restart(self, request: Request) -> Response:
        run = self._live(request.path_params["id"])
        return JSONResponse({"accepted": run.team.restart_agent(self._agent(request, run))}, status_code=202)

    async def note(self, request: Request) -> Response:
        run = self._live(request.path_params["id"])
        data = await self._body(request)
        text = self._text(data, "text", _MAX_NOTE)
        to = self._name(data, "agent")
        if to is not None and to not in {a.id for a in run.team.config.agents}:
            raise ApiError(404, f"no agent {to!r} in this run", code="agent_not_found", param="agent")
        note_id = run.team.send_note(text, to)
        return JSONResponse({"accepted": note_id is not None, "note_id": note_id}, status_code=202)


def _json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (the client wrote JSON, not Python)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "an array" if isinstance(value, list) else "an object"


def _resume_after(request: Request) -> int:
    """The seq a stream starts after: ``Last-Event-ID`` (a reconnecting EventSource), else ``?after=``."""
    header = request.headers.get("last-event-id")
    name, value = ("Last-Event-ID", header) if header else ("after", request.query_params.get("after"))
    if not value:
        return 0
    if not _SEQ.fullmatch(value):
        raise ApiError(400, f"{name} must be a trace seq (a whole number of at most 18 digits), "
                            f"not {value[:40]!r}", param=name, code="invalid_value")
    return int(value)
