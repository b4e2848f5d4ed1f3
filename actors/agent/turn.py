"""One agent turn: model calls until exactly one valid workflow call, on the agent's loop.

This is the part of an agent that talks to a model, kept apart from the actor so the
mailbox stays free (cancel, inject and stop are handled while a model streams). It
reports everything through ``TurnIO``: it never touches another actor.
"""

from __future__ import annotations

import ast
import asyncio
import itertools
import re
from collections import Counter

from massgen.actors.agent import check_tools, client_tools, prompts, tool_arguments
from massgen.actors.agent.stream_guard import guard
from massgen.actors.agent.turn_io import BudgetDenied, CallResult, ModelCallError, TurnIO, TurnSettings
from massgen.actors.agent.workflow_checks import copies_ours, with_work, without_view_tags, workflow_problem
from massgen.actors.coordination import code_checks, evidence, parsing, results
from massgen.backends import Backend
from massgen.backends.retry import CALL_RETRY_EVENT
from massgen.files import confined
from massgen.messages import (
    AgentChunk,
    AnswerProposed,
    AnswerView,
    BackendEvent,
    ChatMessage,
    FinalPresented,
    FinishRound,
    InjectNote,
    ModelCallFinished,
    ModelCallStarted,
    ModelRequest,
    NoteDelivered,
    PresentFinal,
    ReasoningDelta,
    StartTurn,
    StreamError,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolCallRequested,
    ToolCallResult,
    ToolSpec,
    TurnCorrection,
    TurnFailed,
    Usage,
    VoteProposed,
)
from massgen.messages.text import escape_text
from massgen.messages.workflow import AGENT_ID, CONTENT, NEW_ANSWER, REASON, VOTE, WORKFLOW_TOOLS, vote_target


def valid_text(text: object, where: str = "result") -> str:
    """A tool's result as text that can be traced and sent to a model: lone surrogates and NUL
    escaped (``messages/text.py``), with a note saying what was, so nothing changes without a word."""
    escaped: list[str] = []
    content = escape_text(str(text), where, escaped)
    return content + "".join(f"\n[note: {note}]" for note in escaped)


_YES_NO_QUESTION = re.compile(r"\byes\b.*\bno\b|\bno\b.*\byes\b", re.IGNORECASE | re.DOTALL)


def printed_value(value: str, task: str, code: str = "") -> str:
    """What a program printed, as the answer it means: Python's spellings of values read as a person writes
    them (``50.0`` a count of 50, ``True`` a yes when the task asks for yes or no, and ``True`` printed by
    ``print(9.9 > 9.11)`` the number that comparison shows larger, 9.9: asked "which is larger", a truth value
    answers nothing; ``check_tools.order_shown``, as the calculator reads it)."""
    if re.fullmatch(r"-?\d+\.0+", value):
        return value.split(".", 1)[0]
    if value in ("True", "False") and _YES_NO_QUESTION.search(task):
        return "Yes" if value == "True" else "No"
    if value in ("True", "False") and (expression := _last_printed(code)):
        shown = check_tools.order_shown(expression, value == "True")
        if shown is not None:
            return shown[0]
    return value


def _last_printed(code: str) -> str:
    """The expression of the program's last ``print(x)`` call (by its place in the code), or ""."""
    try:
        tree = parsing.parse_module(code)
    except (SyntaxError, ValueError):
        return ""
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id == "print" and len(node.args) == 1 and not node.keywords]
    if not calls:
        return ""
    last = max(calls, key=lambda node: (node.lineno, node.col_offset))
    return ast.get_source_segment(code, last.args[0]) or ""


def printed_lines(run: confined.ProgramRun) -> list[str]:
    """The non-blank lines a program printed, none when it failed: a first answer's result, if any."""
    return [line.strip() for line in run.stdout.splitlines() if line.strip()] if run.ok else []


def program_answer(code: str, run: confined.ProgramRun, task: str = "") -> str:
    """A first answer given by a program: the program, what it printed, and its last printed line as the
    ``Answer:`` line (an "Answer:" the program printed itself is not doubled). A run that failed states no
    result: its status and standard error say why."""
    shown = f"```python\n{code.rstrip()}\n```\n\n"
    lines = printed_lines(run)
    if not lines:
        return shown + "The program gave no answer:\n" + valid_text(run.text(), "program output")
    last = valid_text(lines[-1], "program output")
    value = printed_value(last.split(":", 1)[1].strip() if last.lower().startswith("answer:") else last, task, code)
    return shown + f"The program printed:\n{valid_text(run.stdout.strip(), 'program output')}\n\nAnswer: {value}"


# The decision after free text is one small JSON object; a cut-off one is corrected like any broken call.
DECISION_MAX_TOKENS = 160
TOOL_CALLS_CAPPED_EVENT = "turn.tool_calls_capped"


def not_run_message(made: int, handled: int, not_run: list[ToolCall]) -> ChatMessage:
    """What the model is told when its reply made more tool calls than one reply may: which were not run."""
    names = Counter(call.name for call in not_run)
    shown = ", ".join(f"{escape_text(name[:60], 'tool name')} x{count}" for name, count in names.most_common(5))
    more = f" and {len(names) - 5} other tools" if len(names) > 5 else ""
    return ChatMessage(role="user", content=(
        f"Your last reply made {made} tool calls, but at most {handled} are handled from one reply: the first "
        f"{handled} were, and the other {len(not_run)} ({shown}{more}) were NOT run and have no results. Make any "
        f"of them that you still need again, at most {handled} in one reply."))


class TurnRunner:
    def __init__(self, backend: Backend, io: TurnIO, settings: TurnSettings) -> None:
        self.backend = backend
        self.io = io
        self.settings = settings
        self._pending_view: AnswerView | None = None
        self._ours: list[str] = []  # texts we put in this turn's conversation (corrections)
        self.calls_made = 0
        self._notes: dict[str, InjectNote] = {}  # from the user, for the next safe point
        self._notes_delivered: set[str] = set()
        # Past the round's soft timeout: for the turn it names, told once at the next safe point.
        self._finish: FinishRound | None = None
        # Told at the next safe point: a reply's tool calls past max_tool_calls_per_reply were not run.
        self._not_run_note: ChatMessage | None = None

    def inject(self, view: AnswerView) -> None:
        """Called on the loop thread; used at the next safe point of the running turn."""
        self._pending_view = view

    def add_note(self, note: InjectNote) -> None:
        """Called on the loop thread; a resent note that was already delivered is ignored."""
        if note.note_id not in self._notes_delivered:
            self._notes[note.note_id] = note

    def finish_round(self, message: FinishRound) -> None:
        """Called on the loop thread, possibly before the named turn's task has begun."""
        self._finish = message

    def _deliver_finish(self, start: StartTurn, view: AnswerView, messages: list[ChatMessage]) -> None:
        finish = self._finish
        if finish is None or finish.turn_id != start.turn_id:
            return  # none, or one for a turn that already ended
        self._finish = None
        message = prompts.finish_round_message(finish.elapsed_s, finish.timeout_s, finish.grace_s,
                                               finish.first_round, start.vote_only, bool(view.answers))
        self._ours.append(message.content)  # a vote reason that echoes it is not the model's
        messages.append(message)

    def _deliver_not_run(self, messages: list[ChatMessage]) -> None:
        """After the handled calls' results (a safe point): tell the model which of its calls were not run."""
        if self._not_run_note is not None:
            self._ours.append(self._not_run_note.content)
            messages.append(self._not_run_note)
            self._not_run_note = None

    def _deliver_notes(self, turn_id: int, cause: str, messages: list[ChatMessage]) -> None:
        for note_id, note in list(self._notes.items()):
            messages.append(ChatMessage(role="user", content=f"A note from the person watching this run: {note.text}"))
            self._notes_delivered.add(note_id)
            del self._notes[note_id]
            self.io.emit(NoteDelivered(causation_id=cause, turn_id=turn_id, note_id=note_id))

    # -- one streamed call ----------------------------------------------------------------

    async def _call(self, turn_id: int, cause: str, request: ModelRequest) -> CallResult:
        """One call; a stream that broke before any tool call is sent again (backends/retry.py, CallRetry)."""
        retry = 0
        while True:
            try:
                return await self._call_once(turn_id, cause, request)
            except ModelCallError as exc:
                retry += 1
                delay = self.settings.call_retry.delay(
                    retry, retryable=exc.retryable, had_output=exc.output_chars > 0, had_tool_call=exc.tool_calls > 0)
                if delay is None:
                    raise
                self.io.emit(BackendEvent(causation_id=cause, event=CALL_RETRY_EVENT, info={
                    "turn_id": turn_id, "retry": retry, "max_retries": self.settings.call_retry.max_retries,
                    "error": str(exc), "dropped_chars": exc.output_chars, "retry_in_s": round(delay, 4),
                }))
                await asyncio.sleep(delay)

    async def _call_once(self, turn_id: int, cause: str, request: ModelRequest) -> CallResult:
        permit = self.io.permit(turn_id, cause)
        if permit is None or not permit.granted:
            raise BudgetDenied(permit.reason if permit else "no reply from the supervisor")
        index = self.calls_made
        self.calls_made += 1
        prompt_chars = sum(len(m.content) for m in request.messages) + sum(
            len(str(t.parameters)) + len(t.description) for t in request.tools
        )
        self.io.emit(ModelCallStarted(
            causation_id=cause, turn_id=turn_id, call_index=index, prompt_chars=prompt_chars,
            messages=len(request.messages), tools=tuple(t.name for t in request.tools),
        ))
        result = CallResult()
        usage = Usage()
        finish = "stop"
        error: StreamError | None = None
        reasoning_chars = 0
        async for event in guard(self.backend.stream(request), self.settings.stream_limits):
            if isinstance(event, TextDelta):
                result.text += event.text
                self.io.emit(AgentChunk(causation_id=cause, turn_id=turn_id, kind="text", text=event.text))
            elif isinstance(event, ReasoningDelta):
                reasoning_chars += len(event.text)
                self.io.emit(AgentChunk(causation_id=cause, turn_id=turn_id, kind="reasoning", text=event.text))
            elif isinstance(event, ToolCallEvent):
                if not result.calls:
                    result.preamble = result.text
                result.calls.append(event.call)
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, StreamError):
                error = event
                break
            else:
                finish = event.reason
        cap = self.settings.max_tool_calls_per_reply
        if len(result.calls) > cap:  # handled: the first ``cap``; the rest are not run, and the model is told
            made = len(result.calls)
            result.calls, result.not_run = result.calls[:cap], result.calls[cap:]
            self._not_run_note = not_run_message(made, cap, result.not_run)
            names = Counter(call.name[:60] for call in result.not_run)
            self.io.emit(BackendEvent(causation_id=cause, event=TOOL_CALLS_CAPPED_EVENT, info={
                "turn_id": turn_id, "call_index": index, "calls": made, "handled": cap,
                "not_run": len(result.not_run), "not_run_names": dict(names.most_common(10)),
            }))
        self.io.emit(ModelCallFinished(
            causation_id=cause, turn_id=turn_id, call_index=index, input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens, cost_usd=usage.cost_usd,
            finish_reason="error" if error else finish, error=error.message if error else None,
        ))
        if error is not None:
            raise ModelCallError(error.message, error.status, error.retryable,
                                 len(result.text) + reasoning_chars, len(result.calls), error.permanent)
        return result

    # -- a coordination turn ----------------------------------------------------------------

    async def run_turn(self, start: StartTurn) -> None:
        """Model calls until one valid ``new_answer`` or ``vote``; the model reasons before it commits.

        Backends that decide through a grammar (``decides_separately``) get two phases: free
        text first, then a short constrained decision. Everyone else writes its reasoning
        before the tool call, in one call. In both, an answer whose final result equals one in
        view is recorded as agreement with it (a vote), not as another answer.
        """
        self._pending_view = None
        self._ours = []
        self._not_run_note = None
        if self.settings.first_answer != "team" and not start.view.answers and not start.vote_only:
            # a code task's answer is a function, which the bare question asks for: no program to print it
            if self.settings.first_answer == "program" and code_checks.task_examples(start.task) is None:
                await self._program_turn(start)
            else:
                await self._bare_turn(start)
            return
        if self.io.rank_code is not None and start.view.answers:
            ranked = await self.io.rank_code(start.task, start.view,
                                             run=self._traced_runner(start.turn_id, start.msg_id, "code_ranking"))
            if ranked is not None:  # every answer in view ran on the same inputs: that decides, with no model call
                self.io.emit(VoteProposed(
                    causation_id=start.msg_id, turn_id=start.turn_id, target=ranked.target, reason=ranked.reason,
                    view_version=start.view.version, own_result=ranked.result, checked=True,
                ))
                return
        checking = bool(self.io.check_tools and start.view.answers)
        two_phase = (self.backend.decides_separately
                     and not self.io.extra_tools and not self.settings.client_tools and not checking)
        if two_phase:
            await self._two_phase_turn(start)
        else:
            await self._one_call_turn(start)

    async def _one_call_turn(self, start: StartTurn) -> None:
        cause = start.msg_id
        view = start.view
        messages = prompts.turn_messages(
            start.task, view, start.own_label, start.vote_only, self.settings.system_message, start.history,
            attachments=self.settings.attachments,
            check_tools=any(t.name == check_tools.CALCULATE for t in self.io.check_tools),  # its prompt names it
        )
        attempts = 0
        tool_rounds = 0
        offered = () if start.vote_only else client_tools.offer(self.settings.client_tools)
        client_names = {t.name for t in offered}
        check_names = {t.name for t in self.io.check_tools}
        checked: list[str] = []  # results of this turn's check tools: the agent's own evidence
        while True:
            self._deliver_not_run(messages)
            self._deliver_notes(start.turn_id, cause, messages)  # safe point: before each model call
            self._deliver_finish(start, view, messages)
            checks = self.io.check_tools if view.answers else ()
            tools = prompts.workflow_tools(view, start.vote_only) + self.io.extra_tools + checks + offered
            request = ModelRequest(
                messages=tuple(messages), tools=tools, temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens, vote_targets=view.labels(),
            )
            result = await self._call(start.turn_id, cause, request)
            workflow = [c for c in result.calls if c.name in WORKFLOW_TOOLS]
            others = [c for c in result.calls if c.name not in WORKFLOW_TOOLS]
            client_calls = [c for c in others if c.name in client_names]
            if result.text or result.calls:
                messages.append(ChatMessage(role="assistant", content=result.text, tool_calls=tuple(others)))

            if self._pending_view is not None:  # safe point: new answers arrived mid-turn
                view, self._pending_view = self._pending_view, None
                if len(workflow) == 1 and workflow[0].name == VOTE:
                    workflow = []  # a vote cast on an outdated view is worthless
                messages.append(prompts.injection_message(view, start.own_label))
                if not workflow and not others:
                    continue

            # Tool calls beside the call that ends the turn (new_answer, vote, or client tool calls)
            # run first, traced, and the turn ends only when they all succeeded; a call that cannot
            # run is answered with a tool result the model reads. None is dropped.
            side = [c for c in others if c.name not in client_names]
            problem: str | None = None
            if workflow and client_calls:
                reason = ("not run: a client tool call is an answer on its own; "
                          f"it cannot be made together with {workflow[0].name}")
                messages.extend(self._refuse(start.turn_id, cause, c, reason) for c in others)
                problem = (f"You called {', '.join(c.name for c in client_calls)} together with "
                           f"{workflow[0].name}; make one of them, alone.")
            elif side:
                tool_rounds += 1
                if tool_rounds > self.settings.max_tool_rounds:
                    problem = f"Tool limit reached ({self.settings.max_tool_rounds} rounds)."
                    messages.extend(self._refuse(start.turn_id, cause, c, f"not run: {problem}") for c in others)
                else:
                    specs = {t.name: t for t in tools}
                    failed = []
                    for call in side:
                        message, is_error = await self._run_tool(start.turn_id, cause, call, specs.get(call.name))
                        messages.append(message)
                        if is_error:
                            failed.append(call.name)
                        elif call.name in check_names:
                            checked.append(check_tools.computed(call.name, message.content))
                    if not workflow and not client_calls:
                        if checked and self._pending_view is None and self._agrees(
                                start.turn_id, cause, checked[-1], view, checked=True):
                            return  # the check computed an answer's result: agreement, as with any work
                        continue  # a tool round: the model reads the results
                    if self._pending_view is not None:  # new answers arrived while the tools ran
                        view, self._pending_view = self._pending_view, None
                        messages.append(prompts.injection_message(view, start.own_label))
                        if len(workflow) == 1 and workflow[0].name == VOTE:
                            continue  # a vote cast on an outdated view is worthless
                    ending = workflow[0].name if len(workflow) == 1 else "client tool call" if client_calls else None
                    if failed and ending is not None:
                        problem = (f"Your {ending} was not recorded: the {', '.join(failed)} call made with it "
                                   f"failed. Read its result, then make your {ending} again.")
                        messages.extend(self._refuse(start.turn_id, cause, c, f"not recorded: {problem}")
                                        for c in client_calls)
            if problem is None and not workflow and client_calls:  # a client tool call is this turn's answer
                problem = client_tools.problem(client_calls)
                if problem is None:
                    self.io.emit(AnswerProposed(
                        causation_id=cause, turn_id=start.turn_id, content=client_tools.encode(client_calls),
                        view_version=view.version,
                    ))
                    return
                messages.extend(ChatMessage(role="tool", content=problem, tool_call_id=c.id, name=c.name)
                                for c in client_calls)
            elif problem is None:
                problem = workflow_problem(workflow, view, start.vote_only, result.text)
                if problem is None:
                    call = workflow[0]
                    if call.name == NEW_ANSWER:
                        content = with_work(str(call.arguments[CONTENT]), result.preamble)
                        await self._answer(start, cause, content, view)
                    elif results.stated_result(result.text) or not checked:
                        self._vote(start.turn_id, cause, call, view, result.text)
                    else:  # no work written: the vote's own result is what its checks computed
                        self._vote(start.turn_id, cause, call, view, checked[-1], checked=True)
                    return

            if not self._corrected(start.turn_id, cause, (attempts := attempts + 1), problem):
                return
            correction = prompts.correction_message(problem, start.vote_only)
            self._ours.append(correction.content)
            messages.append(correction)

    async def _bare_turn(self, start: StartTurn) -> None:
        """A first answer asked as one call of the model would be (``backend.first_answer: bare``, or the prior's
        under ``orchestrator.prior_first_answer: bare``): the question alone, no tools; the reply is the answer.
        Such an agent is then the very baseline the team must not fall below, not a variant of it."""
        cause = start.msg_id
        messages = prompts.bare_messages(start.task, self.settings.own_system_message, start.history,
                                         self.settings.attachments)
        attempts = 0
        while True:
            self._deliver_notes(start.turn_id, cause, messages)  # the user's words, as in any turn
            request = ModelRequest(messages=tuple(messages), temperature=self.settings.temperature,
                                   max_tokens=self.settings.max_tokens)
            text = (await self._call(start.turn_id, cause, request)).text.strip()
            if text:
                await self._answer(start, cause, text, start.view)
                return
            if not self._corrected(start.turn_id, cause, (attempts := attempts + 1), "Your reply was empty."):
                return
            correction = prompts.think_again_message("Your reply was empty.")
            self._ours.append(correction.content)
            messages.append(correction)

    async def _program_turn(self, start: StartTurn) -> None:
        """A first answer as a program's output (``backend.first_answer: program``; PAL, Gao et al. 2022).

        One call asks for a short program that prints the answer; the program runs confined
        (``files/confined.py``), traced as a ``run_python`` call; the answer is the program and what it
        printed, its last line the result. A program that fails gives an answer that states no result,
        with the failure in it: it is seen, and it counts for no result."""
        cause = start.msg_id
        messages = prompts.program_messages(start.task, self.settings.own_system_message, start.history,
                                            self.settings.attachments)
        self._deliver_notes(start.turn_id, cause, messages)  # the user's words, as in any turn
        request = ModelRequest(messages=tuple(messages), temperature=self.settings.temperature,
                               max_tokens=self.settings.max_tokens)
        text = (await self._call(start.turn_id, cause, request)).text.strip()
        code = code_checks.program_code(text)
        call = ToolCall(id=f"program-{start.turn_id}", name=check_tools.RUN_PYTHON, arguments={"code": code})
        if not code.strip():
            reason = "not run: the reply holds no Python program"
            self._refuse(start.turn_id, cause, call, reason)
            await self._answer(start, cause, f"{text}\n\n[{reason}]", start.view, program=True)
            return
        self.io.emit(ToolCallRequested(causation_id=cause, turn_id=start.turn_id, call_id=call.id, name=call.name,
                                       arguments=call.arguments))
        run = await confined.run_python(code)
        shown = valid_text(run.text(), f"{call.name} result")
        self.io.emit(ToolCallResult(causation_id=cause, turn_id=start.turn_id, call_id=call.id, name=call.name,
                                    content=shown, is_error=not run.ok))
        await self._answer(start, cause, program_answer(code, run, start.task), start.view,
                           computed=bool(printed_lines(run)) and evidence.computed_value(code, run.stdout),
                           program=True)

    async def _two_phase_turn(self, start: StartTurn) -> None:
        """Free text (no tools, so the model reasons before committing), then a few-token decision."""
        cause = start.msg_id
        view = start.view
        messages = prompts.turn_messages(
            start.task, view, start.own_label, start.vote_only, self.settings.system_message, start.history,
            think_first=True, attachments=self.settings.attachments,
        )
        attempts = 0
        while True:
            self._deliver_notes(start.turn_id, cause, messages)  # safe point: before each free-text call
            self._deliver_finish(start, view, messages)
            request = ModelRequest(messages=tuple(messages), temperature=self.settings.temperature,
                                   max_tokens=self.settings.max_tokens)
            text = (await self._call(start.turn_id, cause, request)).text.strip()
            if text:
                break
            if not self._corrected(start.turn_id, cause, (attempts := attempts + 1), "Your reply was empty."):
                return
            correction = prompts.think_again_message("Your reply was empty.")
            self._ours.append(correction.content)
            messages.append(correction)
        messages.append(ChatMessage(role="assistant", content=text))
        if self._pending_view is not None:  # the work stands; the decision uses the newest view
            view, self._pending_view = self._pending_view, None
        if not view.answers and not start.vote_only:
            await self._answer(start, cause, text, view)  # nothing to vote for: the work is the answer
            return
        if self._agrees(start.turn_id, cause, text, view):
            return
        messages.append(prompts.decision_message(start.vote_only))
        while True:
            self._deliver_not_run(messages)
            request = ModelRequest(
                messages=tuple(messages), tools=prompts.decision_tools(view, start.vote_only),
                temperature=self.settings.temperature, max_tokens=DECISION_MAX_TOKENS, vote_targets=view.labels(),
            )
            result = await self._call(start.turn_id, cause, request)
            if self._pending_view is not None:
                view, self._pending_view = self._pending_view, None
                if self._agrees(start.turn_id, cause, text, view):
                    return
                continue  # decide again, on the view as it is now
            workflow = [c for c in result.calls if c.name in WORKFLOW_TOOLS]
            problem = workflow_problem(workflow, view, start.vote_only, result.text, need_content=False)
            if problem is None:
                if workflow[0].name == NEW_ANSWER:
                    await self._answer(start, cause, text, view)
                else:
                    self._vote(start.turn_id, cause, workflow[0], view, text)
                return
            if not self._corrected(start.turn_id, cause, (attempts := attempts + 1), problem):
                return
            correction = prompts.correction_message(problem, start.vote_only)
            self._ours.append(correction.content)
            messages += [ChatMessage(role="assistant", content=result.text), correction]

    def _corrected(self, turn_id: int, cause: str, attempt: int, problem: str) -> bool:
        """Trace a correction; False (and ``TurnFailed``) once the attempts are used up."""
        self.io.emit(TurnCorrection(causation_id=cause, turn_id=turn_id, attempt=attempt, problem=problem))
        if attempt >= self.settings.max_attempts:
            self.io.emit(TurnFailed(
                causation_id=cause, turn_id=turn_id,
                reason=f"no valid workflow call after {attempt} attempts: {problem}",
            ))
            return False
        return True

    async def _answer(self, start: StartTurn, cause: str, content: str, view: AnswerView,
                      computed: bool = False, program: bool = False) -> None:
        """Propose ``content`` as a new answer, unless it agrees with one in view (then that is a vote).

        In a code task (``io.check_code``) the answer is first run against the task's examples, here on
        the turn's loop, and the outcome goes with it: its behaviour, not its text, is what agrees.
        ``computed``: its result is what a program printed; ``program``: it answers a program request, printed
        or not (``_program_turn``)."""
        content = without_view_tags(content)
        check = (await self.io.check_code(start.task, content,
                                          run=self._traced_runner(start.turn_id, cause, "code_examples"))
                 if self.io.check_code is not None else None)
        if check is None and self._agrees(start.turn_id, cause, content, view):
            return
        self.io.emit(AnswerProposed(
            causation_id=cause, turn_id=start.turn_id, content=content.strip(), view_version=view.version,
            code_check=check, computed=computed, program=program,
        ))

    def _traced_runner(self, turn_id: int, cause: str, check: str) -> code_checks.ProgramRunner:
        """The runner a code check uses: each program run traced as a tool call (``check`` names the check
        tool), so the run is seen, and the supervisor counts it as work under its own deadline, not as
        silence (``SILENT_TOOLS``)."""
        runs = itertools.count(1)

        async def run(code: str, limits: confined.Limits) -> confined.ProgramRun:
            call_id = f"{check}-{turn_id}-{next(runs)}"
            self.io.emit(ToolCallRequested(causation_id=cause, turn_id=turn_id, call_id=call_id, name=check,
                                           arguments={"program_chars": len(code),
                                                      "wall_seconds": limits.wall_seconds}))
            ran = await confined.run_python(code, limits)
            self.io.emit(ToolCallResult(causation_id=cause, turn_id=turn_id, call_id=call_id, name=check,
                                        content=valid_text(ran.status(), f"{check} result"), is_error=not ran.ok))
            return ran
        return run

    def _agrees(self, turn_id: int, cause: str, text: str, view: AnswerView, checked: bool = False) -> bool:
        """Agreement is evidence: a result equal to an answer in view is a vote for that answer.

        ``checked``: ``text`` is what a check tool computed, not what the model wrote."""
        mine = results.final_result(text)
        same = next((a for a in view.answers if mine and results.final_result(a.content) == mine), None)
        if same is None:
            return False
        self.io.emit(VoteProposed(
            causation_id=cause, turn_id=turn_id, target=same.agent, reason=results.conclusion(text),
            view_version=view.version, agreement=text.strip(), target_content=same.content,
            own_result=mine, checked=checked,
        ))
        return True

    def _vote(self, turn_id: int, cause: str, call: ToolCall, view: AnswerView, work: str,
              checked: bool = False) -> None:
        """A cast vote; ``work`` is what the model wrote in the turn before it, whose result is the vote's own
        (``checked``: what a check tool computed in it)."""
        reason = str(call.arguments.get(REASON, "")).strip()
        if copies_ours(reason, self._ours):
            reason = ""  # a reason is the model's own words, never our correction text echoed back
        # The vote's own result: what its work concluded, else what its reason states ("9.9 is larger than
        # 9.11"), the labels it points at aside: a model that writes no working before its call still says
        # what it computed, and that, not the position of the answer it picked, is its evidence.
        names = tuple(name for a in view.answers for name in (a.label, a.agent))
        worked = results.stated_result(without_view_tags(work))
        own = worked or results.reason_result(reason, names, len(view.answers))
        self.io.emit(VoteProposed(
            causation_id=cause, turn_id=turn_id, target=vote_target(call.arguments.get(AGENT_ID)),
            reason=reason, view_version=view.version, own_result=own, checked=checked and bool(worked),
        ))

    async def _run_tool(self, turn_id: int, cause: str, call: ToolCall,
                        spec: ToolSpec | None) -> tuple[ChatMessage, bool]:
        """Run one tool call, traced; every failure is a tool result the model reads, never an exception."""
        self.io.emit(ToolCallRequested(
            causation_id=cause, turn_id=turn_id, call_id=call.id, name=call.name, arguments=call.arguments,
        ))
        bad = None if call.parse_error else tool_arguments.problem(spec, call.arguments)
        if call.parse_error:
            content, is_error = f"arguments were not valid JSON: {call.parse_error}", True
        elif bad is not None:
            content, is_error = f"{call.name}: {bad}", True
        elif self.io.call_tool is None:
            content, is_error = f"unknown tool {call.name!r}", True
        else:
            try:
                content, is_error = await self.io.call_tool(call.name, call.arguments)
            except (asyncio.CancelledError, BudgetDenied, ModelCallError):
                raise
            except Exception as exc:  # a tool's own failure is the model's to read, not the agent's death
                content, is_error = f"{call.name} failed: {type(exc).__name__}: {exc}", True
        content = valid_text(content, f"{call.name} result")
        self.io.emit(ToolCallResult(
            causation_id=cause, turn_id=turn_id, call_id=call.id, name=call.name, content=content, is_error=is_error,
        ))
        return ChatMessage(role="tool", content=content, tool_call_id=call.id, name=call.name), is_error

    def _refuse(self, turn_id: int, cause: str, call: ToolCall, reason: str) -> ChatMessage:
        """A call that is not run: traced like one that ran, with the reason as its (error) result."""
        self.io.emit(ToolCallRequested(
            causation_id=cause, turn_id=turn_id, call_id=call.id, name=call.name, arguments=call.arguments,
        ))
        self.io.emit(ToolCallResult(
            causation_id=cause, turn_id=turn_id, call_id=call.id, name=call.name, content=reason, is_error=True,
        ))
        return ChatMessage(role="tool", content=reason, tool_call_id=call.id, name=call.name)

    # -- the final presentation ---------------------------------------------------------------

    async def present(self, msg: PresentFinal) -> None:
        own = next((a.content for a in msg.view.answers if a.agent == msg.own_label), None)
        if own is not None and self.settings.client_tools and client_tools.decode(own) is not None:
            # A winning client tool call goes back as written: a presentation would turn it into prose.
            self.io.emit(FinalPresented(causation_id=msg.msg_id, turn_id=msg.turn_id, content=own))
            return
        self._not_run_note = None
        messages = prompts.present_messages(
            msg.task, msg.view, msg.votes, msg.own_label, msg.strategy == "synthesize",
            self.settings.system_message, msg.history, attachments=self.settings.attachments,
        )
        for _round in range(self.settings.max_tool_rounds + 1):  # the presenter may use its tools (write files)
            self._deliver_not_run(messages)
            request = ModelRequest(
                messages=tuple(messages), kind="present", temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens, tools=self.io.extra_tools if self.io.tools_in_present else (),
            )
            result = await self._call(msg.turn_id, msg.msg_id, request)
            if result.calls and not request.tools:  # nothing to run them with: traced, not dropped unseen
                for call in result.calls:
                    self._refuse(msg.turn_id, msg.msg_id, call, "not run: no tools are offered in the presentation")
            if not result.calls or not request.tools:
                break
            messages.append(ChatMessage(role="assistant", content=result.text, tool_calls=tuple(result.calls)))
            specs = {t.name: t for t in request.tools}
            for call in result.calls:
                messages.append((await self._run_tool(msg.turn_id, msg.msg_id, call, specs.get(call.name)))[0])
        self.io.emit(FinalPresented(causation_id=msg.msg_id, turn_id=msg.turn_id, content=result.text.strip()))

