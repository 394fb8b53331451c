"""Writing a model file: a fitted model's parameters, schema, encoder and fit as ``model.json`` and its arrays as
``arrays.npz`` (``docs/model-format.md`` describes every field)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import numbers
import zipfile
from typing import IO, Any

import numpy as np
import pandas as pd

from ._model_file import _ARRAYS, _JSON, FORMAT_NAME, FORMAT_VERSION
from ._version import __version__
from .encoding import Encoder
from .exceptions import CraftInputError
from .schema import Schema


def _write(target: IO[bytes], header: dict, arrays: bytes) -> None:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(_JSON, json.dumps(header, indent=1, allow_nan=False, default=_plain))
        # Already compressed by NumPy.
        archive.writestr(_ARRAYS, arrays, compress_type=zipfile.ZIP_STORED)


def _describe(model) -> tuple[dict, dict[str, np.ndarray]]:
    """The JSON header and the arrays of a fitted model."""
    encoder: Encoder = model.encoder_
    schema: Schema = model.schema_
    labels = model.labels_ if isinstance(model.labels_, np.ndarray) else None
    selection = model.selection_
    history = model.history_
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "craft_version": __version__,
        "estimator": type(model).__name__,
        "params": _params(model),
        "schema": _schema_fields(schema),
        "columns": [str(c) for c in model.feature_names_in_],
        "encoder": {
            "numeric": list(encoder.numeric),
            "categorical": list(encoder.categorical),
            "standardize": bool(encoder.standardize),
            "missing": encoder.missing,
            "levels": [[_level(value, name) for value in levels] for name, levels in zip(encoder.categorical,
                                                                                          encoder.levels_, strict=True)],
            "has_missing_level": [bool(h) for h in encoder.has_missing_level_],
            "n_imputed": dict(encoder.n_imputed_),
            "n_marginalised": dict(encoder.n_marginalised_),
        },
        "options": {
            **{f.name: getattr(model.options_, f.name) for f in dataclasses.fields(model.options_)
               if f.name not in ("terms", "pinned", "links")},
            "terms": dataclasses.asdict(model.options_.terms),
            "pinned": None if model.options_.pinned is None else dataclasses.asdict(model.options_.pinned),
            "links": None if model.options_.links is None else dataclasses.asdict(model.options_.links),
        },
        "fitted": {
            "lam": float(model.lam_),
            "rho": float(model.rho_),
            "n_clusters": int(model.n_clusters_),
            "objective": float(model.objective_),
            "n_iter": int(model.n_iter_),
            "converged": bool(model.converged_),
            "objective_terms": dataclasses.asdict(model.objective_terms_),
            "n_keep": None if selection.n_keep is None else [int(n) for n in selection.n_keep],
            "engine_features": list(model.engine_features_),
            "has_labels": labels is not None,
            "has_pins": True,
            "n_noise": int(getattr(model, "n_noise_", 0)),
        },
    }
    clusters, stats = model.clusters_, model.statistics_
    arrays = {
        "encoder.center": encoder.center_,
        "encoder.scale": encoder.scale_,
        "encoder.impute": encoder.impute_,
        "encoder.eta0": encoder.fitted_eta0_,
        "encoder.var": encoder.fitted_var_,
        **{f"clusters.{f.name}": getattr(clusters, f.name) for f in dataclasses.fields(clusters)},
        **{f"statistics.{f.name}": getattr(stats, f.name) for f in dataclasses.fields(stats)},
        **{f"selection.{name}": getattr(selection, name) for name in ("score", "rank", "criterion", "cut", "selected")},
        "feature_mask": model.feature_mask_,
        "pins": np.asarray(getattr(model, "pins_", np.zeros(model.feature_mask_.shape, dtype=np.int8)), dtype=np.int8),
        "cluster_sizes": model.cluster_sizes_,
        **{f"history.{name}": np.array([getattr(r, name) for r in history])
           for name in ("iteration", "objective", "n_clusters", "n_changed", "n_opened", "restart", "lam")},
        "history.mask_rows": np.array([r.feature_mask.shape[0] for r in history], dtype=np.int64),
        "history.feature_mask": (np.concatenate([r.feature_mask for r in history])
                                 if history else np.zeros((0, len(model.engine_features_)), dtype=bool)),
    }
    if labels is not None:
        arrays["labels"] = labels
    return header, {name: np.asarray(value) for name, value in arrays.items()}


def _plain(value):
    """A NumPy scalar (an option derived from a NumPy ``k``, say) as the Python number JSON writes."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _params(model) -> dict[str, Any]:
    """CRAFT's parameters as JSON values (a Generator seed is not kept: its state is not a value)."""
    from .estimator import CRAFT

    names = [name for name in inspect.signature(CRAFT.__init__).parameters if name != "self"]
    params = {name: getattr(model, name) for name in names}
    categorical = params["categorical"]
    if isinstance(categorical, Schema):
        params["categorical"] = {"schema": _schema_fields(categorical)}
    elif not isinstance(categorical, str):
        params["categorical"] = [c if isinstance(c, str) else int(c) for c in categorical]
    seed = params["random_state"]
    params["random_state"] = int(seed) if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) else None
    # JSON has no tuple keys: pins as [cluster or null, column, on], links as [row, row].
    params["pins"] = None if params["pins"] is None else [
        [None if cluster is None else int(cluster), str(column), bool(on)] for (cluster, column), on in params["pins"].items()
    ]
    for name in ("must_link", "cannot_link"):
        params[name] = None if params[name] is None else [[int(a), int(b)] for a, b in params[name]]
    return params


def _schema_fields(schema: Schema) -> dict:
    return {
        "numeric": list(schema.numeric),
        "categorical": list(schema.categorical),
        "ignored": list(schema.ignored),
        "reasons": [[column, reason] for column, reason in schema.reasons.items()],
    }


def _level(value, column: str) -> list:
    """A categorical level as ``[type, value]``: the type matters (the level 10 is not the level "10")."""
    if isinstance(value, (bool, np.bool_)):
        return ["bool", bool(value)]
    if isinstance(value, str):
        return ["str", value]
    if isinstance(value, numbers.Integral):
        return ["int", int(value)]
    if isinstance(value, numbers.Real):
        # repr reads back to the same float, infinities included, in plain JSON.
        return ["float", repr(float(value))]
    if isinstance(value, pd.Timestamp):
        return ["timestamp", value.isoformat()]
    raise CraftInputError(
        f"Categorical column {column!r} has a level of type {type(value).__name__} ({str(value)[:40]!r}), which a "
        "model file does not hold (text, integers, floats, booleans and timestamps only); convert the column to "
        "text before fitting to save the model."
    )
