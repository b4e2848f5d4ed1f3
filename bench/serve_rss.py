"""``massgen serve`` memory over many runs: RSS of the server process every N requests.

A real server process serves a team of three ``chatcompletion`` agents whose endpoint is a
loopback Chat Completions server in this process (``tests/wire/team_chat.py``), so every
run opens and closes real HTTP clients. Prints RSS after warm-up and every ``--every``
requests; flat after warm-up means nothing piles up per run.

    .venv/bin/python -m bench.serve_rss [--requests 500] [--every 50]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import httpx
import psutil
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from wire.team_chat import TeamChatServer

LISTENING = "massgen serve: listening on "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--every", type=int, default=50)
    args = parser.parse_args()
    with TeamChatServer() as upstream, tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        agents = [{"id": f"a{i}", "backend": {"type": "chatcompletion", "base_url": f"{upstream.url}/v1",
                                              "api_key": "sk-bench", "model": f"healthy#{i}"}} for i in range(3)]
        (workdir / "team.yaml").write_text(yaml.safe_dump({"agents": agents}))
        cmd = [sys.executable, "-m", "massgen.cli.main", "serve", "--port", "0", "--config", "team.yaml",
               "--log-dir", str(workdir / "logs"), "--log-level", "warning"]
        proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            url = ""
            for line in proc.stderr:
                if line.startswith(LISTENING):
                    url = line[len(LISTENING):].strip()
                    break
            if not url:
                raise SystemExit("the server did not start")
            threading.Thread(target=lambda: [None for _ in proc.stderr or ()], daemon=True).start()
            server = psutil.Process(proc.pid)
            body = {"model": "team", "messages": [{"role": "user", "content": "What is 2+2?"}]}
            print("| requests | RSS MB |")
            print("|---|---|")
            with httpx.Client(timeout=60) as client:
                for done in range(1, args.requests + 1):
                    reply = client.post(f"{url}/v1/chat/completions", json=body)
                    if reply.status_code != 200:
                        raise SystemExit(f"request {done}: {reply.status_code} {reply.text[:200]}")
                    if done == 10 or done % args.every == 0:
                        print(f"| {done} | {server.memory_info().rss / 2**20:.1f} |", flush=True)
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
