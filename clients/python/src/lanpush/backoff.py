"""Reconnect delays: exponential with jitter, so a gateway restart is not met by every client at once."""
from __future__ import annotations

import random as _random
from typing import Callable


class Backoff:
    """Delays in seconds: `initial` doubling (`factor`) up to `maximum`, each drawn from [d·(1−jitter), d].

    Some jitter spreads clients out; keeping half of each delay fixed (jitter 0.5) keeps them from hammering.
    The defaults are the TypeScript library's: 0.5 s doubling to 30 s.
    """

    def __init__(self, initial: float = 0.5, maximum: float = 30.0, factor: float = 2.0, jitter: float = 0.5,
                 random: Callable[[], float] = _random.random) -> None:
        self.initial = initial
        self.maximum = maximum
        self.factor = factor
        self.jitter = min(1.0, max(0.0, jitter))
        self._random = random
        self._attempt = 0

    def next(self) -> float:
        """The delay before the next attempt; each call counts as one more failure."""
        ceiling = min(self.maximum, self.initial * self.factor ** self._attempt)
        self._attempt += 1
        return ceiling * (1 - self.jitter * self._random())

    @property
    def attempts(self) -> int:
        """How many delays were handed out since the last reset."""
        return self._attempt

    def reset(self) -> None:
        """A session reached the live state: the next failure starts from the initial delay again."""
        self._attempt = 0
