"""Pins and links, the person's constraints on a fit, checked against the table and the previous fit and put in
the engine's terms (``_engine.Pins``, ``craft._links.Links``) before a fit runs (``docs/numerics.md``, *Pins* and
*Must-link and cannot-link*)."""

from __future__ import annotations

import dataclasses
import numbers
from typing import TYPE_CHECKING

import numpy as np

from . import _engine
from ._links import MAX_PAIRS, Links
from ._warm_start import _WarmStart
from .exceptions import CraftInputError
from .schema import Schema

if TYPE_CHECKING:
    from .estimator import CRAFT


def _linked_options(model: CRAFT, options: _engine.Options, n_samples: int) -> _engine.Options:
    """``options`` with ``must_link`` and ``cannot_link`` checked against the table, as units (``craft._links``)."""
    must, cannot = list(model.must_link or ()), list(model.cannot_link or ())
    if not must and not cannot:
        return options
    if model.noise:
        raise CraftInputError("must_link and cannot_link do not go with noise=True: a linked row labelled noise "
                              "would leave its unit. Fit without noise, or without links.")
    for name, pairs in (("must_link", must), ("cannot_link", cannot)):
        if len(pairs) > MAX_PAIRS:
            raise CraftInputError(f"{name} holds {len(pairs):,} pairs; at most {MAX_PAIRS:,} (each unit is placed "
                                  "by a step of its own in every pass).")
        for pair in pairs:
            a, b = (int(row) for row in pair)
            if not (0 <= a < n_samples and 0 <= b < n_samples):
                raise CraftInputError(f"{name} pair {tuple(pair)} names a row beyond the table's {n_samples:,} rows "
                                      f"(positions 0..{n_samples - 1}).")
            if a == b:
                raise CraftInputError(f"{name} pair {tuple(pair)} pairs row {a} with itself.")
    shared = {tuple(sorted((int(a), int(b)))) for a, b in must} & {tuple(sorted((int(a), int(b)))) for a, b in cannot}
    if shared:
        raise CraftInputError(f"Rows {sorted(shared)[0]} are both must-linked and cannot-linked: give one of the two.")
    try:
        links = Links.from_pairs([(int(a), int(b)) for a, b in must], [(int(a), int(b)) for a, b in cannot], n_samples)
    except ValueError as error:
        raise CraftInputError(f"Contradictory links: {error}.") from None
    return dataclasses.replace(options, links=links)


def _pinned_options(model: CRAFT, options: _engine.Options, schema: Schema, warm: _WarmStart | None) -> _engine.Options:
    """``options`` with ``pins`` checked against the table and the previous fit, in the engine's terms."""
    if not model.pins:
        return options
    features = list(schema.numeric) + list(schema.categorical)
    position = {name: j for j, name in enumerate(features)}
    n_previous = warm.statistics.counts.shape[0] if warm is not None else 0
    every = np.zeros(len(features), dtype=np.int8)
    own = np.zeros((n_previous, len(features)), dtype=np.int8)
    for key, value in model.pins.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise CraftInputError(f"The pin {key!r} is invalid: a pin's key is (cluster or None, column name).")
        cluster, column = key
        if not isinstance(value, (bool, np.bool_)):
            raise CraftInputError(f"The pin {key!r}: {value!r} is invalid: it must be True (always selected) or False (never).")
        if str(column) not in position:
            why = "is ignored by the schema" if str(column) in schema.ignored else "is not a column of the table"
            raise CraftInputError(f"The pin {key!r} names column {column!r}, which {why}.")
        sign = 1 if value else -1
        if cluster is None:
            every[position[str(column)]] = sign
            continue
        if isinstance(cluster, bool) or not isinstance(cluster, numbers.Integral):
            raise CraftInputError(f"The pin {key!r} names cluster {cluster!r}: a cluster is a number of the previous fit, or None for every cluster.")
        if warm is None:
            raise CraftInputError(
                f"The pin {key!r} names cluster {cluster} of the previous fit, but this fit starts cold: pins on "
                "one cluster need warm_start=True and a previous fit on this table (cluster numbers are its own); "
                "None pins a column in every cluster."
            )
        if not 0 <= int(cluster) < n_previous:
            raise CraftInputError(f"The pin {key!r} names cluster {cluster}; the previous fit has clusters 0..{n_previous - 1}.")
        own[int(cluster), position[str(column)]] = sign
    clash = np.flatnonzero(((own * every[None, :]) < 0).any(axis=0))
    if clash.size:
        column = features[int(clash[0])]
        raise CraftInputError(
            f"Column {column!r} is pinned {'on' if every[clash[0]] > 0 else 'off'} in every cluster (None) and the "
            "other way in one cluster: give one of the two."
        )
    pins = _engine.Pins(tuple(int(v) for v in every), tuple(tuple(int(v) for v in row) for row in own) if own.any() else ())
    return dataclasses.replace(options, pinned=pins)
