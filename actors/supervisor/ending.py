"""How a run ends: a spent budget, every agent failed, or its outcome, recorded once as ``RunFinished``.

Every way out of the run comes here (the user, a deadline, the team converging, a budget, the
last agent failing), so the outcome is decided in one place: the winner when the team converged,
else the best answer so far, else a failure that says no agent produced an answer.
"""

from __future__ import annotations

from collections.abc import Callable

from massgen.actors.runtime.port import Clock
from massgen.actors.supervisor.state import Emitter, SupervisorState
from massgen.messages import CallPermit, ContextChanged, RunFinished, RunStatus


class RunEnding:
    def __init__(self, state: SupervisorState, out: Emitter, clock: Clock, stop: Callable[[], object]) -> None:
        """``stop``: stop the supervisor without waiting (its ``on_stop`` stops the children)."""
        self.state, self.out, self.clock, self.stop = state, out, clock, stop

    def permit(self) -> CallPermit:
        """The answer to a model call's ``CallPermitRequest``: granted and charged, or the run ends."""
        state = self.state
        reason = state.spent.exhausted()
        if reason is None:
            state.spent.charge_call()
            return CallPermit(granted=True)
        if state.phase == "presenting":
            self.finish("completed", f"the team converged; {reason}, so the winning answer is used as written",
                        presentation_not_used=f"{reason} before the presentation")
        else:
            self.finish("budget", reason)
        return CallPermit(granted=False, reason=reason)

    def all_failed(self) -> None:
        state = self.state
        causes = "; ".join(f"{a}: {c.last_error}" for a, c in state.children.items() if c.last_error)
        if state.coord.answers:
            self.finish("partial", f"every agent failed before the team converged ({causes})")
        else:
            self.finish("failed", f"every agent failed and no agent produced an answer ({causes})")

    def finish(self, status: RunStatus, reason: str, final: str | None = None, *,
               presentation_not_used: str = "") -> None:
        """``presentation_not_used``: why the presenter's text is not the final answer (see ``RunOutcome``)."""
        state = self.state
        if state.finished:
            return
        state.phase = "finished"
        converged = status == "completed"
        if converged and state.winner is not None:
            chosen = state.coord.latest(state.winner)
        else:
            chosen = state.coord.best_so_far(state.tally)
        if chosen is None:
            # Stopped by the user before any answer is still "interrupted" (exit 4), not a failure.
            status = "interrupted" if status == "interrupted" else "failed"
            if "no agent produced an answer" not in reason:
                reason = f"{reason}; no agent produced an answer"
        answer = final if final is not None else (chosen.content if chosen else None)
        files = state.run.files
        changed = files.changed() if files else None
        if changed is not None:  # what the presenter wrote in context paths, listed with the answer
            self.out.record(ContextChanged(**changed))
            answer = files.with_changes(answer, changed) if files else answer
        spent = state.spent
        self.out.record(RunFinished(
            status=status, reason=reason,
            winner=chosen.agent if chosen else None, winner_label=chosen.label if chosen else None,
            final_answer=answer,
            partial=not converged, elapsed_s=round(self.clock() - state.started, 3),
            model_calls=spent.calls, input_tokens=spent.input_tokens,
            output_tokens=spent.output_tokens, cost_usd=round(spent.cost_usd, 6),
            presentation_not_used=presentation_not_used,
        ))
        state.run.finish_recorded.set()
        self.stop()
