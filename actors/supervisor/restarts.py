"""Restart policy in the Erlang/OTP style: backoff with jitter, and an intensity limit.

Kept apart from the supervisor so the arithmetic can be tested without threads.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from massgen.configs.schema import RestartPolicy


@dataclass
class RestartHistory:
    policy: RestartPolicy
    failures: deque[float] = field(default_factory=deque)
    rng: random.Random = field(default_factory=random.Random)

    def record_failure(self, now: float) -> float | None:
        """Note a failure at ``now``; return the delay before the next restart, or None to give up.

        Intensity: more than ``max_restarts`` failures inside ``window_seconds`` means the
        child keeps failing and restarting it again would only burn time and money.
        """
        self.failures.append(now)
        while self.failures and now - self.failures[0] > self.policy.window_seconds:
            self.failures.popleft()
        if len(self.failures) > self.policy.max_restarts:
            return None
        return self.delay(len(self.failures) - 1)

    def delay(self, attempt: int) -> float:
        base = min(self.policy.backoff_max_seconds, self.policy.backoff_base_seconds * (2**attempt))
        return float(base * (1 + self.rng.random() * 0.2))
