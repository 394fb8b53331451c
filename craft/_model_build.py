"""The fitted model a checked ``model.json`` and its arrays describe: the estimator of its parameters, the encoder,
the options, the fit's numbers and arrays, each checked against the others before the model is built (values a fit
never gives are refused; ``docs/model-format.md`` lists each check)."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from typing import Any

import numpy as np
import pandas as pd

from . import _engine
from ._model_file import (_ARRAYS, _JSON, _arrays, _bool, _Damaged, _field, _finite, _int, _names, _real, _shown,
                          _str)
from .encoding import MISSING_MODES, Encoder
from .exceptions import CraftInputError
from .priors import PriorTerms
from .schema import Schema


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
