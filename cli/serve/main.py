"""``massgen serve``: arguments, start-up checks, and a uvicorn server that shuts down gracefully.

Shutdown on SIGTERM (or Ctrl-C): uvicorn stops accepting connections at once, and our
``handle_exit`` tells the registry, which refuses new runs (503) and gives running ones
``--shutdown-grace`` seconds to finish before cancelling them; a cancelled team still
returns its best answer so far, which the waiting clients receive. The app's lifespan
shutdown then waits (bounded) until every team has written its logs. uvicorn's own
graceful timeout is set past both bounds so it never cuts a finishing run off, and, as
uvicorn does, the process finally ends by the signal it received; Ctrl-C (SIGINT), the documented
way to stop ``--ui`` and ``massgen --web``, ends it with a one-line note and exit 4 (``--web``: the
exit code of its run's status, as the one-shot command's), never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import ipaddress
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import uvicorn

from massgen.cli import exit_codes
from massgen.cli.serve import header_timeout
from massgen.cli.serve.app import ServerState, build_app
from massgen.cli.serve.catalog import Catalog, served_name
from massgen.cli.serve.errors import ApiError
from massgen.cli.serve.models import Limits
from massgen.cli.serve.runs import RunRegistry, ServedRun
from massgen.cli.usage import UsageParser, port_number, positive_int, positive_seconds, seconds

if TYPE_CHECKING:
    from massgen import RunResult, TeamConfig
    from massgen.cli.serve.ui import WebUI

API_KEY_ENV = "MASSGEN_SERVER_API_KEY"
log = logging.getLogger("massgen.serve")


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="massgen serve",
        description="Serve teams behind an OpenAI-compatible API (POST /v1/chat/completions).",
        epilog="example: massgen serve --port 4000 --config team.yaml --default-model gpt-5",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=4000, help="port (default 4000; 0 picks a free one)")
    parser.add_argument("--config", metavar="FILE", help="the served team config (a YAML file or @examples/NAME)")
    parser.add_argument("--default-model", metavar="MODEL",
                        help="the team for requests that name no model (default: the served config)")
    parser.add_argument("--api-key", metavar="KEY",
                        help=f"require 'Authorization: Bearer KEY' on every route but /health, /ui included "
                             f"(default: ${API_KEY_ENV}; needed off loopback)")
    parser.add_argument("--allow-unauthenticated", action="store_true",
                        help="serve a non-loopback --host without --api-key (anyone who can reach it can "
                             "spend your model budget)")
    parser.add_argument("--max-concurrent-runs", type=positive_int, default=16, metavar="N",
                        help="runs at once; more get 429 with Retry-After (default 16)")
    parser.add_argument("--max-body-bytes", type=positive_int, default=Limits.max_body_bytes, metavar="N")
    parser.add_argument("--max-messages", type=positive_int, default=Limits.max_messages, metavar="N")
    parser.add_argument("--body-timeout", type=positive_seconds, default=Limits.body_timeout_s, metavar="SECONDS",
                        help="a request body must arrive within this, else 408 (default 30)")
    parser.add_argument("--header-timeout", type=positive_seconds, default=10.0, metavar="SECONDS",
                        help="a request's headers must arrive within this, else 408 (default 10)")
    parser.add_argument("--quick-agents", type=positive_int, default=3, metavar="N",
                        help="agents in a quick team built from a plain model name (default 3)")
    parser.add_argument("--config-root", action="append", default=[], metavar="DIR",
                        help="a directory whose configs 'massgen/path:FILE' may name (repeatable; the working "
                             "directory and the --config directory always are)")
    parser.add_argument("--log-dir", metavar="DIR",
                        help="base of the run logs (default $MASSGEN_LOG_BASE_DIR or .massgen/massgen_logs)")
    parser.add_argument("--keepalive", type=positive_seconds, default=15.0, metavar="SECONDS",
                        help="SSE keep-alive comment interval (default 15)")
    parser.add_argument("--shutdown-grace", type=seconds, default=30.0, metavar="SECONDS",
                        help="on SIGTERM, time runs get to finish before they are cancelled (default 30)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument("--ui", action="store_true",
                        help="also serve the Web UI under /ui (its URL, with a per-launch token, is printed)")
    parser.add_argument("--ui-drop-every", type=int, default=0, help=argparse.SUPPRESS)  # fault injection
    return parser


class _Server(uvicorn.Server):
    """uvicorn, plus: print where it listens, and start the run registry's shutdown on a signal."""

    def __init__(self, config: uvicorn.Config, state: ServerState, ui: WebUI | None = None,
                 start_question: str | None = None) -> None:
        super().__init__(config)
        self.state = state
        self.ui = ui
        self.start_question = start_question
        self._loop: asyncio.AbstractEventLoop | None = None
        self.started_run: ServedRun | None = None  # the run ``start_question`` started
        self.interrupted = False  # a Ctrl-C (SIGINT) began the shutdown

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            shown = f"[{host}]" if ":" in str(host) else host
            print(f"massgen serve: listening on http://{shown}:{port}", file=sys.stderr, flush=True)
            if self.ui is not None:
                # With --api-key the UI's token is that key: it is not printed (logs keep stderr).
                token = "<your API key>" if self.state.api_key else self.ui.access.token
                url = f"http://{shown}:{port}/ui?token={token}"
                print(f"massgen serve: web UI at {url}", file=sys.stderr, flush=True)
                if self.start_question is not None and self.state.catalog.served is not None:
                    try:
                        run_id, run = self.ui.start(self.start_question, self.state.catalog.served[0], "web")
                    except ApiError as exc:  # the run's own checks refused it (no agent can run): said, not raised
                        print(f"massgen: the run was not started: {exc.message}; the web UI stays up "
                              "(Ctrl-C stops the server)", file=sys.stderr, flush=True)
                    else:
                        print(f"massgen: watch the run at {url}&run={run_id}  (Ctrl-C stops the server)",
                              file=sys.stderr, flush=True)
                        self.started_run = run
                        run.result.add_done_callback(self._print_answer)

    def _print_answer(self, result: asyncio.Future[RunResult]) -> None:
        """``massgen --web``: the run's answer on stdout when it ends, as the one-shot command prints it."""
        from massgen.cli.oneshot import print_result

        if result.cancelled() or result.exception() is not None:
            return
        print_result(result.result(), False, sys.stdout, sys.stderr)
        if not self.state.registry.shutting_down:
            print("massgen: the run has ended; the web UI stays up (Ctrl-C stops the server)", file=sys.stderr,
                  flush=True)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGINT:
            self.interrupted = True
        super().handle_exit(sig, frame)
        if self._loop is not None:  # a signal handler: hand the work to the loop
            self._loop.call_soon_threadsafe(self.state.registry.begin_shutdown, self.state.shutdown_grace_s)


def interrupted_exit(run: ServedRun | None) -> int:
    """The exit code after Ctrl-C: the started run's, by its status, once it has ended (``massgen --web``);
    otherwise 4, as a one-shot run stopped by Ctrl-C."""
    if run is not None and run.result.done() and not run.result.cancelled() and run.result.exception() is None:
        return exit_codes.for_status(run.result.result().status)
    return exit_codes.INTERRUPTED


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1); a wildcard or any other name is not."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_address(host: str, port: int) -> None:
    """Raise ``OSError`` where uvicorn could not listen: a host that does not resolve, an address in use or
    not this machine's. Probed the way asyncio binds (every address the host resolves to, an IPv6 one only
    for IPv6, one this machine lacks skipped); the probes are closed, and uvicorn binds as it always does."""
    for family, kind, proto, _name, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                                   flags=socket.AI_PASSIVE):
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if family == socket.AF_INET6 and exc.errno == errno.EADDRNOTAVAIL:
                    continue  # no IPv6 here: asyncio skips it too
                raise


def _fail(message: str) -> int:
    print(f"massgen serve: {message}", file=sys.stderr)
    return exit_codes.CONFIG_ERROR


def main(argv: Sequence[str] | None = None, *, served_config: tuple[str, TeamConfig] | None = None,
         start_question: str | None = None) -> int:
    """``served_config`` stands in for ``--config`` and ``start_question`` starts a run at once
    (both for ``massgen --web``)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pykka").setLevel(logging.CRITICAL)

    from massgen import ConfigError, load_config
    from massgen import config_environment as environment

    env = environment()
    roots = [Path.cwd(), *(Path(r).expanduser() for r in args.config_root)]
    served = served_config
    if served is None and args.config:
        try:
            config, path = load_config(args.config, env)
        except ConfigError as exc:
            return _fail(str(exc))
        served = (served_name(args.config), config)
        roots.insert(1, path.resolve().parent)
    catalog = Catalog(served=served, served_ref=args.config, default_model=args.default_model,
                      path_roots=tuple(roots), quick_agents=args.quick_agents, env=env)
    if args.default_model:
        try:
            catalog.resolve(args.default_model)
        except ApiError as exc:
            return _fail(f"--default-model {args.default_model}: {exc.message}")

    api_key = args.api_key or os.environ.get(API_KEY_ENV) or None
    public = not is_loopback(args.host)
    if args.ui and not api_key and public:
        return _fail(f"--ui on --host {args.host}: the Web UI can start runs, so off loopback it needs --api-key")
    if public and not api_key and not args.allow_unauthenticated:
        return _fail(f"--host {args.host} is not a loopback address and no --api-key (or ${API_KEY_ENV}) is "
                     "set: anyone who can reach it could spend your model budget; give --api-key KEY, or "
                     "--allow-unauthenticated to serve it openly")
    try:  # an address in use, or a host that does not resolve, said as the flags' fault before uvicorn starts
        check_address(args.host, args.port)
    except OSError as exc:
        return _fail(f"cannot listen on --host {args.host} --port {args.port}: {exc.strerror or exc}")
    log_base = Path(args.log_dir).expanduser() if args.log_dir else None
    if log_base is not None:  # else every run would be a 500 for as long as the server ran
        try:
            if log_base.exists() and not log_base.is_dir():
                return _fail(f"--log-dir {args.log_dir}: is not a directory")
            log_base.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return _fail(f"--log-dir {args.log_dir}: cannot be used as the log directory: {exc.strerror or exc}")
        if not os.access(log_base, os.W_OK | os.X_OK):
            return _fail(f"--log-dir {args.log_dir}: this user cannot write in it")
    registry = RunRegistry(max_runs=args.max_concurrent_runs, retry_after_s=1, log_base=log_base)
    state = ServerState(
        catalog=catalog, registry=registry, api_key=api_key, bind_host=args.host, keepalive_s=args.keepalive,
        shutdown_grace_s=args.shutdown_grace,
        limits=Limits(max_body_bytes=args.max_body_bytes, max_messages=args.max_messages,
                      body_timeout_s=args.body_timeout),
    )
    ui = None
    if args.ui:
        from massgen.cli.serve.ui import StreamSettings, UiAccess, WebUI

        access = UiAccess(token=api_key, bind_host=args.host) if api_key else UiAccess(bind_host=args.host)
        ui = WebUI(state, access,
                   StreamSettings(ping_s=args.keepalive, drop_every=max(0, args.ui_drop_every)))
        state.extra_routes = ui.routes()
    server_config = uvicorn.Config(
        build_app(state), host=args.host, port=args.port, log_level=args.log_level, lifespan="on",
        timeout_graceful_shutdown=int(args.shutdown_grace + state.drain_timeout_s + 5), server_header=False,
        http=header_timeout.with_timeout(args.header_timeout),
    )
    if public and not api_key:  # --allow-unauthenticated
        log.warning("listening on %s without an API key (--allow-unauthenticated): anyone who can reach it "
                    "can spend your model budget", args.host)
    server = _Server(server_config, state, ui, start_question)
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn ends by the signal it received: SIGINT is raised again, after shutdown
        server.interrupted = True
    if server.interrupted:  # (asyncio's runner may have taken that second SIGINT itself: then run() returns)
        print("massgen serve: stopped by Ctrl-C", file=sys.stderr, flush=True)
        return interrupted_exit(server.started_run)
    return exit_codes.SUCCESS
