"""The one retry policy for conflicts with other writers: a save refused by the store's version
check, a read torn by another writer's save, PostgreSQL's concurrent table set-up."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Retry:
    """`attempts` tries at most, with a random pause after each conflict, longer each time, so
    that contending writers spread out instead of colliding again in lock step."""

    attempts: int = 30
    #: conflicts after which a writer takes the writers' turn for its next tries
    #: (ledger/infrastructure/writer_turn.py), so that it cannot lose again
    exclusive_after: int = 3
    longest_pause: float = 0.05  # seconds
    first_pause: float = 0.001

    def tries(self) -> range:
        """The attempt numbers, from 0."""
        return range(self.attempts)

    def last(self, attempt: int) -> bool:
        """Whether `attempt` is the last one allowed."""
        return attempt + 1 >= self.attempts

    def pause(self, attempt: int) -> None:
        """Wait a random moment up to `first_pause · 2^attempt`, at most `longest_pause`."""
        time.sleep(random.uniform(0, min(self.longest_pause, self.first_pause * 2**attempt)))


RETRY = Retry()
