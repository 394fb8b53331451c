"""A model file as untrusted bytes: the format's names, and the checks that read it without trusting it.

A model file is untrusted input: every byte may be hostile. The reader
therefore (1) bounds what it unpacks by limits of its own, never by what the
file claims (``craft.persist.load``); (2) reads model.json with every field
typed and every number finite (:func:`_header` and the typed readers here);
(3) derives from model.json the shape and dtype of every array
(``craft._model_build``), and reads an array's header and checks both before
it reads the array's bytes (:func:`_arrays`), so no kernel ever sees an
array of another shape; (4) refuses values a fit cannot produce. Everything
it refuses is a CraftInputError; :class:`_Damaged` carries a reason to
``load``, which names the file.
"""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from typing import IO

import numpy as np

from ._version import __version__
from .exceptions import CraftInputError

#: The name written in every model file, so that another zip is told apart.
FORMAT_NAME = "craft-model"
#: The format's version: a file is read only by a craft whose version this is.
#: Any change to the fields or their meaning raises it (``docs/model-format.md``).
FORMAT_VERSION = 1

_JSON = "model.json"
_ARRAYS = "arrays.npz"

#: Most digits of an integer in ``model.json`` (a seed is the longest, 2**128 has 39).
_MAX_INT_DIGITS = 100
_COMPRESSIONS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


class _Damaged(ValueError):
    """Why a model file cannot be a model :func:`save` wrote (``load`` names the file)."""


def _source(given) -> IO[bytes]:
    if isinstance(given, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(given))
    if isinstance(given, (str, os.PathLike)):
        from .limits import available_memory

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
            limit = available_memory() // 2
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
