"""A circuit breaker per (endpoint, model), shared by the backends of one run.

When an endpoint fails again and again, every agent using it would otherwise keep
paying first-byte deadlines and backoff; the breaker answers at once instead. The
registry belongs to a run (``RunContext.breakers``), never to the process: one run's
faults must not fail the next run, and one model's faults not another's. After
``threshold`` consecutive failures it opens (or at once, ``trip``, when one call has used up
all its attempts on faults of the endpoint); after ``cooldown_s`` it lets exactly one
probe through (half-open): success closes it, failure opens it for another cool-down.
Agents run on their own threads, so the state is guarded by a lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal

State = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    def __init__(self, threshold: int = 5, cooldown_s: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._probe_in_flight = False
        self._answered = False
        self._tripped_by = ""
        self._kinds_since_success: set[str] = set()  # of the failures since the last success

    @property
    def never_reached(self) -> bool:
        """Tripped because no attempt could connect, and no call through it ever succeeded (in this run: a
        run has its own breakers): a wrong URL or a server that is not running, not a passing fault."""
        with self._lock:
            return self._tripped_by == "connection" and not self._answered

    @property
    def answered(self) -> bool:
        """Whether a call through this breaker ever succeeded."""
        with self._lock:
            return self._answered

    @property
    def state(self) -> State:
        with self._lock:
            return self._state_locked()

    def _state_locked(self) -> State:
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at >= self.cooldown_s:
            return "half_open"
        return "open"

    def allow(self) -> bool:
        """May a call go out now? In half-open state only the first caller (the probe) may."""
        with self._lock:
            state = self._state_locked()
            if state == "closed":
                return True
            if state == "half_open" and not self._probe_in_flight:
                self._probe_in_flight = True
                return True
            return False

    def retry_in(self) -> float:
        """Seconds until the next probe may go out (0 when closed)."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.cooldown_s - (self._clock() - self._opened_at))

    def record_success(self) -> None:
        with self._lock:
            self._answered = True
            self._failures = 0
            self._kinds_since_success.clear()
            self._opened_at = None
            self._probe_in_flight = False

    def record_failure(self, kind: str = "") -> None:
        """One failed attempt of ``kind`` (``connection``: nothing could connect). The breaker opens at the
        threshold; opened so by connection failures alone, it was never reached, as if ``trip`` had opened it:
        the attempts of several calls at once reach the threshold before any one call has used its own."""
        with self._lock:
            self._failures += 1
            self._kinds_since_success.add(kind)
            if self._probe_in_flight or self._failures >= self.threshold:
                if self._opened_at is None or self._probe_in_flight:
                    self._tripped_by = "connection" if self._kinds_since_success == {"connection"} else kind
                self._opened_at = self._clock()
            self._probe_in_flight = False

    def trip(self, kind: str = "") -> None:
        """Open now: a call used all its attempts on this endpoint's faults (``Retrier``), so
        the next calls wait for the cool-down instead of each paying the same attempts again.
        ``kind``: the failure's kind (``connection``: nothing could connect)."""
        with self._lock:
            self._tripped_by = kind
            self._failures = max(self._failures, self.threshold)
            self._opened_at = self._clock()
            self._probe_in_flight = False

    def release(self) -> None:
        """A call ended with no verdict (cancelled): let another probe go out."""
        with self._lock:
            self._probe_in_flight = False


class BreakerRegistry:
    """One breaker per key: ``scheme://host:port`` of the base URL, then the model (see ``breaker_key``)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._breakers: dict[str, CircuitBreaker] = {}

    def get(self, endpoint: str, threshold: int, cooldown_s: float) -> CircuitBreaker:
        with self._lock:
            breaker = self._breakers.get(endpoint)
            if breaker is None:
                breaker = CircuitBreaker(threshold, cooldown_s, self._clock)
                self._breakers[endpoint] = breaker
            return breaker


def breaker_key(endpoint: str, model: str) -> str:
    """The unit a breaker protects: one model on one endpoint."""
    return f"{endpoint} {model}"
