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

This module is the format's face: :func:`save`, :func:`load` and the bounds
``load`` sets before it unpacks anything. Writing is ``craft._model_write``;
reading a file as untrusted bytes (the format's names, ``model.json``'s typed
fields, the arrays read from their checked headers) is ``craft._model_file``;
building the fitted model from the checked fields is ``craft._model_build``.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from typing import IO

import numpy as np

from ._model_build import _model
from ._model_file import _ARRAYS, _JSON, _check_member, _Damaged, _header, _name, _source
from ._model_file import FORMAT_NAME as FORMAT_NAME
from ._model_file import FORMAT_VERSION as FORMAT_VERSION
from ._model_write import _describe, _write
from .exceptions import CraftInputError

#: Most bytes ``model.json`` may unpack to. A model's JSON holds a few names per
#: column and one entry per categorical level: 100,000 columns (``craft.limits.MAX_COLUMNS``)
#: with long names and their reasons take a few tens of megabytes.
MAX_JSON_BYTES = 256 * 2**20


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


def _check_unpacked_size(archive: zipfile.ZipFile, given) -> None:
    """Refuse, before unpacking, members larger than half this machine's free memory (a zip bomb, say).

    ``zipfile`` reads no more than a member's declared size, so the declared
    sizes bound what loading can take; ``model.json`` has a bound of its own,
    :data:`MAX_JSON_BYTES`.
    """
    from .limits import available_memory

    for name in (_JSON, _ARRAYS):
        _check_member(archive.getinfo(name), "")
    declared = sum(archive.getinfo(name).file_size for name in (_JSON, _ARRAYS))
    limit = available_memory() // 2
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
