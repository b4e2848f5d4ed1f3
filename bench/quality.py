"""Answer quality of a team against its own model, at equal numbers of model calls.

For every task it records one greedy call (temperature 0), independent free-text samples
at the team's sampling temperature (one call each, the plain question, no team prompt) and
one team run, with what the team's trace shows: each agent's independent first answer, and
each vote with the voter's own result and the place of its target in the voter's view.
The report compares one greedy call, one call and majority vote over the first k samples
(k up to the team's mean calls per task), the team, each agent's first answers alone and
the ceiling (any first answer right), with 95 % Wilson intervals, calls, tokens and seconds;
then the votes by the position of their target in the voter's view. Every answer goes to
``answers.jsonl`` as it comes, so a killed benchmark continues where it stopped;
``--report`` prints the tables from that file alone. Results are read again from the raw
text at report time, so every row is scored by the same extractor.

Run: python -m bench.quality [--config X] [--tasks arithmetic] [--n 15] [--seed 0,2,3]
     [--methods greedy,team,sample]
Task sets (``bench/tasks.py``, which also grades each answer): ``arithmetic`` (``a + b * c + d - e * f``,
integers 0..30 from ``random.Random(seed)``); ``compare`` (the README's question, "Which is larger, 9.11 or
9.9?", then pairs of decimals with one and two decimal digits, asked as bare as a user asks it, so the
answer is read from whatever sentence the model ends with); and, with the ``[bench]`` extra, any
reasoning-gym family as ``rg:NAME`` (scored by its own ``score_answer``) and ``humaneval`` (its tests run
against the answer's code in the sandbox). Several sets at once (``--tasks rg:syllogism,humaneval``) give
a table per family and one overall.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import shutil
import sys
import time
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.configs import TeamConfig, load_config
from massgen.configs.defaults import default_team

from . import tasks as task_sets
from .tasks import (
    Number,
    Task,
    arithmetic_tasks,
    compare_tasks,
    extract,
    reasoning_gym_tasks,
    refuse_shared_problems,
    select_tasks,
)

__all__ = ["Number", "Task", "arithmetic_tasks", "compare_tasks", "extract", "main", "majority", "majority_right",
           "reasoning_gym_tasks", "refuse_shared_problems", "score", "select_tasks", "wilson"]

SAMPLE_MAX_TOKENS = 1024

def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 0.0
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def majority_right(task: Task, texts: list[str], *, needs_two: bool = False) -> bool:
    """Whether the answer most of ``texts`` state is right (a tie to the one seen first, by the task's own
    grading); ``needs_two``: a majority needs two texts that agree, else the first text's answer stands."""
    verdicts = [task.grade(text) for text in texts]
    keys = [v.key for v in verdicts]
    top = majority(keys)
    if top is None:
        return False
    if needs_two and keys.count(top) < 2:
        return verdicts[0].correct
    return next(v.correct for v in verdicts if v.key == top)


def majority(values: Iterable[Hashable | None]) -> Hashable | None:
    """The most frequent answer; a tie goes to the one that came first."""
    seen = [v for v in values if v is not None]
    if not seen:
        return None
    counts = Counter(seen)
    best = max(counts.values())
    return next(v for v in seen if counts[v] == best)


# -- running -----------------------------------------------------------------------------------


class Sampler:
    """Independent free-text calls of the config's first model on the bare question.

    One backend on one event loop for the whole benchmark, so a local model server is
    started once and its prompt cache stays warm, as it would for a user's repeated calls.
    """

    def __init__(self, config: TeamConfig) -> None:
        from massgen.backends import BackendContext, create

        self.loop = asyncio.new_event_loop()
        # No fixed seed: with one, every "independent" call on the same prompt is the same call.
        backend = config.agents[0].backend
        if getattr(backend, "seed", None) is not None:
            backend = backend.model_copy(update={"seed": None})
        self.backend = create(backend, BackendContext(agent_id="bench"))
        self.loop.run_until_complete(self.backend.start())

    def sample(self, question: str, temperature: float, max_tokens: int = SAMPLE_MAX_TOKENS) -> dict[str, Any]:
        return self.loop.run_until_complete(self._sample(question, temperature, max_tokens))

    async def _sample(self, question: str, temperature: float, max_tokens: int) -> dict[str, Any]:
        from massgen.messages.stream import ChatMessage, ModelRequest, StreamError, TextDelta, Usage

        start = time.perf_counter()
        text: list[str] = []
        usage, error = Usage(), None
        request = ModelRequest(messages=(ChatMessage(role="user", content=question),),
                               temperature=temperature, max_tokens=max_tokens)
        async for event in self.backend.stream(request):
            if isinstance(event, TextDelta):
                text.append(event.text)
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, StreamError):
                error = event.message
        return {"text": "".join(text), "temperature": temperature, "calls": 1, "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens, "seconds": round(time.perf_counter() - start, 2),
                "error": error}

    def close(self) -> None:
        self.loop.run_until_complete(self.backend.aclose())
        self.loop.close()


def _team(config: TeamConfig, question: str, log_dir: Path) -> dict[str, Any]:
    import massgen
    from massgen.logs.derived_files import read_trace

    start = time.perf_counter()
    shutil.rmtree(log_dir, ignore_errors=True)  # a run killed half-way starts again
    result = massgen.run_sync(question, config=config, log_dir=log_dir)
    usage = result.usage
    return {"text": result.final_answer, "calls": usage["model_calls"], "input_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"], "seconds": round(time.perf_counter() - start, 2),
            "status": result.status, **team_record(read_trace(result.log_dir), config)}


def team_record(trace: list[dict[str, Any]], config: TeamConfig) -> dict[str, Any]:
    """What the trace shows of a team run: each agent's independent first answer, and each vote
    with the voter's own result and the 1-based place of its target in the view that voter saw."""
    temperatures = {a.id: getattr(a.backend, "temperature", None) for a in config.agents}
    first: dict[str, dict[str, Any]] = {}
    views: dict[tuple[str, int], tuple[str, ...]] = {}
    votes: list[dict[str, Any]] = []
    proposed: dict[str, tuple[str, int]] = {}  # VoteProposed msg_id -> (voter, turn)
    for record in trace:
        kind, p = record.get("type"), record.get("payload") or {}
        if kind == "AnswerAccepted":
            if p.get("independent") and p["agent"] not in first:
                first[p["agent"]] = {"agent": p["agent"], "label": p["label"], "text": p["content"],
                                     "temperature": temperatures.get(p["agent"])}
        elif kind == "TurnStarted":
            views[(p["agent"], p["turn_id"])] = tuple(p.get("view_labels") or ())
        elif kind == "VoteProposed":
            proposed[record.get("msg_id", "")] = (str(record.get("sender", "")).split("#")[0], p["turn_id"])
        elif kind == "RecordVote":  # a vote the judge counted (one cast on an outdated view is not)
            seen = views.get(proposed.get(record.get("causation_id", ""), ("", -1)), ())
            target = p["target_label"]
            votes.append({"voter": p["voter"], "target": target,
                          "place": seen.index(target) + 1 if target in seen else None, "in_view": len(seen),
                          "own_result": p.get("own_result", ""), "target_result": p.get("target_result", ""),
                          "reason": p.get("reason", ""), "checked": p.get("checked", False),
                          "agreement": p.get("agreement", False), "round": p.get("round")})
    answers = [first[a.id] for a in config.agents if a.id in first]
    decided = next((r.get("payload", {}) for r in trace if r.get("type") == "FirstAnswersDecided"), None)
    # Under ``after_first_answers: decide`` no run has a vote round: unanimity is every first answer the decision
    # weighed stating the one result it counted (an answer it did not wait for came too late to be weighed).
    support = (decided or {}).get("support") or {}
    agreed = len(support) == 1 and sum(support.values()) == len((decided or {}).get("labels") or answers)
    return {"first_answers": answers, "votes": votes, "decided": decided is not None,
            "unanimous": agreed or any(r.get("type") == "UnanimousFirstAnswers" for r in trace)}


def load_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of the answers file; a torn last line (a killed run) is ignored."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def latest(rows: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The newest row of each (task, method, index): a retried sample replaces the failed one."""
    return {(r["task_id"], r["method"], r["index"]): r for r in rows}


def _drop_torn_tail(path: Path) -> None:
    """A run killed mid-write leaves a line without its newline: cut it, so appends start clean."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def sampling_temperature(config: TeamConfig) -> float:
    """The temperature the team samples at: its hottest agent's (the default team: 0 / 0.4 / 0.4)."""
    temps = [t for a in config.agents if isinstance(t := getattr(a.backend, "temperature", None), (int, float))]
    return float(max(temps)) if temps else 0.7


def scored_row(task: Task, method: str, index: int, outcome: dict[str, Any]) -> dict[str, Any]:
    """One line of the answers file: a call's or a team's outcome, with the result read from it and scored
    (the report grades the text again; these two fields are for a reader of the file)."""
    verdict = task.grade(outcome["text"])
    got = verdict.key if isinstance(verdict.key, int | float | str) or verdict.key is None else str(verdict.key)
    return {"task_id": task.task_id, "method": method, "index": index, "expected": task.expected,
            "extracted": got, "correct": verdict.correct, **outcome}


def round_robin(tasks: list[Task]) -> list[Task]:
    """One problem of each family in turn, so a run stopped early has as many of each family as it could."""
    families: dict[str, list[Task]] = {}
    for task in tasks:
        families.setdefault(task.family, []).append(task)
    queues = list(families.values())
    return [queue[i] for i in range(max(map(len, queues), default=0)) for queue in queues if i < len(queue)]


def run(config: TeamConfig, tasks: list[Task], out: Path, samples: int, methods: set[str],
        temperature: float) -> None:
    """``methods``: greedy (one call at temperature 0), sample (``samples`` calls at ``temperature``), team."""
    answers = out / "answers.jsonl"
    _drop_torn_tail(answers)
    # A sample that failed for want of the server (a timeout on a loaded machine) says nothing of the
    # model's quality: it is asked again, and the report reads the newest row of each key.
    done = {key for key, r in latest(load_rows(answers)).items() if not r.get("error")}
    sampler = Sampler(config) if methods & {"sample", "greedy"} else None
    with answers.open("a", encoding="utf-8") as sink:
        for number, task in enumerate(round_robin(tasks), 1):
            jobs: list[tuple[str, int]] = [("greedy", 0)] if "greedy" in methods else []
            jobs += [("team", 0)] if "team" in methods else []
            jobs += [("sample", i) for i in range(samples)] if "sample" in methods else []
            for method, index in jobs:
                if (task.task_id, method, index) in done:
                    continue
                print(f"[{time.strftime('%H:%M:%S')}] task {number}/{len(tasks)} {method} {index}", flush=True)
                if method == "team" or sampler is None:
                    outcome = _team(config, task.question, out / "runs" / task.task_id)
                else:
                    outcome = sampler.sample(task.question, 0.0 if method == "greedy" else temperature)
                row = scored_row(task, method, index, outcome)
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
                shown = str(row["extracted"])
                shown = shown if len(shown) <= 60 else shown[:57] + "..."
                print(f"    -> {shown!r} {'right' if row['correct'] else 'wrong'} in {outcome['seconds']} s, "
                      f"{outcome['calls']} call(s)", flush=True)
    if sampler is not None:
        sampler.close()


# -- reporting ---------------------------------------------------------------------------------


@dataclass
class MethodScore:
    name: str
    correct: int
    n: int
    calls: float
    tokens: float | None
    seconds: float | None


def _as_number(result: str) -> Number | None:
    try:
        value = float(result.replace(",", ""))
    except ValueError:
        return None
    return int(value) if value.is_integer() else value


def _grouped(rows: list[dict[str, Any]]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    by_task: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in latest(rows).values():
        by_task.setdefault(row["task_id"], {}).setdefault(row["method"], []).append(row)
    for methods in by_task.values():
        for found in methods.values():
            found.sort(key=lambda r: r["index"])
    return by_task


def scored_ids(by_task: dict[str, dict[str, list[dict[str, Any]]]], tasks: list[Task]) -> list[str]:
    """The tasks every row is scored on: those the team has run (else those with any sample)."""
    ids = [t.task_id for t in tasks if "team" in by_task.get(t.task_id, {})]
    return ids or [t.task_id for t in tasks if by_task.get(t.task_id)]


def score(rows: list[dict[str, Any]], tasks: list[Task]) -> list[MethodScore]:
    """Every row of the report, each on the tasks that have its data among those the team ran."""
    by_task = _grouped(rows)
    ids = scored_ids(by_task, tasks)
    task_of = {t.task_id: t for t in tasks}
    scores: list[MethodScore] = []

    def right(task_id: str, text: str | None) -> bool:
        return task_of[task_id].grade(text).correct

    def add(name: str, picked: list[tuple[bool, list[dict[str, Any]], str]], calls_each: float | None = None
            ) -> None:
        n = len(picked)
        if n == 0:
            return
        correct = sum(1 for ok, _, _ in picked if ok)
        if calls_each is not None:  # an agent's first answer: one call, its cost not told apart in the team's usage
            scores.append(MethodScore(name, correct, n, calls_each, None, None))
            return
        calls = sum(sum(r["calls"] for r in used) for _, used, _ in picked) / n
        tokens = sum(sum(r["input_tokens"] + r["output_tokens"] for r in used) for _, used, _ in picked) / n
        seconds = sum(sum(r["seconds"] for r in used) for _, used, _ in picked) / n
        scores.append(MethodScore(name, correct, n, calls, tokens, seconds))

    def rows_of(task_id: str, method: str) -> list[dict[str, Any]]:
        return [r for r in by_task.get(task_id, {}).get(method, []) if not r.get("error")]

    greedy = [t for t in ids if rows_of(t, "greedy")]
    add("one greedy call (T 0)", [(right(t, rows_of(t, "greedy")[0]["text"]), rows_of(t, "greedy")[:1], t)
                                  for t in greedy])
    with_samples = [t for t in ids if rows_of(t, "sample")]
    temps = {r.get("temperature") for t in with_samples for r in rows_of(t, "sample")}
    temp = "T " + "/".join(sorted(str(x) if x is not None else "?" for x in temps))
    add(f"one call ({temp})", [(right(t, rows_of(t, "sample")[0]["text"]), rows_of(t, "sample")[:1], t)
                               for t in with_samples])
    team_ids = [t for t in ids if by_task[t].get("team")]
    team_calls = (sum(by_task[t]["team"][0]["calls"] for t in team_ids) / len(team_ids)) if team_ids else 0
    most = min((len(rows_of(t, "sample")) for t in with_samples), default=0)
    top = max(1, min(most, math.ceil(team_calls))) if team_ids else most
    for k in sorted({*range(3, top + 1, 2), round(team_calls), top}):
        if 1 < k <= most:
            add(f"majority of {k} ({temp})", [
                (majority_right(task_of[t], [r["text"] for r in rows_of(t, "sample")[:k]]), rows_of(t, "sample")[:k],
                 t)
                for t in with_samples])
    add("team", [(right(t, by_task[t]["team"][0]["text"]), by_task[t]["team"][:1], t) for t in team_ids])
    firsts: dict[str, list[dict[str, Any]]] = {
        t: f for t in team_ids if (f := by_task[t]["team"][0].get("first_answers") or [])}
    # Each agent by name, listed where it first answers: a run that did not wait for an agent (agreement stops)
    # has no answer of it, so a place in the list is not an agent, and such a run is not in that agent's row.
    places: dict[tuple[str, Any], int] = {}
    for f in firsts.values():
        for i, a in enumerate(f):
            places[(a["agent"], a.get("temperature"))] = min(i, places.get((a["agent"], a.get("temperature")), i))
    agents = sorted(places, key=lambda key: (places[key], key[0]))
    for agent, temperature in agents:
        picked: list[tuple[bool, list[dict[str, Any]], str]] = [
            (right(t, a["text"]), [], t) for t, f in firsts.items() for a in f if a["agent"] == agent]
        add(f"{agent}'s first answer alone (T {temperature})", picked, calls_each=1.0)
    if firsts:
        ceiling: list[tuple[bool, list[dict[str, Any]], str]] = [
            (any(right(t, a["text"]) for a in f), [], t) for t, f in firsts.items()]
        add("ceiling: any first answer right", ceiling, calls_each=float(len(agents)))
    return scores


def table(scores: list[MethodScore]) -> str:
    lines = ["| method | correct | accuracy (95 % Wilson) | calls/task | tokens/task | s/task |",
             "|---|---|---|---|---|---|"]
    for s in scores:
        low, high = wilson(s.correct, s.n)
        tokens = f"{s.tokens:.0f}" if s.tokens is not None else "-"
        seconds = f"{s.seconds:.1f}" if s.seconds is not None else "-"
        lines.append(f"| {s.name} | {s.correct}/{s.n} | {s.correct / s.n:.1%} ({low:.0%}-{high:.0%}) | "
                     f"{s.calls:.1f} | {tokens} | {seconds} |")
    return "\n".join(lines)


def vote_positions(rows: list[dict[str, Any]], tasks: list[Task]) -> str:
    """Votes by the place of their target in the voter's own view (1 = listed first)."""
    by_task = _grouped(rows)
    expected = {t.task_id: t.expected for t in tasks}
    places: dict[int | None, Counter[str]] = {}
    # The judge's results are numbers only where the task's answer is one (a kinship word or code is not read so).
    for task_id in scored_ids(by_task, tasks):
        for team in by_task.get(task_id, {}).get("team", [])[:1]:
            for vote in team.get("votes") or []:
                c = places.setdefault(vote.get("place"), Counter())
                c["votes"] += 1
                c["target right"] += _as_number(vote.get("target_result", "")) == expected[task_id]
                own = vote.get("own_result", "")
                c["own result stated"] += bool(own)
                c["own result differs"] += bool(own) and own != vote.get("target_result", "")
                c["own result right"] += bool(own) and _as_number(own) == expected[task_id]
                c["agreement"] += bool(vote.get("agreement"))
                c["own result computed"] += bool(vote.get("checked"))
    if not places:
        return ""
    keys = ["votes", "target right", "agreement", "own result stated", "own result differs", "own result right",
            "own result computed"]
    lines = ["| target's place in the voter's view | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for place in sorted(places, key=lambda p: (p is None, p or 0)):
        c = places[place]
        lines.append(f"| {place if place is not None else '?'} | " + " | ".join(str(c[k]) for k in keys) + " |")
    return "\n".join(lines)


def paired(rows: list[dict[str, Any]], tasks: list[Task]) -> str:
    """The team against one greedy call on the same problems: where they differ."""
    by_task = _grouped(rows)
    task_of = {t.task_id: t for t in tasks}
    both = [t for t in scored_ids(by_task, tasks) if by_task[t].get("team") and by_task[t].get("greedy")]
    if not both:
        return ""
    team_only = greedy_only = unanimous = decided = 0
    for t in both:
        team_right = task_of[t].grade(by_task[t]["team"][0]["text"]).correct
        greedy_right = task_of[t].grade(by_task[t]["greedy"][0]["text"]).correct
        team_only += team_right and not greedy_right
        greedy_only += greedy_right and not team_right
        team = by_task[t]["team"][0]
        unanimous += bool(team.get("unanimous"))
        # Rows written before "decided" was recorded: no vote and one call per first answer is a decision.
        decided += bool(team.get("decided", "first_answers" in team and not team.get("votes")
                                 and team.get("calls") == len(team["first_answers"])))
    if decided < len(both):
        rounds = f"first answers unanimous (no vote round) on {unanimous}"
    elif all("decided" in by_task[t]["team"][0] for t in both):
        rounds = f"first answers unanimous on {unanimous}, the rest decided by their results without a vote round"
    else:
        rounds = ("decided by the first answers' results without a vote round on all "
                  "(these rows do not record unanimity)")
    return (f"On the {len(both)} problems with both: the team right where one greedy call is wrong on {team_only}, "
            f"wrong where it is right on {greedy_only}; {rounds}.")


def replayed_rules(rows: list[dict[str, Any]], tasks: list[Task]) -> str:
    """The judge's rules replayed offline on each team run's recorded first answers and votes.

    The same evidence under another rule: a way to compare decision rules without model time.
    """
    from massgen.actors.coordination.decision import Evidence, decide
    from massgen.actors.coordination.results import final_result, stated_result
    from massgen.messages import AnswerResult

    by_task = _grouped(rows)
    task_of = {t.task_id: t for t in tasks}
    right: Counter[str] = Counter()
    n = with_greedy = 0
    for task_id in scored_ids(by_task, tasks):
        team = (by_task.get(task_id, {}).get("team") or [{}])[0]
        firsts = team.get("first_answers") or []
        if not firsts:
            continue
        n += 1
        order = [a["agent"] for a in firsts]
        by_label = {a["label"].split(".")[0]: a["agent"] for a in firsts}
        answers = tuple(AnswerResult(agent=a["agent"], label=a["label"], result=final_result(a["text"]),
                                     stated=bool(stated_result(a["text"])), independent=True) for a in firsts)
        ballots = {v["voter"]: (by_label.get(v["target"].split(".")[0], ""), v.get("target_result", ""),
                                v.get("own_result", "") if v.get("own_result") != v.get("target_result") else "")
                   for v in team.get("votes") or [] if v.get("target")}
        computed = {v["voter"]: v.get("own_result", "") for v in team.get("votes") or []
                    if v.get("checked") and v.get("own_result")}
        text = {a["agent"]: a["text"] for a in firsts}
        for rule in ("support", "prior"):
            winner = decide(Evidence(answers=answers, order=tuple(order), votes=ballots, computed=computed,
                                     winner_rule=rule)).winner if ballots else order[0]
            right[rule] += winner is not None and task_of[task_id].grade(text[winner]).correct
        results = [final_result(a["text"]) for a in firsts]
        top, count = Counter(results).most_common(1)[0]
        pick = firsts[results.index(top)] if count > 1 else firsts[0]
        right["majority"] += task_of[task_id].grade(pick["text"]).correct
        greedy = [r for r in by_task[task_id].get("greedy", [])[:1] if not r.get("error")]
        if greedy:
            with_greedy += 1
            right["greedy majority"] += majority_right(task_of[task_id], [greedy[0]["text"]] + [
                a["text"] for a in firsts[1:]], needs_two=True)
    if not n:
        return ""
    line = (f"The judge's rules replayed on the {n} team runs' recorded first answers and votes: "
            f"support {right['support']}/{n}, prior {right['prior']}/{n}; majority of the first answers "
            f"(a tie to the first agent) {right['majority']}/{n}.")
    if with_greedy:
        line += (f" The one greedy call in the first agent's place, a majority of it and the other agents' first "
                 f"answers (a tie to the greedy call): {right['greedy majority']}/{with_greedy}.")
    return line


def greedy_majority(greedy: str, others: list[str]) -> Number | None:
    """A result at least two of the greedy call and the other first answers state; else the greedy call's.

    A candidate rule (``bench/results/bare-greedy-in-majority-preregistered.md``): the baseline itself is
    a member, so the team leaves it only when two independent answers agree against it.
    """
    values = [extract(greedy), *(extract(text) for text in others)]
    common = Counter(v for v in values if v is not None).most_common(1)
    return common[0][0] if common and common[0][1] > 1 else values[0]


def plot(scores: list[MethodScore], path: Path) -> bool:
    """Accuracy against calls per task, as a PNG, with one greedy call as a line; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for s in scores:
        low, high = wilson(s.correct, s.n)
        acc = s.correct / s.n
        if s.name.startswith("one greedy call"):
            ax.axhline(acc, color="black", linestyle="--", linewidth=1, label=f"{s.name}: {acc:.0%}")
            ax.axhspan(low, high, color="grey", alpha=0.12)
            continue
        ax.errorbar([s.calls], [acc], yerr=[[max(0.0, acc - low)], [max(0.0, high - acc)]], fmt="o", capsize=4,
                    label=s.name)
    ax.set_xlabel("model calls per task")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1)
    ax.set_title(f"answer quality (n = {max((s.n for s in scores), default=0)}, 95 % Wilson)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="config path or @examples/NAME (default: the local team)")
    parser.add_argument("--tasks", default="arithmetic",
                        help="arithmetic, compare, humaneval, plain, plain2, plain3, plain4, probes, rg:FAMILY (any "
                             "reasoning-gym family), or several separated by commas (a table each, and one overall)")
    parser.add_argument("--n", type=int, default=15)
    parser.add_argument("--seed", default="0", help="one seed, or several: 0,2,3 (n problems each)")
    parser.add_argument("--samples", type=int, default=7, help="independent single calls per task")
    parser.add_argument("--methods", default="greedy,team,sample",
                        help="which to run, in this order per task: greedy, team, sample")
    parser.add_argument("--temperature", type=float,
                        help="of the sampled single calls (default: the team's sampling temperature)")
    parser.add_argument("--out", type=Path, help="result folder (default bench/results/quality-TASKS-nN-sSEED)")
    parser.add_argument("--report", action="store_true", help="only print the table from the answers file")
    parser.add_argument("--only", help="run only these task ids, comma-separated (of those --tasks, --n and --seed "
                                       "draw), e.g. the ones a replay could not decide")
    args = parser.parse_args(argv)
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    seeds, tasks = select_tasks(args.tasks, args.n, args.seed)
    if args.only:
        wanted = [t.strip() for t in args.only.split(",") if t.strip()]
        unknown = sorted(set(wanted) - {t.task_id for t in tasks})
        if unknown:
            sys.exit(f"--only: no such task among those drawn: {', '.join(unknown)}")
        tasks = [t for t in tasks if t.task_id in wanted]
    tag = args.tasks.replace(":", "_").replace(",", "+")
    out = args.out or Path("bench/results") / f"quality-{tag}-n{args.n}-s{'-'.join(map(str, seeds))}"
    out.mkdir(parents=True, exist_ok=True)
    task_sets.RUNNER = task_sets.CodeRunner(out / "exec_cache.jsonl")  # code answers run once per program
    if not args.report:
        config: TeamConfig = load_config(args.config)[0] if args.config else default_team({})
        methods = {m.strip() for m in args.methods.split(",") if m.strip()}
        unknown = methods - {"greedy", "sample", "team"}
        if unknown:
            sys.exit(f"--methods: unknown {', '.join(sorted(unknown))} (greedy, sample, team)")
        temperature = args.temperature if args.temperature is not None else sampling_temperature(config)
        run(config, tasks, out, args.samples, methods, temperature)
    rows = load_rows(out / "answers.jsonl")
    report = full_report(rows, tasks, out)
    print(report)
    (out / "table.md").write_text(report + "\n", encoding="utf-8")
    print(f"answers: {out / 'answers.jsonl'}")


def family_report(rows: list[dict[str, Any]], tasks: list[Task]) -> tuple[str, list[MethodScore]]:
    scores = score(rows, tasks)
    parts = (table(scores), wall_time(scores), paired(rows, tasks), replayed_rules(rows, tasks),
             vote_positions(rows, tasks))
    return "\n\n".join(part for part in parts if part), scores


def full_report(rows: list[dict[str, Any]], tasks: list[Task], out: Path) -> str:
    """One table per family of problems, then one over all of them (with several families), and a plot each."""
    families = list(dict.fromkeys(t.family for t in tasks))
    if len(families) == 1:
        report, scores = family_report(rows, tasks)
        if plot(scores, out / "accuracy_vs_calls.png"):
            report += f"\n\nplot: {out / 'accuracy_vs_calls.png'}"
        return report
    parts = []
    for family in [*families, "overall"]:
        chosen = tasks if family == "overall" else [t for t in tasks if t.family == family]
        report, scores = family_report(rows, chosen)
        if not scores:
            continue
        png = out / f"accuracy_vs_calls-{family}.png"
        parts.append(f"### {family}\n\n{report}" + (f"\n\nplot: {png}" if plot(scores, png) else ""))
    return "\n\n".join(parts)


def wall_time(scores: list[MethodScore]) -> str:
    """The team's seconds per problem against one greedy call's, measured in the same run."""
    by_name = {s.name: s for s in scores}
    greedy, team = by_name.get("one greedy call (T 0)"), by_name.get("team")
    if greedy is None or team is None or greedy.seconds is None or team.seconds is None:
        return ""
    ratio = f"{team.seconds / greedy.seconds:.1f}x" if greedy.seconds > 0 else "no ratio: the call took no time"
    return (f"Wall time per problem: the team {team.seconds:.1f} s, one greedy call {greedy.seconds:.1f} s "
            f"({ratio}); calls per problem: the team {team.calls:.1f}.")


if __name__ == "__main__":
    main()
