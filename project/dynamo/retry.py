"""Jittered exponential backoff for the retry loops around conditional writes."""

import random

from project.clock import clock


def backoff_delay(attempt: int, *, base: float = 0.01, cap: float = 0.5) -> float:
    """Full-jitter delay before retry number `attempt` (0-based)."""
    return random.uniform(0, min(cap, base * (2**attempt)))


def backoff_sleep(attempt: int, *, base: float = 0.01, cap: float = 0.5) -> None:
    clock.sleep(backoff_delay(attempt, base=base, cap=cap))
