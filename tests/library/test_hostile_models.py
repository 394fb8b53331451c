"""Hostile model files (issue 31): every byte of a model file is untrusted input.

Each test builds a file that ``model.save`` never writes (damaged, hand
edited or crafted) and checks that ``craft.load`` refuses it with a
``CraftInputError`` naming the problem, before any array reaches a kernel,
and that time and memory stay bounded by the file, not by what it claims.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import craft
from craft import CRAFT, CraftInputError, datasets, persist, synthetic


@pytest.fixture(scope="module")
def wine():
    X, _ = datasets.load("wine")
    model = CRAFT(k=3, n_init=1, random_state=0).fit(X)
    return X, model, _saved(model)


@pytest.fixture(scope="module")
def mixed():
    X, _, _ = synthetic.mixed_planted(n_samples=200, n_clusters=3, random_state=0)
    model = CRAFT(k=3, n_init=1, random_state=0).fit(X)
    return X, model, _saved(model)


def _saved(model) -> bytes:
    buffer = io.BytesIO()
    model.save(buffer)
    return buffer.getvalue()


def _members(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        header = json.loads(archive.read("model.json"))
        with np.load(io.BytesIO(archive.read("arrays.npz"))) as arrays:
            return header, dict(arrays)


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def edited(data: bytes, header_edit=None, arrays_edit=None, *, raw_json: str | None = None) -> bytes:
    """``data`` edited by hand: model.json and arrays.npz changed, the checksum made to match (a careful editor)."""
    header, arrays = _members(data)
    if arrays_edit is not None:
        arrays_edit(arrays)
    raw_arrays = _npz(arrays)
    header["arrays_sha256"] = hashlib.sha256(raw_arrays).hexdigest()
    if header_edit is not None:
        header_edit(header)
    text = raw_json if raw_json is not None else json.dumps(header)
    return _zip({"model.json": text.encode(), "arrays.npz": raw_arrays})


def refused(data: bytes, match: str) -> str:
    with pytest.raises(CraftInputError, match=match) as raised:
        craft.load(data)
    return str(raised.value)


# ----------------------------------------------------------------------
# 1. Sizes are declared, not trusted


def _npy_header_only(shape: tuple, dtype: str, payload: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buffer.getvalue() + payload


def test_an_inner_array_declaring_64_gb_is_refused_before_it_is_read(wine):
    _, _, data = wine
    header, arrays = _members(data)
    members = {f"{name}.npy": _npy_bytes(value) for name, value in arrays.items()}
    members["labels.npy"] = _npy_header_only((2**33,), "<i8", b"\0" * 64)
    raw = _zip(members)
    header.pop("arrays_sha256")
    crafted = _zip({"model.json": json.dumps(header).encode(), "arrays.npz": raw})
    assert len(crafted) < 100_000
    refused(crafted, r"damaged CRAFT model file \(labels has shape \(8589934592,\), expected \(any,\)|declares")


def test_an_inner_array_whose_member_is_shorter_than_its_header_is_refused(wine):
    _, _, data = wine
    header, arrays = _members(data)
    members = {f"{name}.npy": _npy_bytes(value) for name, value in arrays.items()}
    members["labels.npy"] = _npy_header_only((178,), "<i8", b"\0" * 64)  # the right shape, 64 of 1,424 bytes
    header.pop("arrays_sha256")
    refused(_zip({"model.json": json.dumps(header).encode(), "arrays.npz": _zip(members)}),
            r"array 'labels' declares 1,424 bytes of values but its member holds 64")


def _npy_bytes(value: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, value, allow_pickle=False)
    return buffer.getvalue()


def test_a_padded_model_json_is_refused_by_its_declared_size(wine, monkeypatch):
    _, _, data = wine
    header, _ = _members(data)
    padded = edited(data, raw_json=json.dumps(header) + " " * 300_000)
    monkeypatch.setattr(persist, "MAX_JSON_BYTES", 200_000)
    refused(padded, r"declares a model.json of [\d,]+ bytes, more than a model's header holds \(200,000 bytes")


# ----------------------------------------------------------------------
# 2. Every array is checked against the JSON, by shape and dtype


def _set(name, make):
    def edit(arrays):
        arrays[name] = make(arrays[name])
    return edit


@pytest.mark.parametrize("edit, message", [
    (_set("encoder.center", lambda a: a[:-1]), r"encoder.center has shape \(12,\), expected \(13,\)"),
    (_set("encoder.center", lambda a: np.append(a, 0.0)), r"encoder.center has shape \(14,\), expected \(13,\)"),
    (_set("encoder.scale", np.zeros_like), r"encoder.scale holds 13 value\(s\) not > 0"),
    (_set("selection.selected", lambda a: np.ones(1, dtype=bool)), r"selection.selected has shape \(1,\)"),
    (_set("feature_mask", lambda a: np.ones((1, 1), dtype=bool)), r"feature_mask has shape \(1, 1\)"),
    (_set("cluster_sizes", lambda a: a[:1]), r"cluster_sizes has shape \(1,\), expected \(3,\)"),
    (_set("labels", lambda a: np.where(a == 0, 7, a)), r"labels hold values outside \[0, 2\] for K = 3"),
    (_set("encoder.impute", lambda a: a.astype(np.int8)), r"damaged|dtype"),
    (_set("clusters.means", lambda a: a.astype(bool)), r"'clusters.means' has dtype bool, expected float"),
    (_set("clusters.weights", lambda a: a.astype(">f8")[:, :2]), r"clusters.weights has shape \(3, 2\)"),
    (_set("history.mask_rows", lambda a: a + 1), r"the history's arrays do not fit together"),
    (_set("statistics.counts", lambda a: a + 1), r"cluster_sizes is not statistics.counts"),
    (lambda arrays: arrays.pop("encoder.var"), r"arrays.npz lacks \['encoder.var'\]"),
    (lambda arrays: arrays.update(extra=np.zeros(3)), r"holds arrays a model does not have: \['extra'\]"),
])
def test_arrays_that_do_not_fit_the_header_are_refused(wine, edit, message):
    _, _, data = wine
    refused(edited(data, arrays_edit=edit), message)


def test_an_encoder_centre_one_short_never_reaches_the_kernel(wine):
    """Before the check, the kernel read past the array's end and changed predictions silently."""
    _, _, data = wine
    refused(edited(data, arrays_edit=_set("encoder.center", lambda a: a[:-1])), r"encoder.center has shape")


# ----------------------------------------------------------------------
# 3. Values that cannot come from a fit


def _header_set(path: str, value):
    def edit(header):
        *parents, last = path.split(".")
        node = header
        for part in parents:
            node = node[part]
        node[last] = value
    return edit


@pytest.mark.parametrize("edit, message", [
    (_header_set("options.lam", 1.0), r"fitted.lam \(.*\) is not options.lam \(1.0\)"),
    (_header_set("fitted.n_clusters", 2), r"clusters.means has shape \(3, 13\), expected \(2, 13\)"),
    (_header_set("options.budget", "approximate"), r"options \['budget'\] disagree with the parameters"),
    (_header_set("encoder.missing", "impute"), r"encoder.missing \('impute'\) is not params.missing"),
    (_header_set("fitted.engine_features", None), r"fitted.engine_features is null, not a list"),
    (_header_set("fitted.n_iter", "5"), r"fitted.n_iter is \"5\", not an integer"),
    (_header_set("fitted.n_clusters", 3.0), r"fitted.n_clusters is 3.0, not an integer"),
    (_header_set("fitted.converged", 1), r"fitted.converged is 1, not true or false"),
    (_header_set("params.categorical", 5), r"params.categorical is 5"),
    (_header_set("params.k", "three"), r"params: Parameter k='three' is invalid"),
    (_header_set("params.warm", 1), r"params names \['warm'\], which are not parameters of CRAFT"),
    (_header_set("encoder", []), r"encoder is a list, not an object"),
    (_header_set("options.n_seeds", True), r"options.n_seeds is true, not an integer"),
])
def test_header_values_a_fit_never_writes_are_refused(wine, edit, message):
    _, _, data = wine
    refused(edited(data, header_edit=edit), message)


@pytest.mark.parametrize("path, literal", [
    ("options.lam", "NaN"), ("fitted.lam", "Infinity"), ("options.terms.f0", "NaN"), ("fitted.objective", "-Infinity"),
    ("fitted.n_iter", "1e400"), ("options.max_iter", "Infinity"),
])
def test_non_finite_numbers_in_the_header_are_refused(wine, path, literal):
    _, _, data = wine
    marker = "__marker__"
    header, _ = _members(data)
    _header_set(path, marker)(header)
    text = json.dumps(header).replace(f'"{marker}"', literal)
    refused(edited(data, raw_json=text), rf"damaged CRAFT model file \(model.json holds .*{literal[:4]}")


@pytest.mark.parametrize("name, make, message", [
    ("clusters.means", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 4, np.nan, a), "clusters.means holds 1 value"),
    ("clusters.variances", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, 0.0, a), r"clusters.variances holds 1 value\(s\) not > 0"),
    ("clusters.log_eta", lambda a: np.full_like(a, np.inf), r"clusters.log_eta holds \d+ value\(s\) that are not finite"),
    ("encoder.eta0", lambda a: a * 2 + 1, r"encoder.eta0 holds \d+ value\(s\) not in \[0.0, 1.0\]"),
])
def test_array_values_a_fit_never_gives_are_refused(mixed, name, make, message):
    _, _, data = mixed
    refused(edited(data, arrays_edit=_set(name, make)), message)


def test_engine_order_and_levels_must_be_the_fits(mixed):
    _, model, data = mixed
    numeric = list(model.encoder_.numeric)

    def swapped(header):
        header["encoder"]["numeric"] = numeric[1:2] + numeric[:1] + numeric[2:]

    refused(edited(data, header_edit=swapped), r"encoder.numeric and encoder.categorical disagree with the schema")

    def twice(header):
        header["encoder"]["levels"][0][1] = header["encoder"]["levels"][0][0]

    column = model.encoder_.categorical[0]
    refused(edited(data, header_edit=twice), rf"column '{column}' lists the level\(s\) \['c0'\] more than once")

    def mistyped(header):
        header["encoder"]["levels"][0][0] = ["int", "c0"]

    refused(edited(data, header_edit=mistyped), rf"the level \"c0\" of '{column}' is not of its type 'int'")


# ----------------------------------------------------------------------
# 4. Only CraftInputError leaves the loader


def test_deeply_nested_json_is_an_input_error(wine):
    _, _, data = wine
    header, _ = _members(data)
    text = json.dumps(header)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    refused(edited(data, raw_json=text), r"model.json nests lists or objects thousands of levels deep")


@pytest.mark.parametrize("version, shown", [("1" * 5000, "5000 digits"), ("1.0", "1.0"), ("true", "true"),
                                            ('"1"', "of type str"), ("[1]", "of type list")])
def test_a_version_other_than_the_integer_1_is_refused(wine, version, shown):
    _, _, data = wine
    header, _ = _members(data)
    header["format_version"] = "__v__"
    text = json.dumps(header).replace('"__v__"', version)
    message = refused(edited(data, raw_json=text), r"model file")
    assert shown.split()[0] in message or "digits" in message


def test_a_pickle_stored_as_an_npy_member_is_refused(wine):
    _, _, data = wine
    header, arrays = _members(data)
    members = {f"{name}.npy": _npy_bytes(value) for name, value in arrays.items()}
    members["labels.npy"] = pickle.dumps(arrays["labels"])
    header.pop("arrays_sha256")
    refused(_zip({"model.json": json.dumps(header).encode(), "arrays.npz": _zip(members)}),
            r"array 'labels' has no readable .npy header")


def _with_method(data: bytes, method: int) -> bytes:
    """``data`` with every member's compression method (local and central headers) set to ``method``."""
    raw = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        start = raw.find(signature)
        while start >= 0:
            raw[start + offset:start + offset + 2] = method.to_bytes(2, "little")
            start = raw.find(signature, start + 4)
    return bytes(raw)


def _with_encrypted_flag(data: bytes) -> bytes:
    raw = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = raw.find(signature)
        while start >= 0:
            raw[start + offset] |= 0x1
            start = raw.find(signature, start + 4)
    return bytes(raw)


def test_encrypted_members_and_unknown_compressions_are_input_errors(wine):
    _, _, data = wine
    stored = edited(data)  # stored members: the bytes are plain
    refused(_with_method(stored, 99), r"'model.json' is compressed by zip method 99")
    refused(_with_encrypted_flag(stored), r"'model.json' is encrypted")
    # The same inside arrays.npz.
    header, arrays = _members(data)
    header.pop("arrays_sha256")
    inner = _npz(arrays)
    refused(_zip({"model.json": json.dumps(header).encode(), "arrays.npz": _with_method(inner, 99)}),
            r"arrays.npz: '.*\.npy' is compressed by zip method 99")


def test_an_array_checksum_tells_damage_from_a_hand_edit(wine):
    X, model, data = wine
    header, arrays = _members(data)
    assert header["arrays_sha256"] == hashlib.sha256(_arrays_member(data)).hexdigest()
    arrays["encoder.center"] = arrays["encoder.center"] + 1.0
    replaced = _zip({"model.json": json.dumps(header).encode(), "arrays.npz": _npz(arrays)})
    refused(replaced, r"arrays.npz is not the one model.json was written with")
    # A file without the checksum (written before it was) still loads.
    header, arrays = _members(data)
    header.pop("arrays_sha256")
    loaded = craft.load(_zip({"model.json": json.dumps(header).encode(), "arrays.npz": _npz(arrays)}))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def _arrays_member(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read("arrays.npz")


# ----------------------------------------------------------------------
# 5. A loaded model is a whole model; 6. paths and devices


def test_a_loaded_noise_model_keeps_its_noise_count():
    X, _ = datasets.load("wine")
    model = CRAFT(k=3, n_init=1, noise=True, random_state=0).fit(X)
    assert model.n_noise_ > 0
    loaded = craft.load(_saved(model))
    assert loaded.n_noise_ == model.n_noise_
    # The sizes chart reads it: its noise bar is drawn for the loaded model as for the fitted one.
    pytest.importorskip("plotly")
    from craft.plots import fig_cluster_sizes

    bars = [list(trace.y) for trace in fig_cluster_sizes(loaded).data]
    assert bars == [list(trace.y) for trace in fig_cluster_sizes(model).data]
    assert model.n_noise_ in [value for values in bars for value in values]
    # Without labels (a Dask fit's file) the count comes from the header.
    header, arrays = _members(_saved(model))
    arrays.pop("labels")
    header["fitted"]["has_labels"] = False
    header.pop("arrays_sha256")
    without = craft.load(_zip({"model.json": json.dumps(header).encode(), "arrays.npz": _npz(arrays)}))
    assert without.labels_ is None and without.n_noise_ == model.n_noise_


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_or_a_device_as_the_model_file_is_refused_at_once(tmp_path):
    fifo = tmp_path / "model.craft"
    os.mkfifo(fifo)
    with pytest.raises(CraftInputError, match=r"is not a regular file \(a pipe, a device or a socket\)"):
        craft.load(fifo)
    if os.path.exists("/dev/zero"):
        link = tmp_path / "zero.craft"
        link.symlink_to("/dev/zero")
        with pytest.raises(CraftInputError, match=r"is not a regular file"):
            craft.load(link)
    with pytest.raises(CraftInputError, match=r"is a folder"):
        craft.load(tmp_path)
