"""An OpenAI-compatible Chat Completions server that answers at once, for start-up and overhead numbers.

It streams what a cooperative model would: a ``new_answer`` call when it may answer, a
``vote`` for the first answer shown when it may only vote, and plain text otherwise
(the final presentation). Real sockets, real SSE, the official client on the other end;
no model time at all, so what a run costs beyond it is massgen's own.

Run alone: ``python -m bench.zero_latency_openai`` prints its base URL and serves until Ctrl-C.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _reply(request: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """(text, tool call) for a request, by the tools it offers."""
    tools = {t["function"]["name"]: t["function"] for t in request.get("tools") or []}
    if "new_answer" in tools and "vote" not in tools:
        return None, {"name": "new_answer", "arguments": {"content": "4, because 2 + 2 = 4."}}
    if "vote" in tools:
        targets = tools["vote"]["parameters"]["properties"]["agent_id"].get("enum") or ["agent1"]
        return None, {"name": "vote", "arguments": {"agent_id": targets[0], "reason": "correct and complete"}}
    return "The answer is 4: two and two make four.", None


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    body = {"id": "chatcmpl-zero", "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: this is a benchmark
        return

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
        self.server.requests += 1  # type: ignore[attr-defined]
        model = str(request.get("model", "zero"))
        text, call = _reply(request)
        parts = [_chunk(model, {"role": "assistant", "content": ""})]
        if text is not None:
            parts.append(_chunk(model, {"content": text}))
        if call is not None:
            parts.append(_chunk(model, {"tool_calls": [{"index": 0, "id": "call_zero", "type": "function", "function": {
                "name": call["name"], "arguments": json.dumps(call["arguments"])}}]}))
        parts.append(_chunk(model, {}, "tool_calls" if call else "stop"))
        usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
        parts.append(b"data: " + json.dumps({"id": "chatcmpl-zero", "object": "chat.completion.chunk",
                                             "created": int(time.time()), "model": model, "choices": [],
                                             "usage": usage}).encode() + b"\n\n")
        parts.append(b"data: [DONE]\n\n")
        body = b"".join(parts)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ZeroLatencyServer:
    """``with ZeroLatencyServer() as server: server.base_url`` (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self) -> None:
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._http.daemon_threads = True
        self._http.requests = 0  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._http.serve_forever, name="zero-latency-openai", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    @property
    def requests(self) -> int:
        return int(self._http.requests)  # type: ignore[attr-defined]

    def __enter__(self) -> ZeroLatencyServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(5)


if __name__ == "__main__":
    with ZeroLatencyServer() as server:
        print(server.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
