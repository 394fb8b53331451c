"""What several of the services share: a message as one sentence, a file's markers counted, the label's
place in a schema, and a labelling's scores against the label column.

Private to :mod:`explorer.services` (its modules import from here; nothing else does).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from craft import metrics
from craft.schema import Schema


def _markers(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{marker!r} ×{count:,}" for marker, count in counts.items())


def _sentence(text: str) -> str:
    text = text.strip()
    if not re.match(r"\w+=", text):  # "rho=0.3 must..." names a parameter: keep its case
        text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."



def _with_label(schema: Schema, label: str, reason: str) -> Schema:
    """``schema`` with ``label`` ignored for fitting and its reason saying why."""
    if label not in schema.reasons:
        # A column added after the schema was made (the label of an example) comes last.
        reasons = dict(schema.reasons)
        reasons[label] = reason
        return Schema(numeric=schema.numeric, categorical=schema.categorical,
                      ignored=schema.ignored + (label,), reasons=reasons)
    moved = schema.override(ignored=[label])
    reasons = dict(moved.reasons)
    reasons[label] = reason
    return Schema(numeric=moved.numeric, categorical=moved.categorical, ignored=moved.ignored, reasons=reasons)



def _scores(y, labels) -> dict:
    if y is None:
        return dict(purity=np.nan, nmi=np.nan, ari=np.nan)
    y = pd.Series(y).reset_index(drop=True)
    keep = y.notna().to_numpy()
    if keep.sum() == 0:
        return dict(purity=np.nan, nmi=np.nan, ari=np.nan)
    scores = metrics.evaluate(y[keep].astype(str).to_numpy(), np.asarray(labels)[keep])
    return dict(purity=scores["purity"], nmi=scores["nmi"], ari=scores["ari"])
