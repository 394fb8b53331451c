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
  the training labels).

Neither member is ever unpickled: JSON holds values only, and each array is
read from its ``.npy`` header and bytes here, never through NumPy's pickle
path, so a file cannot run code when it is loaded. A file is untrusted
input: every size it declares is bounded before anything is unpacked, every
field of ``model.json`` is typed, every array's shape and dtype are checked
against ``model.json`` before its bytes are read, and values a fit never
gives are refused (``docs/model-format.md`` lists each check). A file of
another format version is refused with a message naming both.

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
import hashlib
import inspect
import io
import json
import numbers
import os
import stat
import zipfile
from typing import IO, Any

import numpy as np
import pandas as pd

from . import _engine
from .encoding import MISSING_MODES, Encoder
from ._version import __version__
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
    # Tells arrays damaged or replaced after saving from a model.json edited by hand (docs/model-format.md).
    header["arrays_sha256"] = hashlib.sha256(buffer.getvalue()).hexdigest()
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
        If the path is not a regular file, the file is not a model file, is
        damaged or edited into one no fit writes (a shape, dtype or value
        that does not fit the rest: each check is listed in
        ``docs/model-format.md``), declares more than this machine loads, or
        is of another format version (the message names both versions). No
        other exception leaves the loader.
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
            raw_arrays = archive.read(_ARRAYS)
        return _model(header, raw_arrays, path_or_file_or_bytes)
    except CraftInputError:
        raise
    except FileNotFoundError:
        raise CraftInputError(f"No model file at {_name(path_or_file_or_bytes)}.") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as error:
        raise CraftInputError(
            f"{_name(path_or_file_or_bytes)} is not a CRAFT model file (not a readable zip archive: {error})."
        ) from None
    except _Damaged as error:
        raise CraftInputError(f"{_name(path_or_file_or_bytes)} is a damaged CRAFT model file ({error}).") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError, RecursionError,
            RuntimeError, NotImplementedError, MemoryError) as error:
        # A safety net: every check above should have named the problem first.
        raise CraftInputError(
            f"{_name(path_or_file_or_bytes)} is a damaged CRAFT model file ({type(error).__name__}: "
            f"{str(error)[:200]})."
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


# ----------------------------------------------------------------------
# Reading
#
# A model file is untrusted input: every byte may be hostile. The reader
# therefore (1) bounds what it unpacks by limits of its own, never by what
# the file claims; (2) reads model.json with every field typed and every
# number finite; (3) derives from model.json the shape and dtype of every
# array, and reads an array's header and checks both before it reads the
# array's bytes, so no kernel ever sees an array of another shape; (4)
# refuses values a fit cannot produce. Everything it refuses is a
# CraftInputError; ``_Damaged`` carries a reason to ``load``, which names the file.

#: Most bytes ``model.json`` may unpack to. A model's JSON holds a few names per
#: column and one entry per categorical level: 100,000 columns (``craft.limits.MAX_COLUMNS``)
#: with long names and their reasons take a few tens of megabytes.
MAX_JSON_BYTES = 256 * 2**20
#: Most digits of an integer in ``model.json`` (a seed is the longest, 2**128 has 39).
_MAX_INT_DIGITS = 100
_COMPRESSIONS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


class _Damaged(ValueError):
    """Why a model file cannot be a model :func:`save` wrote (``load`` names the file)."""


def _source(given) -> IO[bytes]:
    if isinstance(given, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(given))
    if isinstance(given, (str, os.PathLike)):
        from .limits import _available_memory

        try:
            # stat before open: opening a FIFO blocks until a writer comes, and a device never ends.
            info = os.stat(given)
            if stat.S_ISDIR(info.st_mode):
                raise CraftInputError(f"Cannot read the model file {str(given)!r}: it is a folder.")
            if not stat.S_ISREG(info.st_mode):
                raise CraftInputError(
                    f"Cannot read the model file {str(given)!r}: it is not a regular file (a pipe, a device or a "
                    "socket); copy the model into a file and give its path."
                )
            limit = _available_memory() // 2
            if info.st_size > limit:
                raise CraftInputError(
                    f"Cannot read the model file {str(given)!r}: it is {info.st_size:,} bytes, more than this "
                    f"machine loads ({limit:,} bytes, half its free memory)."
                )
            with open(given, "rb") as handle:
                return io.BytesIO(handle.read(info.st_size + 1))
        except FileNotFoundError:
            raise CraftInputError(f"No model file at {str(given)!r}.") from None
        except OSError as error:
            raise CraftInputError(f"Cannot read the model file {str(given)!r}: {error.strerror or error}.") from None
    return given


def _name(given) -> str:
    return repr(str(given)) if isinstance(given, (str, os.PathLike)) else "The given data"


def _check_member(info: zipfile.ZipInfo, where: str) -> None:
    """Refuse an encrypted member or one compressed by a method this reader does not unpack."""
    if info.flag_bits & 0x1:
        raise _Damaged(f"{where}{info.filename!r} is encrypted; a CRAFT model file never is")
    if info.compress_type not in _COMPRESSIONS:
        raise _Damaged(f"{where}{info.filename!r} is compressed by zip method {info.compress_type}; a CRAFT model "
                       "file is stored or deflated only")


def _check_unpacked_size(archive: zipfile.ZipFile, given) -> None:
    """Refuse, before unpacking, members larger than half this machine's free memory (a zip bomb, say).

    ``zipfile`` reads no more than a member's declared size, so the declared
    sizes bound what loading can take; ``model.json`` has a bound of its own,
    :data:`MAX_JSON_BYTES`.
    """
    from .limits import _available_memory

    for name in (_JSON, _ARRAYS):
        _check_member(archive.getinfo(name), "")
    declared = sum(archive.getinfo(name).file_size for name in (_JSON, _ARRAYS))
    limit = _available_memory() // 2
    if declared > limit:
        raise CraftInputError(
            f"{_name(given)} unpacks to {declared:,} bytes, more than this machine loads ({limit:,} bytes, half its "
            "free memory); a CRAFT model holds a few numbers per cluster and feature (and, fitted in memory, one "
            "label a row), so this file is not one this machine can load."
        )
    size = archive.getinfo(_JSON).file_size
    if size > MAX_JSON_BYTES:
        raise CraftInputError(
            f"{_name(given)} declares a {_JSON} of {size:,} bytes, more than a model's header holds "
            f"({MAX_JSON_BYTES:,} bytes: names, reasons and levels); it is not read."
        )


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _Damaged(f"{_JSON} holds an integer of {len(text)} digits; a model's integers have at most "
                       f"{_MAX_INT_DIGITS}")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not np.isfinite(value):
        raise _Damaged(f"{_JSON} holds the number {text[:40]}, which is not finite as a float")
    return value


def _json_constant(text: str):
    raise _Damaged(f"{_JSON} holds {text}, which a model file never does (JSON has no {text})")


def _header(raw: bytes, given) -> dict:
    try:
        header = json.loads(raw.decode("utf-8"), parse_int=_json_int, parse_float=_json_float,
                            parse_constant=_json_constant)
    except _Damaged as error:
        raise CraftInputError(f"{_name(given)} is a damaged CRAFT model file ({error}).") from None
    except RecursionError:  # the parser counts its depth and stops cleanly at Python's recursion limit
        raise CraftInputError(f"{_name(given)} is a damaged CRAFT model file ({_JSON} nests lists or objects "
                              "thousands of levels deep; the format nests 4).") from None
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as error:
        raise CraftInputError(f"{_name(given)} is a damaged CRAFT model file ({_JSON} is not JSON: {error}).") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise CraftInputError(f"{_name(given)} is not a CRAFT model file ({_JSON} does not name the format "
                              f"{FORMAT_NAME!r}).")
    version = header.get("format_version")
    # type() and not ==: 1.0 and true equal 1 in Python, but a file that writes them was not written by save.
    if type(version) is not int or version != FORMAT_VERSION:
        shown = _shown(version) if isinstance(version, (int, float, bool, type(None))) else f"of type {type(version).__name__}"
        written_by = header.get("craft_version", "unknown")
        written_by = written_by[:40] if isinstance(written_by, str) else "unknown"
        raise CraftInputError(
            f"{_name(given)} is a CRAFT model file of format version {shown} (written by craft "
            f"{written_by}); this craft ({__version__}) reads format version "
            f"{FORMAT_VERSION} only. Load it with the craft version that wrote it, or fit the model again."
        )
    return header


# -- typed fields of model.json ----------------------------------------


def _field(mapping, key: str, where: str):
    if not isinstance(mapping, dict):
        raise _Damaged(f"{where} is a {type(mapping).__name__}, not an object")
    if key not in mapping:
        raise _Damaged(f"{where} lacks {key!r}")
    return mapping[key]


def _int(value, where: str, low: int | None = 0, high: int | None = None) -> int:
    if type(value) is not int:
        raise _Damaged(f"{where} is {_shown(value)}, not an integer")
    if (low is not None and value < low) or (high is not None and value > high):
        raise _Damaged(f"{where} is {value}, outside [{low}, {'...' if high is None else high}]")
    return value


def _real(value, where: str, *, positive: bool = False, nonnegative: bool = False) -> float:
    if type(value) not in (int, float):
        raise _Damaged(f"{where} is {_shown(value)}, not a number")
    value = float(value)
    if not np.isfinite(value) or (positive and not value > 0) or (nonnegative and not value >= 0):
        raise _Damaged(f"{where} is {value!r}, which a fit never gives"
                       + (" (it must be > 0)" if positive else " (it must be >= 0)" if nonnegative else ""))
    return value


def _bool(value, where: str) -> bool:
    if type(value) is not bool:
        raise _Damaged(f"{where} is {_shown(value)}, not true or false")
    return value


def _str(value, where: str) -> str:
    if type(value) is not str:
        raise _Damaged(f"{where} is {_shown(value)}, not text")
    return value


def _names(value, where: str) -> list[str]:
    """A list of distinct column names."""
    if type(value) is not list:
        raise _Damaged(f"{where} is {_shown(value)}, not a list")
    names = [_str(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})[:5] if len(names) < 10_000 else "some names"
        raise _Damaged(f"{where} lists {twice} more than once")
    return names


def _shown(value) -> str:
    text = json.dumps(value) if isinstance(value, (bool, type(None), int, float, str)) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _model(header: dict, raw_arrays: bytes, given):
    """The fitted CRAFT a header and its arrays describe, every field and array checked first."""
    checksum = header.get("arrays_sha256")
    if checksum is not None:
        if _str(checksum, "arrays_sha256") != hashlib.sha256(raw_arrays).hexdigest():
            raise _Damaged(f"{_ARRAYS} is not the one {_JSON} was written with (its SHA-256 differs from "
                           "arrays_sha256): the arrays were damaged or replaced after saving")
    model, from_params = _estimator(header)
    columns = _names(_field(header, "columns", _JSON), "columns")
    schema = _schema_from(_field(header, "schema", _JSON), "schema")
    encoder = _encoder(_field(header, "encoder", _JSON), schema, columns, model.missing)
    engine_features = list(encoder.numeric) + list(encoder.categorical)
    options = _options(_field(header, "options", _JSON), from_params)
    fitted = _fitted(_field(header, "fitted", _JSON), options, model, encoder)
    # Every array's shape and dtype follow from the header, and are checked before its bytes are read.
    n_levels = sum(len(v) + h for v, h in zip(encoder.levels_, encoder.has_missing_level_, strict=True))
    n_clusters = fitted["n_clusters_"]
    arrays = _arrays(raw_arrays, _expected(len(encoder.numeric), n_levels, len(engine_features), n_clusters,
                                           len(columns)),
                     optional=({"labels"} if fitted["has_labels"] else set()) | ({"pins"} if fitted["has_pins"] else set()))
    if fitted["has_labels"] != ("labels" in arrays):
        raise _Damaged(f"fitted.has_labels is {str(fitted['has_labels']).lower()} but {_ARRAYS} "
                       f"{'lacks' if fitted['has_labels'] else 'holds'} labels")
    encoder.center_ = _finite(arrays, "encoder.center")
    encoder.scale_ = _finite(arrays, "encoder.scale", positive=True)
    encoder.impute_ = _finite(arrays, "encoder.impute")
    encoder.fitted_eta0_ = _finite(arrays, "encoder.eta0", low=0.0, high=1.0)
    encoder.fitted_var_ = _finite(arrays, "encoder.var", low=0.0)
    clusters = _engine.Clusters(
        means=_finite(arrays, "clusters.means"),
        variances=_finite(arrays, "clusters.variances", positive=True),
        log_eta=_finite(arrays, "clusters.log_eta", high=0.0),
        weights=_finite(arrays, "clusters.weights", low=0.0, high=1.0),
    )
    stats = _engine.Statistics(**{f.name: _finite(arrays, f"statistics.{f.name}", low=0.0 if "counts" in f.name else None)
                                  for f in dataclasses.fields(_engine.Statistics)})
    sizes = arrays["cluster_sizes"].astype(np.int64)
    if not np.array_equal(sizes, stats.counts):
        raise _Damaged("cluster_sizes is not statistics.counts")
    labels, n_noise = _labels(arrays.get("labels"), sizes, options.noise, fitted.pop("n_noise"))
    pins = _pins(arrays.get("pins"), arrays["feature_mask"])
    fitted.pop("has_pins")
    n_keep = fitted.pop("n_keep")
    values = {
        "schema_": schema,
        "encoder_": encoder,
        "n_imputed_": dict(encoder.n_imputed_),
        "n_marginalised_": dict(encoder.n_marginalised_),
        "feature_names_in_": np.asarray(columns, dtype=object),
        "n_features_in_": len(columns),
        "engine_features_": engine_features,
        "options_": options,
        "clusters_": clusters,
        "n_noise_": n_noise,
        "history_": _history(arrays),
        "cluster_sizes_": sizes,
        "feature_mask_": arrays["feature_mask"],
        "pins_": pins,
        "statistics_": stats,
        "selection_": _engine.Selection(
            **{name: arrays[f"selection.{name}"] for name in ("score", "rank", "criterion", "cut", "selected")},
            n_keep=n_keep,
        ),
        "labels_": labels,
        **{name: value for name, value in fitted.items() if name.endswith("_")},
    }
    for name, value in values.items():
        setattr(model, name, value)
    return model


def _estimator(header: dict):
    """The unfitted CRAFT of ``params``, and the options its parameters give (the estimator's rules check each)."""
    from .estimator import CRAFT

    params = _field(header, "params", _JSON)
    if not isinstance(params, dict):
        raise _Damaged(f"params is {_shown(params)}, not an object")
    known = [name for name in inspect.signature(CRAFT.__init__).parameters if name != "self"]
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise _Damaged(f"params names {unknown[:5]}, which are not parameters of CRAFT")
    params = dict(params)
    categorical = params.get("categorical", "auto")
    if isinstance(categorical, dict):
        params["categorical"] = _schema_from(_field(categorical, "schema", "params.categorical"), "params.categorical")
    elif categorical != "auto":
        if type(categorical) is not list or not all(type(c) in (str, int) for c in categorical):
            raise _Damaged(f"params.categorical is {_shown(categorical)}, not 'auto', a list of names or a schema")
    seed = params.get("random_state")
    if seed is not None:
        _int(seed, "params.random_state")
    params.update(_steering_params(params))
    model = CRAFT(**params)
    try:
        return model, model._validated_options()
    except CraftInputError as error:
        raise _Damaged(f"params: {error}") from None


def _steering_params(params: dict) -> dict:
    """``pins``, ``must_link`` and ``cannot_link`` as the estimator takes them, from their JSON lists."""
    from ._links import MAX_PAIRS

    read: dict[str, Any] = {}
    pins = params.get("pins")
    if pins is not None:
        if type(pins) is not list or len(pins) > MAX_PAIRS:
            raise _Damaged(f"params.pins is {_shown(pins)}, not a list of at most {MAX_PAIRS:,} pins")
        read["pins"] = {}
        for j, pin in enumerate(pins):
            if (type(pin) is not list or len(pin) != 3 or not (pin[0] is None or type(pin[0]) is int)
                    or type(pin[1]) is not str or type(pin[2]) is not bool):
                raise _Damaged(f"params.pins[{j}] is {_shown(pin)}, not [cluster or null, column, true or false]")
            read["pins"][(pin[0], pin[1])] = pin[2]
    for name in ("must_link", "cannot_link"):
        pairs = params.get(name)
        if pairs is None:
            continue
        if type(pairs) is not list or len(pairs) > MAX_PAIRS or not all(
                type(pair) is list and len(pair) == 2 and all(type(row) is int for row in pair) for pair in pairs):
            raise _Damaged(f"params.{name} is {_shown(pairs)}, not a list of at most {MAX_PAIRS:,} pairs of rows")
        read[name] = [(a, b) for a, b in pairs]
    return read


def _steering_options(spec: dict) -> dict:
    """The options ``pins`` and ``links`` (what a fit was steered by), from their JSON objects."""
    from ._links import MAX_PAIRS, Links

    values: dict[str, Any] = {}
    pins = spec.get("pinned")
    if pins is not None:
        every = pins.get("every") if isinstance(pins, dict) else None
        own = pins.get("per_cluster") if isinstance(pins, dict) else None
        if (set(pins) != {"every", "per_cluster"} or type(every) is not list or type(own) is not list
                or not all(type(row) is list and len(row) == len(every) for row in own)
                or not all(type(v) is int and v in (-1, 0, 1) for v in every + [v for row in own for v in row])):
            raise _Damaged("options.pinned is not {every: [-1, 0 or 1 per feature], per_cluster: [such rows]}")
        values["pinned"] = _engine.Pins(tuple(every), tuple(tuple(row) for row in own))
    links = spec.get("links")
    if links is not None:
        units = links.get("units") if isinstance(links, dict) else None
        apart = links.get("apart") if isinstance(links, dict) else None
        if (set(links) != {"units", "apart"} or type(units) is not list or type(apart) is not list
                or len(units) > 2 * MAX_PAIRS or len(apart) > MAX_PAIRS
                or not all(type(u) is list and u and all(type(r) is int and r >= 0 for r in u) for u in units)
                or not all(type(p) is list and len(p) == 2 and all(type(i) is int and 0 <= i < len(units) for i in p)
                           for p in apart)):
            raise _Damaged("options.links is not {units: [[rows]], apart: [[unit, unit]]}")
        values["links"] = Links(tuple(tuple(u) for u in units), tuple((a, b) for a, b in apart))
    return values


def _encoder(spec, schema: Schema, columns: list[str], missing_param: str) -> Encoder:
    """The encoder ``encoder`` describes (arrays set later), its columns the schema's in the engine's order."""
    numeric = _names(_field(spec, "numeric", "encoder"), "encoder.numeric")
    categorical = _names(_field(spec, "categorical", "encoder"), "encoder.categorical")
    # The engine's feature order is the schema's: numeric columns, then categorical ones.
    if numeric != list(schema.numeric) or categorical != list(schema.categorical):
        raise _Damaged("encoder.numeric and encoder.categorical disagree with the schema's numeric and categorical "
                       "columns (names or order)")
    present = set(columns)
    absent = [c for c in numeric + categorical if c not in present]
    if absent:
        raise _Damaged(f"the used column(s) {absent[:5]} are not among the columns")
    missing = _str(_field(spec, "missing", "encoder"), "encoder.missing")
    if missing not in MISSING_MODES:
        raise _Damaged(f"encoder.missing is {missing!r}, not one of {MISSING_MODES}")
    if missing != missing_param:
        raise _Damaged(f"encoder.missing ({missing!r}) is not params.missing ({missing_param!r})")
    encoder = Encoder(numeric, categorical, _bool(_field(spec, "standardize", "encoder"), "encoder.standardize"), missing)
    levels_spec = _field(spec, "levels", "encoder")
    has_missing = _field(spec, "has_missing_level", "encoder")
    for name, value in (("levels", levels_spec), ("has_missing_level", has_missing)):
        if type(value) is not list or len(value) != len(categorical):
            raise _Damaged(f"encoder.{name} is not a list of {len(categorical)} entries, one per categorical column")
    encoder.levels_ = [_levels(levels, column) for levels, column in zip(levels_spec, categorical, strict=True)]
    encoder.has_missing_level_ = [_bool(h, f"encoder.has_missing_level[{j}]") for j, h in enumerate(has_missing)]
    used = set(numeric) | set(categorical)
    for name in ("n_imputed", "n_marginalised"):
        counts = _field(spec, name, "encoder")
        if not isinstance(counts, dict) or not set(counts) <= used:
            raise _Damaged(f"encoder.{name} is not an object of counts keyed by used columns")
        setattr(encoder, f"{name}_", {column: _int(n, f"encoder.{name}[{column!r}]") for column, n in counts.items()})
    return encoder


def _fitted(spec, options: _engine.Options, model, encoder: Encoder) -> dict[str, Any]:
    """The fit's numbers of ``fitted``, typed and consistent with the options and parameters.

    Keys ending in ``_`` are fitted attributes; ``has_labels``, ``n_keep`` and ``n_noise`` are read further.
    """
    from ._params import MAX_CLUSTERS

    names = _names(_field(spec, "engine_features", "fitted"), "fitted.engine_features")
    if names != list(encoder.numeric) + list(encoder.categorical):
        raise _Damaged("fitted.engine_features is not encoder.numeric followed by encoder.categorical")
    lam = _real(_field(spec, "lam", "fitted"), "fitted.lam", nonnegative=True)
    if lam != options.lam:
        raise _Damaged(f"fitted.lam ({lam!r}) is not options.lam ({options.lam!r}); a fit stores one lambda")
    if model.lam is not None and lam != float(model.lam):
        raise _Damaged(f"fitted.lam ({lam!r}) is not params.lam ({model.lam!r})")
    rho = _real(_field(spec, "rho", "fitted"), "fitted.rho", positive=True)
    if rho != options.terms.rho:
        raise _Damaged(f"fitted.rho ({rho!r}) is not options.terms.rho ({options.terms.rho!r})")
    terms = _field(spec, "objective_terms", "fitted")
    if not isinstance(terms, dict) or not set(terms) <= {f.name for f in dataclasses.fields(_engine.ObjectiveTerms)}:
        raise _Damaged("fitted.objective_terms is not an object of the objective's terms")
    n_keep = _field(spec, "n_keep", "fitted")
    if n_keep is not None:
        if type(n_keep) is not list or len(n_keep) != 2:
            raise _Damaged("fitted.n_keep is neither null nor two counts")
        n_keep = (_int(n_keep[0], "fitted.n_keep[0]", 0, len(encoder.numeric)),
                  _int(n_keep[1], "fitted.n_keep[1]", 0, len(encoder.categorical)))
    n_noise = spec.get("n_noise")
    if n_noise is not None:
        _int(n_noise, "fitted.n_noise")
        if n_noise and not options.noise:
            raise _Damaged(f"fitted.n_noise is {n_noise} but the options have noise off")
    return {
        "lam_": lam,
        "rho_": rho,
        "n_clusters_": _int(_field(spec, "n_clusters", "fitted"), "fitted.n_clusters", 1, MAX_CLUSTERS),
        "objective_": _real(_field(spec, "objective", "fitted"), "fitted.objective"),
        "n_iter_": _int(_field(spec, "n_iter", "fitted"), "fitted.n_iter"),
        "converged_": _bool(_field(spec, "converged", "fitted"), "fitted.converged"),
        "objective_terms_": _engine.ObjectiveTerms(**{k: _real(v, f"fitted.objective_terms.{k}")
                                                      for k, v in terms.items()}),
        "has_labels": _bool(_field(spec, "has_labels", "fitted"), "fitted.has_labels"),
        # Files written before pins say nothing: their fits had none.
        "has_pins": _bool(spec.get("has_pins", False), "fitted.has_pins"),
        "n_keep": n_keep,
        "n_noise": n_noise,
    }


def _pins(pins: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
    """Each cluster's pins (zeros for a file written before pins), checked against the masks they fixed."""
    if pins is None:
        return np.zeros(mask.shape, dtype=np.int8)
    if not np.isin(pins, (-1, 0, 1)).all():
        raise _Damaged("pins holds values other than -1, 0 and 1, which a fit never gives")
    if (mask[pins > 0] == 0).any() or mask[pins < 0].any():
        raise _Damaged("pins disagree with feature_mask: a fit selects every pinned-on feature and no pinned-off one")
    return pins.astype(np.int8)


def _labels(labels: np.ndarray | None, sizes: np.ndarray, noise: bool,
            n_noise: int | None) -> tuple[np.ndarray | None, int]:
    """The training labels (or None) and the count of noise rows, checked against the cluster sizes."""
    if labels is None:
        if n_noise is None:
            if noise:
                raise _Damaged("the file holds neither labels nor fitted.n_noise, so its count of noise rows is "
                               "unknown (a file written before craft saved it); fit the model again")
            n_noise = 0
        return None, n_noise
    labels = labels.astype(np.int64)
    n_clusters = sizes.size
    low = -1 if noise else 0
    if labels.size and (labels.min() < low or labels.max() >= n_clusters):
        raise _Damaged(f"labels hold values outside [{low}, {n_clusters - 1}] for K = {n_clusters}"
                       + ("" if noise else " (noise is off: no row is labelled -1)"))
    if not np.array_equal(np.bincount(labels[labels >= 0], minlength=n_clusters), sizes):
        raise _Damaged("the labels do not count the cluster_sizes")
    counted = int((labels < 0).sum())
    if n_noise is not None and n_noise != counted:
        raise _Damaged(f"fitted.n_noise is {n_noise} but {counted} labels are noise")
    return labels, counted


def _options(spec, from_params: _engine.Options) -> _engine.Options:
    """``options`` typed field by field; those that mirror a parameter must equal what the parameters give."""
    if not isinstance(spec, dict):
        raise _Damaged(f"options is {_shown(spec)}, not an object")
    fields = {f.name: f for f in dataclasses.fields(_engine.Options)}
    unknown = sorted(set(spec) - set(fields))
    if unknown:
        raise _Damaged(f"options names {unknown[:5]}, which are not options of the engine")
    terms_spec = _field(spec, "terms", "options")
    if not isinstance(terms_spec, dict) or set(terms_spec) != {f.name for f in dataclasses.fields(PriorTerms)}:
        raise _Damaged("options.terms is not an object of the prior's terms")
    terms = PriorTerms(**{k: _real(v, f"options.terms.{k}") for k, v in terms_spec.items()})
    values: dict[str, Any] = {"terms": terms}
    readers = {"float": _real, "int": _int, "bool": _bool, "str": _str}
    values.update(_steering_options(spec))
    for name, value in spec.items():
        if name in ("terms", "pinned", "links"):
            continue
        kind = str(fields[name].type).replace(" ", "")
        if kind.endswith("|None") and value is None:
            values[name] = None
        elif kind.removesuffix("|None") in readers:
            reader = readers[kind.removesuffix("|None")]
            values[name] = reader(value, f"options.{name}")  # type: ignore[operator]
        else:  # a field of a type this reader does not know: a JSON scalar at least
            if not isinstance(value, (str, int, float, bool, type(None))):
                raise _Damaged(f"options.{name} is {_shown(value)}, not a value")
            values[name] = value
    try:
        options = _engine.Options(**values)
    except TypeError as error:
        raise _Damaged(f"options: {error}") from None
    # The options that mirror a parameter of CRAFT (lambda aside, which the fit chooses).
    mirrored = [name for name in ("budget", "eps_c", "eps_v", "smoothing", "min_variance", "init", "rho_selection",
                                  "max_iter", "noise") if name in fields]
    differ: list[str] = [name for name in mirrored if getattr(options, name) != getattr(from_params, name)]
    differ += [f"terms.{name}" for name in ("m", "rho") if getattr(terms, name) != getattr(from_params.terms, name)]
    if differ:
        raise _Damaged(f"options {differ} disagree with the parameters that set them")
    if not options.lam >= 0:
        raise _Damaged(f"options.lam is {options.lam!r}, which a fit never gives")
    return options


def _levels(spec, column: str) -> list:
    """One categorical column's levels, typed, each once."""
    if type(spec) is not list:
        raise _Damaged(f"the levels of {column!r} are {_shown(spec)}, not a list")
    levels = [_level_value(item, column) for item in spec]
    if len(set(levels)) != len(levels):
        seen: set = set()
        twice = [level for level in levels if level in seen or seen.add(level)]  # type: ignore[func-returns-value]
        raise _Damaged(f"column {column!r} lists the level(s) {twice[:5]} more than once; a fit lists each level once")
    return levels


def _level_value(item, column: str):
    if type(item) is not list or len(item) != 2 or type(item[0]) is not str:
        raise _Damaged(f"a level of {column!r} is {_shown(item)}, not [type, value]")
    kind, value = item
    types: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "float": (str,), "bool": (bool,),
                                          "timestamp": (str,)}
    if kind not in types or type(value) not in types[kind]:
        raise _Damaged(f"the level {_shown(value)} of {column!r} is not of its type {kind[:20]!r}")
    try:
        if kind == "float":
            read = float(value)
            if np.isnan(read):
                raise ValueError("NaN is a missing cell, never a level")
            return read
        if kind == "timestamp":
            return pd.Timestamp(value)
    except (ValueError, OverflowError) as error:
        raise _Damaged(f"the level {_shown(value)} of {column!r} is not a {kind}: {error}") from None
    return value


def _expected(n_numeric: int, n_levels: int, n_features: int, n_clusters: int,
              n_columns: int) -> dict[str, tuple[tuple[int | None, ...], str]]:
    """Every array's shape (None: any length, checked against the others after) and dtype kinds."""
    K, P, T, D = n_clusters, n_numeric, n_levels, n_features
    return {
        **{f"encoder.{name}": ((P,), "f") for name in ("center", "scale", "impute", "var")},
        "encoder.eta0": ((T,), "f"),
        "clusters.means": ((K, P), "f"),
        "clusters.variances": ((K, P), "f"),
        "clusters.log_eta": ((K, T), "f"),
        "clusters.weights": ((K, D), "f"),
        "statistics.counts": ((K,), "f"),
        **{f"statistics.{name}": ((K, P), "f") for name in ("numeric_counts", "sums", "sums_sq")},
        "statistics.level_counts": ((K, T), "f"),
        **{f"selection.{name}": ((K, D), "f") for name in ("score", "criterion", "cut")},
        "selection.rank": ((K, D), "iu"),
        "selection.selected": ((K, D), "b"),
        "feature_mask": ((K, n_columns), "b"),
        "pins": ((K, n_columns), "i"),
        "cluster_sizes": ((K,), "iu"),
        **{f"history.{name}": ((None,), "iu") for name in ("iteration", "n_clusters", "n_changed", "n_opened",
                                                           "restart", "mask_rows")},
        **{f"history.{name}": ((None,), "f") for name in ("objective", "lam")},
        "history.feature_mask": ((None, D), "b"),
        "labels": ((None,), "iu"),
    }


def _arrays(raw: bytes, expected: dict, optional: set[str]) -> dict[str, np.ndarray]:
    """The arrays of ``arrays.npz``, each header checked against ``expected`` before its bytes are read.

    ``numpy.load`` trusts an array's header: a few bytes declaring 2**33
    values allocate 64 GB. Here an array is read only when its header's
    shape and dtype are the expected ones and its declared bytes are exactly
    what the zip member declares, itself bounded by the outer member's size.
    """
    if not zipfile.is_zipfile(io.BytesIO(raw)):  # NumPy would take any other bytes for a pickle
        raise _Damaged(f"{_ARRAYS} is not a NumPy archive")
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        infos = archive.infolist()
        if sum(info.file_size for info in infos) > max(len(raw), 1) * 1100:
            raise _Damaged(f"{_ARRAYS} declares more bytes than deflate can unpack from its size")
        names = [info.filename.removesuffix(".npy") for info in infos]
        if len(set(names)) != len(names):
            raise _Damaged(f"{_ARRAYS} holds an array twice")
        wanted = set(expected) - ({"labels", "pins"} - optional)
        lacking = sorted(wanted - set(names))
        extra = sorted(set(names) - wanted)
        if lacking or extra:
            raise _Damaged(f"{_ARRAYS} " + "; ".join(
                part for part in (f"lacks {lacking[:5]}" if lacking else "",
                                  f"holds arrays a model does not have: {extra[:5]}" if extra else "") if part))
        for info, name in zip(infos, names, strict=True):
            _check_member(info, f"{_ARRAYS}: ")
            arrays[name] = _read_array(archive, info, name, *expected[name])
    rows = {arrays[f"history.{name}"].shape[0] for name in ("iteration", "objective", "n_clusters", "n_changed",
                                                            "n_opened", "restart", "lam", "mask_rows")}
    mask_rows = arrays["history.mask_rows"]
    if len(rows) != 1 or (mask_rows < 0).any() or mask_rows.sum() != arrays["history.feature_mask"].shape[0]:
        raise _Damaged("the history's arrays do not fit together (one entry per record, mask_rows summing to the "
                       "rows of history.feature_mask)")
    return arrays


def _read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, shape: tuple, kinds: str) -> np.ndarray:
    fmt = np.lib.format
    with archive.open(info) as member:
        try:
            version = fmt.read_magic(member)
            if version == (1, 0):
                found, fortran, dtype = fmt.read_array_header_1_0(member)
            elif version == (2, 0):
                found, fortran, dtype = fmt.read_array_header_2_0(member)
            else:
                raise _Damaged(f"array {name!r} is in .npy version {version}, which NumPy's savez does not write here")
        except ValueError as error:
            raise _Damaged(f"array {name!r} has no readable .npy header ({error})") from None
        if dtype.hasobject:
            raise _Damaged(f"array {name!r} holds Python objects, which cannot be read without pickle; a CRAFT model "
                           "file never holds one, so it is refused")
        if dtype.fields is not None or dtype.subdtype is not None:
            raise _Damaged(f"array {name!r} is of dtype {dtype}, not one number per cell")
        if dtype.kind not in kinds:
            raise _Damaged(f"array {name!r} has dtype {dtype}, expected {'/'.join(_KINDS[k] for k in kinds)}")
        if len(found) != len(shape) or any(want is not None and want != got for want, got in zip(shape, found, strict=True)):
            want_text = "(" + ", ".join("any" if w is None else str(w) for w in shape) + ("," if len(shape) == 1 else "") + ")"
            raise _Damaged(f"{name} has shape {found}, expected {want_text}")
        n_bytes = int(np.prod(found, dtype=object)) * dtype.itemsize
        if member.tell() + n_bytes != info.file_size:
            raise _Damaged(f"array {name!r} declares {n_bytes:,} bytes of values but its member holds "
                           f"{info.file_size - member.tell():,}")
        data = member.read(n_bytes)
        if len(data) != n_bytes or member.read(1):
            raise _Damaged(f"array {name!r} is shorter or longer than it declares")
    array = np.frombuffer(data, dtype=dtype).reshape(found, order="F" if fortran else "C")
    return np.ascontiguousarray(array, dtype=dtype.newbyteorder("="))


_KINDS = {"f": "float", "i": "signed integer", "u": "unsigned integer", "b": "bool"}


def _finite(arrays: dict[str, np.ndarray], name: str, *, positive: bool = False, low: float | None = None,
            high: float | None = None) -> np.ndarray:
    """A float array whose every value a fit can give: finite, and within its bounds."""
    array = arrays[name].astype(np.float64)
    if not np.isfinite(array).all():
        raise _Damaged(f"{name} holds {int((~np.isfinite(array)).sum())} value(s) that are not finite (NaN or "
                       "infinite), which a fit never gives")
    bad = (array <= 0) if positive else np.zeros(array.shape, dtype=bool)
    if low is not None:
        bad |= array < low
    if high is not None:
        bad |= array > high
    if bad.any():
        rule = "> 0" if positive else f"in [{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
        raise _Damaged(f"{name} holds {int(bad.sum())} value(s) not {rule}, which a fit never gives "
                       f"(e.g. {array[bad].flat[0]!r})")
    return array


def _history(arrays: dict[str, np.ndarray]) -> list[_engine.IterationRecord]:
    sizes = arrays["history.mask_rows"].astype(np.int64)
    masks = np.split(arrays["history.feature_mask"], np.cumsum(sizes)[:-1]) if sizes.size else []
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


def _schema_from(fields, where: str) -> Schema:
    numeric = _names(_field(fields, "numeric", where), f"{where}.numeric")
    categorical = _names(_field(fields, "categorical", where), f"{where}.categorical")
    ignored = _names(_field(fields, "ignored", where), f"{where}.ignored")
    everything = numeric + categorical + ignored
    if len(set(everything)) != len(everything):
        raise _Damaged(f"{where} gives a column more than one role")
    reasons = _field(fields, "reasons", where)
    if type(reasons) is not list or not all(type(pair) is list and len(pair) == 2 and all(type(p) is str for p in pair)
                                            for pair in reasons):
        raise _Damaged(f"{where}.reasons is not a list of [column, reason] pairs")
    return Schema(numeric=tuple(numeric), categorical=tuple(categorical), ignored=tuple(ignored),
                  reasons={column: reason for column, reason in reasons})
