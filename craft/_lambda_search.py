"""The exact-k λ search as a state machine: which λ to try next, given what the last one gave.

``CRAFT(k=...)`` looks for a λ whose fit has exactly k clusters: start at
the farthest-first λ, bracket by doubling (K above k) or halving (K below),
then bisect on log λ. Written as a function of the last outcome only, the
search can be asked ahead of time where it would go for either outcome, so
that a spare thread runs that fit while the current one runs
(``CRAFT._search_lambda``). Only the *sign* of K - k steers it, so a step has
two possible successors, and the fits it asks for, in order, are those of
the sequential search whatever ran ahead.
"""

from __future__ import annotations

import dataclasses

import numpy as np

#: Most doublings (or halvings) while bracketing, and most bisections after.
MAX_BRACKET_STEPS = 40
MAX_BISECTIONS = 30
#: Bisection stops when the bracket's ends are this close in ratio.
BRACKET_RATIO = 1.0 + 1e-6


@dataclasses.dataclass(frozen=True)
class SearchStep:
    """Where the search stands: the λ to try now, the bracket so far, and how many steps its phase has taken.

    ``phase`` is ``"start"``, ``"up"`` (doubling: K was above k),
    ``"down"`` (halving: K was below k), ``"bisect"``, or ``"done"`` (no λ
    left to try; ``lam`` is then the last one tried).
    """

    phase: str
    lam: float
    low: float | None = None
    high: float | None = None
    steps: int = 1

    @property
    def done(self) -> bool:
        return self.phase == "done"

    def after(self, found: int, target: int) -> "SearchStep":
        """The next step once the fit at ``lam`` gave ``found`` clusters (for a target of ``target``)."""
        if found == target:
            return self._finished()
        if self.phase == "start":
            if found > target:
                return SearchStep("up", self.lam * 2.0, low=self.lam)
            return SearchStep("down", self.lam / 2.0, high=self.lam)
        if self.phase == "up":
            assert self.low is not None  # the start or the last doubling
            if found < target:
                return self._bisect(self.low, self.lam)
            if self.steps >= MAX_BRACKET_STEPS:
                return self._finished()
            return SearchStep("up", self.lam * 2.0, low=self.lam, steps=self.steps + 1)
        if self.phase == "down":
            assert self.high is not None  # the start or the last halving
            if found > target:
                return self._bisect(self.lam, self.high)
            if self.steps >= MAX_BRACKET_STEPS:
                return self._finished()
            return SearchStep("down", self.lam / 2.0, high=self.lam, steps=self.steps + 1)
        if self.phase == "bisect":
            assert self.low is not None and self.high is not None  # set on entering the phase
            low, high = (self.lam, self.high) if found > target else (self.low, self.lam)
            if high / low < BRACKET_RATIO or self.steps >= MAX_BISECTIONS:
                return self._finished()
            return SearchStep("bisect", float(np.sqrt(low * high)), low=low, high=high, steps=self.steps + 1)
        raise ValueError(f"the search is {self.phase!r}: no step follows")

    def successors(self, target: int) -> list["SearchStep"]:
        """The steps that may follow this one (K above k, then K below k), those that try a λ."""
        return [step for step in (self.after(target + 1, target), self.after(target - 1, target)) if not step.done]

    def _bisect(self, low: float, high: float) -> "SearchStep":
        return SearchStep("bisect", float(np.sqrt(low * high)), low=low, high=high)

    def _finished(self) -> "SearchStep":
        return dataclasses.replace(self, phase="done")
