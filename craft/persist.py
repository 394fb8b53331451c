"""Saved models: a fitted CRAFT in a file that holds data only, never code.

A model file is a zip archive of two members (``docs/model-format.md``
describes every field):

* ``model.json``: the format's name and version, the craft version that
  wrote it, the estimator's parameters, the schema (every column's role and
  reason), the encoder (numeric and categorical columns, standardisation,
  missing-cell handling, every categorical column's levels with their
  types) and the fit's scalars (λ, ρ, K, objective and its terms, ...).
* ``arrays.npz``: every array of the fit (scales, imputation values, the
  global tables η₀ and variances, the clusters, the statistics, the
  selection, the masks, the history and, when the fit held them in memory,
  the training labels), read with ``allow_pickle=False``.

Neither member is ever unpickled: JSON holds values only, and NumPy refuses
object arrays without pickle, so a file cannot run code when it is loaded.
A file of another format version is refused with a message naming both.

Examples
--------
>>> import io
>>> import pandas as pd
>>> import craft
>>> table = pd.DataFrame({"size": [1.0, 1.1, 0.9, 8.0, 8.2, 7.9],
...                       "colour": ["red", "red", "red", "blue", "blue", "blue"]})
>>> model = craft.CRAFT(k=2, random_state=0).fit(table)
>>> buffer = io.BytesIO()
>>> model.save(buffer)
>>> loaded = craft.load(buffer.getvalue())
>>> bool((loaded.predict(table) == model.predict(table)).all())
True
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import json
import numbers
import os
import zipfile
from typing import IO, Any

import numpy as np
import pandas as pd

from . import _engine
from .encoding import Encoder
from .exceptions import CraftInputError
from .priors import PriorTerms
from .schema import Schema

#: The name written in every model file, so that another zip is told apart.
FORMAT_NAME = "craft-model"
#: The format's version: a file is read only by a craft whose version this is.
#: Any change to the fields or their meaning raises it (``docs/model-format.md``).
FORMAT_VERSION = 1

_JSON = "model.json"
_ARRAYS = "arrays.npz"


def save(model, path_or_file: str | os.PathLike | IO[bytes]) -> None:
    """Write a fitted CRAFT model to a file (or a binary file object).

    Parameters
    ----------
    model : craft.CRAFT or craft.distributed.DaskCRAFT
        A fitted model. A dask fit's labels stay on its workers and are not
        saved (the loaded model's ``labels_`` is None).
    path_or_file : str, path or binary file object
        Where the zip archive goes (``.craft`` is a good extension).

    Raises
    ------
    CraftInputError
        If the model is not fitted, or a categorical level is of a type the
        format does not hold (text, integer, float, boolean, timestamp).
    """
    from .estimator import CRAFT

    if not isinstance(model, CRAFT) or not hasattr(model, "clusters_"):
        raise CraftInputError("Only a fitted craft.CRAFT (or DaskCRAFT) can be saved; call fit first.")
    header, arrays = _describe(model)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, allow_pickle=False, **arrays)
    if isinstance(path_or_file, (str, os.PathLike)):
        with open(path_or_file, "wb") as target:
            _write(target, header, buffer.getvalue())
    else:
        _write(path_or_file, header, buffer.getvalue())


def load(path_or_file_or_bytes: str | os.PathLike | IO[bytes] | bytes):
    """Read a model written by :func:`save`.

    Parameters
    ----------
    path_or_file_or_bytes : str, path, binary file object or bytes

    Returns
    -------
    craft.CRAFT
        A fitted in-memory model: ``predict``, ``assign``, ``cost_terms``
        and the inspection surface give what the saved model gave. A model
        fitted with ``DaskCRAFT`` loads as a ``CRAFT`` with the same fitted
        attributes (``labels_`` None); ``craft.distributed.assign_partitions``
        scores a dask DataFrame with it.

    Raises
    ------
    CraftInputError
        If the file is not a model file, is damaged, or is of another format
        version (the message names both versions).
    """
    source = _source(path_or_file_or_bytes)
    try:
        with zipfile.ZipFile(source) as archive:
            names = set(archive.namelist())
            if _JSON not in names or _ARRAYS not in names:
                raise CraftInputError(
                    f"{_name(path_or_file_or_bytes)} is a zip archive but not a CRAFT model file (it lacks "
                    f"{_JSON} or {_ARRAYS}); save a model with model.save(path)."
                )
            _check_unpacked_size(archive, path_or_file_or_bytes)
            header = _header(archive.read(_JSON), path_or_file_or_bytes)
            with archive.open(_ARRAYS) as member:
                arrays = _arrays(io.BytesIO(member.read()), path_or_file_or_bytes)
    except (zipfile.BadZipFile, EOFError, OSError) as error:
        if isinstance(error, FileNotFoundError):
            raise CraftInputError(f"No model file at {_name(path_or_file_or_bytes)}.") from None
        raise CraftInputError(
            f"{_name(path_or_file_or_bytes)} is not a CRAFT model file (not a readable zip archive: {error})."
        ) from None
    try:
        return _model(header, arrays)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise CraftInputError(
            f"{_name(path_or_file_or_bytes)} is a damaged CRAFT model file ({type(error).__name__}: {error})."
        ) from None


# ----------------------------------------------------------------------
# Writing


def _write(target: IO[bytes], header: dict, arrays: bytes) -> None:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(_JSON, json.dumps(header, indent=1, allow_nan=False, default=_plain))
        # Already compressed by NumPy.
        archive.writestr(_ARRAYS, arrays, compress_type=zipfile.ZIP_STORED)


def _describe(model) -> tuple[dict, dict[str, np.ndarray]]:
    """The JSON header and the arrays of a fitted model."""
    from . import __version__

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
            **{f.name: getattr(model.options_, f.name) for f in dataclasses.fields(model.options_) if f.name != "terms"},
            "terms": dataclasses.asdict(model.options_.terms),
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


# ----------------------------------------------------------------------
# Reading


def _source(given) -> IO[bytes]:
    if isinstance(given, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(given))
    if isinstance(given, (str, os.PathLike)):
        try:
            with open(given, "rb") as handle:
                return io.BytesIO(handle.read())
        except FileNotFoundError:
            raise CraftInputError(f"No model file at {str(given)!r}.") from None
        except OSError as error:
            raise CraftInputError(f"Cannot read the model file {str(given)!r}: {error.strerror or error}.") from None
    return given


def _name(given) -> str:
    return repr(str(given)) if isinstance(given, (str, os.PathLike)) else "The given data"


def _check_unpacked_size(archive: zipfile.ZipFile, given) -> None:
    """Refuse, before unpacking, members larger than half this machine's free memory (a zip bomb, say).

    ``zipfile`` reads no more than a member's declared size, so the declared
    sizes bound what loading can take.
    """
    from .limits import _available_memory

    declared = sum(archive.getinfo(name).file_size for name in (_JSON, _ARRAYS))
    limit = _available_memory() // 2
    if declared > limit:
        raise CraftInputError(
            f"{_name(given)} unpacks to {declared:,} bytes, more than this machine loads ({limit:,} bytes, half its "
            "free memory); a CRAFT model holds a few numbers per cluster and feature (and, fitted in memory, one "
            "label a row), so this file is not one this machine can load."
        )


def _header(raw: bytes, given) -> dict:
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CraftInputError(f"{_name(given)} is a damaged CRAFT model file ({_JSON} is not JSON: {error}).") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise CraftInputError(f"{_name(given)} is not a CRAFT model file ({_JSON} does not name the format "
                              f"{FORMAT_NAME!r}).")
    version = header.get("format_version")
    if version != FORMAT_VERSION:
        from . import __version__

        raise CraftInputError(
            f"{_name(given)} is a CRAFT model file of format version {version!r} (written by craft "
            f"{header.get('craft_version', 'unknown')}); this craft ({__version__}) reads format version "
            f"{FORMAT_VERSION} only. Load it with the craft version that wrote it, or fit the model again."
        )
    return header


def _arrays(member: IO[bytes], given) -> dict[str, np.ndarray]:
    if not zipfile.is_zipfile(member):  # NumPy would take any other bytes for a pickle
        raise CraftInputError(f"{_name(given)} is a damaged CRAFT model file ({_ARRAYS} is not a NumPy archive).")
    member.seek(0)
    try:
        with np.load(member, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except ValueError as error:  # object arrays need pickle, which is never allowed
        raise CraftInputError(f"{_name(given)} holds an array that cannot be read without pickle ({error}); "
                              "a CRAFT model file never does, so it is refused.") from None
    except (OSError, zipfile.BadZipFile, EOFError) as error:
        raise CraftInputError(f"{_name(given)} is a damaged CRAFT model file ({_ARRAYS}: {error}).") from None
    return arrays


def _model(header: dict, arrays: dict[str, np.ndarray]):
    """The fitted CRAFT a header and its arrays describe, shapes checked."""
    from .estimator import CRAFT

    params = dict(header["params"])
    if isinstance(params["categorical"], dict):
        params["categorical"] = _schema_from(params["categorical"]["schema"])
    model = CRAFT(**params)
    spec = header["encoder"]
    encoder = Encoder(list(spec["numeric"]), list(spec["categorical"]), bool(spec["standardize"]), spec["missing"])
    encoder.center_ = _float(arrays, "encoder.center")
    encoder.scale_ = _float(arrays, "encoder.scale")
    encoder.impute_ = _float(arrays, "encoder.impute")
    encoder.fitted_eta0_ = _float(arrays, "encoder.eta0")
    encoder.fitted_var_ = _float(arrays, "encoder.var")
    encoder.levels_ = [[_level_value(item) for item in levels] for levels in spec["levels"]]
    encoder.has_missing_level_ = [bool(h) for h in spec["has_missing_level"]]
    encoder.n_imputed_ = {str(k): int(v) for k, v in spec["n_imputed"].items()}
    encoder.n_marginalised_ = {str(k): int(v) for k, v in spec["n_marginalised"].items()}
    options_spec = dict(header["options"])
    terms = PriorTerms(**options_spec.pop("terms"))
    options = _engine.Options(terms=terms, **options_spec)
    clusters = _engine.Clusters(**{f.name: _float(arrays, f"clusters.{f.name}") for f in dataclasses.fields(_engine.Clusters)})
    stats = _engine.Statistics(**{f.name: np.asarray(arrays[f"statistics.{f.name}"])
                                  for f in dataclasses.fields(_engine.Statistics)})
    fitted = header["fitted"]
    _check_shapes(encoder, clusters, len(fitted["engine_features"]), int(fitted["n_clusters"]))
    n_keep = fitted["n_keep"]
    selection = _engine.Selection(
        **{name: arrays[f"selection.{name}"] for name in ("score", "rank", "criterion", "cut", "selected")},
        n_keep=None if n_keep is None else (int(n_keep[0]), int(n_keep[1])),
    )
    schema = _schema_from(header["schema"])
    values = {
        "schema_": schema,
        "encoder_": encoder,
        "n_imputed_": dict(encoder.n_imputed_),
        "n_marginalised_": dict(encoder.n_marginalised_),
        "feature_names_in_": np.asarray(header["columns"], dtype=object),
        "n_features_in_": len(header["columns"]),
        "engine_features_": list(fitted["engine_features"]),
        "lam_": float(fitted["lam"]),
        "options_": options,
        "clusters_": clusters,
        "n_clusters_": int(fitted["n_clusters"]),
        "objective_": float(fitted["objective"]),
        "n_iter_": int(fitted["n_iter"]),
        "converged_": bool(fitted["converged"]),
        "history_": _history(arrays),
        "rho_": float(fitted["rho"]),
        "cluster_sizes_": np.asarray(arrays["cluster_sizes"], dtype=np.int64),
        "feature_mask_": np.asarray(arrays["feature_mask"], dtype=bool),
        "statistics_": stats,
        "selection_": selection,
        "objective_terms_": _engine.ObjectiveTerms(**{k: float(v) for k, v in fitted["objective_terms"].items()}),
        "labels_": np.asarray(arrays["labels"], dtype=np.int64) if fitted["has_labels"] else None,
    }
    for name, value in values.items():
        setattr(model, name, value)
    return model


def _float(arrays: dict[str, np.ndarray], name: str) -> np.ndarray:
    array = arrays[name]
    if array.dtype.kind not in "fiub":
        raise ValueError(f"array {name!r} has dtype {array.dtype}, not numbers")
    return array.astype(np.float64, copy=False)


def _check_shapes(encoder: Encoder, clusters: _engine.Clusters, n_features: int, n_clusters: int) -> None:
    """Refuse arrays that do not fit together (a damaged or hand-edited file)."""
    n_numeric, n_levels = len(encoder.numeric), sum(len(v) + h for v, h in zip(encoder.levels_,
                                                                                encoder.has_missing_level_, strict=True))
    expected = {
        "clusters.means": ((n_clusters, n_numeric), clusters.means.shape),
        "clusters.variances": ((n_clusters, n_numeric), clusters.variances.shape),
        "clusters.log_eta": ((n_clusters, n_levels), clusters.log_eta.shape),
        "clusters.weights": ((n_clusters, n_features), clusters.weights.shape),
        "encoder.eta0": ((n_levels,), encoder.fitted_eta0_.shape),
        "encoder.scale": ((n_numeric,), encoder.scale_.shape),
    }
    wrong = [f"{name} has shape {got}, expected {want}" for name, (want, got) in expected.items() if want != got]
    if n_features != n_numeric + len(encoder.categorical):
        wrong.append(f"{n_features} engine features for {n_numeric + len(encoder.categorical)} encoded columns")
    if wrong:
        raise ValueError("; ".join(wrong))


def _history(arrays: dict[str, np.ndarray]) -> list[_engine.IterationRecord]:
    masks = np.split(np.asarray(arrays["history.feature_mask"], dtype=bool),
                     np.cumsum(arrays["history.mask_rows"])[:-1]) if arrays["history.mask_rows"].size else []
    return [
        _engine.IterationRecord(
            iteration=int(arrays["history.iteration"][i]),
            objective=float(arrays["history.objective"][i]),
            n_clusters=int(arrays["history.n_clusters"][i]),
            n_changed=int(arrays["history.n_changed"][i]),
            n_opened=int(arrays["history.n_opened"][i]),
            feature_mask=masks[i],
            labels=None,
            restart=int(arrays["history.restart"][i]),
            lam=float(arrays["history.lam"][i]),
        )
        for i in range(len(masks))
    ]


def _schema_from(fields: dict) -> Schema:
    return Schema(
        numeric=tuple(fields["numeric"]),
        categorical=tuple(fields["categorical"]),
        ignored=tuple(fields["ignored"]),
        reasons={str(column): str(reason) for column, reason in fields["reasons"]},
    )


def _level_value(item: list):
    kind, value = item
    readers = {"str": str, "int": int, "float": float, "bool": bool, "timestamp": pd.Timestamp}
    if kind not in readers or (kind == "bool" and not isinstance(value, bool)):
        raise ValueError(f"level {item!r} is of no known type")
    return readers[kind](value)
