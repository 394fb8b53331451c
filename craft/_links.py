"""Must-link and cannot-link constraints in CRAFT's pass.

A person may know that two rows belong together ("these two accounts are one
customer") or apart. CRAFT's distance is a cost per row and cluster, so a
constraint on the assignment is natural:

* **Must-link.** Rows joined by must-link pairs (transitively: their
  connected components) form a *unit*, assigned as one: to the cluster with
  the least sum of its rows' costs d_nk.
* **Cannot-link.** Two rows so paired never share a cluster. Units are
  assigned in the order of their first row, each to the cheapest cluster not
  holding a unit it cannot join that was assigned before it in this pass
  (COP-KMeans's greedy rule, Wagstaff et al. 2001). Where every cluster is
  barred, the unit opens a cluster of its own, set from its first row as the
  pass opens one, at the cost of a cluster (λ + D F0): hard constraints can
  always be met.

The pass places the units in :func:`craft._engine.assignment_pass` (in
memory; ``DaskCRAFT`` refuses links). Rows in no pair are assigned by the
ordinary pass first (openings included);
the units then take their clusters among all clusters after the pass. Each
pass so minimises every unit's cost given the units before it and the
clusters it starts from, and the update then minimises the objective given
the assignment: the objective of the constrained partitions, the paper's
with infeasible partitions left out, does not rise through an update, and a
run stops when no row changes cluster (or at ``max_iter``). As for
COP-KMeans, the greedy order makes a pass a heuristic for its step, not its
exact minimiser (``docs/numerics.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Most pairs of each kind a fit takes: each unit is placed by a Python step per pass.
MAX_PAIRS = 10_000


@dataclass(frozen=True)
class Links:
    """The units of must-linked rows and which units may not share a cluster, checked and ordered.

    ``units`` are tuples of row positions (each sorted), in the order of
    their first row; ``apart`` holds pairs ``(u, w)`` of unit indices with
    ``u < w`` that a cannot-link separates. Tuples, so that the options that
    carry them stay hashable values.
    """

    units: tuple[tuple[int, ...], ...]
    apart: tuple[tuple[int, int], ...]

    @classmethod
    def from_pairs(cls, must_link, cannot_link, n_samples: int) -> "Links":
        """The units and bars of validated pairs (see :func:`checked_pairs`); contradictions raise ``ValueError``."""
        parent = list(range(n_samples)) if (must_link or cannot_link) else []

        def root(row: int) -> int:
            while parent[row] != row:
                parent[row] = parent[parent[row]]
                row = parent[row]
            return row

        for a, b in must_link:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        involved = sorted({row for pair in (*must_link, *cannot_link) for row in pair})
        groups: dict[int, list[int]] = {}
        for row in involved:
            groups.setdefault(root(row), []).append(row)
        units = sorted((tuple(rows) for rows in groups.values()), key=lambda rows: rows[0])
        index = {row: u for u, rows in enumerate(units) for row in rows}
        apart = set()
        for a, b in cannot_link:
            u, w = index[a], index[b]
            if u == w:
                raise ValueError(f"rows {a} and {b} are cannot-linked but must-linked through a chain of must-links")
            apart.add((min(u, w), max(u, w)))
        return cls(tuple(units), tuple(sorted(apart)))

    def barred(self) -> list[list[int]]:
        """For each unit, the units before it that it may not share a cluster with."""
        before: list[list[int]] = [[] for _ in self.units]
        for u, w in self.apart:
            before[w].append(u)
        return before
