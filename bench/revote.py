"""The vote round rerun on recorded first answers: a change to the vote round measured at its own cost.

A team's answer on a problem whose first answers agree never reaches a vote round, so a change to the
vote prompt, the presenter or the judge can only change the problems whose first answers disagree. This
reruns the real team on those, with each agent's first model call answered by the first answer it wrote
in an earlier ``bench.quality`` run (``--from``); every later call goes to the model. The other rows of
the earlier run (greedy calls, samples, the teams whose first answers agreed) are copied, marked
``"copied": true``, so ``bench.quality --report --out OUT`` prints the whole table on the same first
answers. The rerun team rows count the pinned first calls as calls but not their tokens or seconds.

Run: python -m bench.revote --from bench/results/quality-rg_chain_sum-n20-s0 --tasks rg:chain_sum --n 20
     --out DIR [--config X] [--only chain_sum-0-17,...]
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from massgen.actors.coordination.results import final_result
from massgen.backends import BackendContext, register
from massgen.configs import TeamConfig, backend_types, load_config
from massgen.configs.defaults import default_team
from massgen.configs.schema import BackendConfig
from massgen.messages.stream import Finish, ModelRequest, StreamEvent, TextDelta, ToolCall, ToolCallEvent, Usage
from massgen.messages.workflow import CONTENT, NEW_ANSWER

from . import quality

# The problem being rerun: agent id -> its recorded first answer, taken by that agent's first call.
_PINNED: dict[str, str] = {}
# backend type -> the factory it had before ``pin`` wrapped it ("module:function").
_FACTORIES: dict[str, str] = {}


class PinnedFirstCall:
    """A backend whose agent's first call replays the agent's recorded first answer; later calls are its own.

    A backend that decides in a second call (the local one) gets the answer as the free text it would
    have written; any other gets it as the ``new_answer`` call it would have made.
    """

    def __init__(self, inner: Any, agent_id: str) -> None:
        self.inner = inner
        self.agent_id = agent_id

    @property
    def decides_separately(self) -> bool:
        return bool(self.inner.decides_separately)

    def replayed(self, request: ModelRequest, tool_calls: int) -> None:
        self.inner.replayed(request, tool_calls)

    async def start(self) -> None:
        await self.inner.start()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        text = _PINNED.pop(self.agent_id, None)
        if text is None:
            async for event in self.inner.stream(request):
                yield event
            return
        if self.inner.decides_separately:
            yield TextDelta(text=text)
            yield Usage()
            yield Finish(reason="stop")
            return
        yield ToolCallEvent(call=ToolCall(id="pinned", name=NEW_ANSWER, arguments={CONTENT: text}))
        yield Usage()
        yield Finish(reason="tool_calls")


def pinned(config: BackendConfig, context: BackendContext) -> PinnedFirstCall:
    module, function = _FACTORIES[config.type].split(":")
    inner = getattr(importlib.import_module(module), function)(config, context)
    return PinnedFirstCall(inner, context.agent_id)


def pin(config: TeamConfig) -> None:
    """Build every backend type of ``config`` through ``PinnedFirstCall`` in this process."""
    for agent in config.agents:
        described = backend_types.lookup(agent.backend.type)
        if described is None or described.needs is not None:
            sys.exit(f"backend.type {agent.backend.type!r} of agent {agent.id!r} cannot run here")
        _FACTORIES.setdefault(agent.backend.type, described.factory)
        register(agent.backend.type, f"{__name__}:pinned")


def disagree(team_row: dict[str, Any]) -> bool:
    firsts = team_row.get("first_answers") or []
    return len({final_result(a["text"]) for a in firsts}) > 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="config path or @examples/NAME (default: the local team)")
    parser.add_argument("--from", dest="source", type=Path, required=True, help="an earlier bench.quality folder")
    parser.add_argument("--tasks", default="arithmetic")
    parser.add_argument("--n", type=int, default=15)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--only", default="", help="task ids to rerun, comma-separated (default: all that disagree)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    source = args.source / "answers.jsonl"
    if not source.exists():
        sys.exit(f"--from: no answers.jsonl in {args.source}")
    earlier = list(quality.latest(quality.load_rows(source)).values())
    tasks = {t.task_id: t for t in quality.select_tasks(args.tasks, args.n, args.seed)[1]}
    wanted = {t for t in args.only.split(",") if t}
    answers = args.out / "answers.jsonl"
    done = {r["task_id"] for r in quality.load_rows(answers) if r["method"] == "team" and not r.get("copied")}
    config = load_config(args.config)[0] if args.config else default_team({})
    pin(config)
    rerun = [r for r in earlier if r["method"] == "team" and disagree(r) and (not wanted or r["task_id"] in wanted)]
    if unknown := sorted(wanted - {r["task_id"] for r in rerun}):
        sys.exit(f"--only: {', '.join(unknown)}: no team run there whose first answers disagree")
    if unknown := sorted(r["task_id"] for r in rerun if r["task_id"] not in tasks):
        sys.exit(f"--from: {', '.join(unknown)} not among the problems of --tasks/--n/--seed")
    args.out.mkdir(parents=True, exist_ok=True)
    quality._drop_torn_tail(answers)
    if not answers.exists():
        with answers.open("w", encoding="utf-8") as sink:
            rerun_ids = {r["task_id"] for r in rerun}
            for row in earlier:
                if not (row["method"] == "team" and row["task_id"] in rerun_ids):
                    sink.write(json.dumps({**row, "copied": True}, ensure_ascii=False) + "\n")
    with answers.open("a", encoding="utf-8") as sink:
        for number, row in enumerate(rerun, 1):
            if row["task_id"] in done:
                continue
            task = tasks[row["task_id"]]
            _PINNED.clear()
            _PINNED.update({a["agent"]: a["text"] for a in row["first_answers"]})
            print(f"[{time.strftime('%H:%M:%S')}] {number}/{len(rerun)} {row['task_id']}", flush=True)
            outcome = quality._team(config, task.question, args.out / "runs" / row["task_id"])
            new = quality.scored_row(task, "team", 0, outcome)
            sink.write(json.dumps(new, ensure_ascii=False) + "\n")
            sink.flush()
            print(f"    -> {new['extracted']} (expected {row['expected']}; before {row['extracted']}) "
                  f"in {outcome['seconds']} s, {outcome['calls']} call(s)", flush=True)


if __name__ == "__main__":
    main()
