"""From a table and its schema to the arrays the engine works on.

Numeric columns become a float64 matrix (standardized by default);
categorical columns become integer level codes, one-hot encoded once per fit
as a sparse matrix so that per-cluster categorical costs are a single
sparse-dense product.

Missing cells are handled in one of two ways (``missing``):

* ``"marginalise"``: a missing cell is left out. Numeric cells carry an
  ``observed`` mask (the matrix keeps the column mean there, for display
  only), missing categorical cells get code -1; the engine then adds nothing
  for them to a row's cost or to its cluster's statistics. Scales, global
  variances and ``eta_0`` come from the observed cells only.
* ``"impute"``: a missing number is the column mean, a missing categorical
  value is a level of its own, ``(missing)`` (named ``(missing cell)`` when
  the column holds the text "(missing)" as an answer).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from . import _kernels
from .exceptions import CraftInputError

# A fitted attribute (trailing underscore) is None until fit sets it; it is
# typed as what fit sets, so that the code that runs after fit type-checks.
_UNFITTED: Any = None

MISSING_LEVEL = "(missing)"
MISSING_MODES = ("marginalise", "impute")
# Beyond this a value's square, summed over rows, can overflow float64.
MAX_MAGNITUDE = 1e150


@dataclass(frozen=True, eq=False)
class EncodedData:
    """Arrays of one table in the engine's feature order (numeric, then categorical).

    Attributes
    ----------
    numeric : ndarray of shape (n_samples, n_numeric)
        Imputed (and, when asked, standardized) numeric values.
    observed : ndarray of bool, shape (n_samples, n_numeric), or None
        Which numeric cells were observed, when missing cells are
        marginalised and any is missing; None means every cell counts.
    codes : ndarray of shape (n_samples, n_categorical)
        Level codes per categorical feature; -1 marks a level unseen in fit
        or, when missing cells are marginalised, a missing cell. Either adds
        no cost, the same (zero) for every cluster.
    n_levels, offsets : ndarray of shape (n_categorical,)
        Feature ``q`` owns positions ``offsets[q]:offsets[q] + n_levels[q]``
        of the flat level axis used by ``eta0`` and per-cluster tables.
    log_eta0 : ndarray of shape (n_levels_total,)
        Log of the global level distribution eta_0 (from the fitted table).
    eta0 : ndarray of shape (n_levels_total,)
    global_mean, global_var : ndarray of shape (n_numeric,)
        Mean and variance of each numeric feature in the fitted table, in
        encoded units (of the observed cells when they are marginalised).
    unseen : ndarray of bool, shape (n_samples, n_categorical), or None
        Which categorical cells hold a value never seen in fit (code -1 but
        not missing), set by :meth:`Encoder.transform` on new rows; None
        where no cell is (the fitted table itself). Such a cell costs what a
        missing cell costs, the same for every cluster, so it is what
        :meth:`craft.CRAFT.assign` flags separately.
    """

    numeric: np.ndarray
    observed: np.ndarray | None
    codes: np.ndarray
    n_levels: np.ndarray
    offsets: np.ndarray
    eta0: np.ndarray
    log_eta0: np.ndarray
    global_mean: np.ndarray
    global_var: np.ndarray
    unseen: np.ndarray | None = None

    @functools.cached_property
    def columns(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """``numeric``, ``observed`` and ``codes`` transposed, each feature's column one contiguous row.

        Made on first use, for the compiled pass (:func:`craft._kernels.nearest`):
        it reads the table a feature at a time. The sums of a labelling
        (:func:`craft._kernels.accumulate`) read it a row at a time, from the
        row-major arrays.
        """
        return (
            np.ascontiguousarray(self.numeric.T),
            None if self.observed is None else np.ascontiguousarray(self.observed.T, dtype=np.bool_),
            np.ascontiguousarray(self.codes.T),
        )

    @functools.cached_property
    def numeric_sq(self) -> np.ndarray:
        """``numeric ** 2``, made on first use (the compiled pass does without it)."""
        return self.numeric * self.numeric

    @property
    def n_samples(self) -> int:
        return self.numeric.shape[0]

    @property
    def n_numeric(self) -> int:
        return self.numeric.shape[1]

    @property
    def n_categorical(self) -> int:
        return self.codes.shape[1]

    @property
    def n_features(self) -> int:
        return self.n_numeric + self.n_categorical

    @property
    def n_levels_total(self) -> int:
        return int(self.eta0.shape[0])

    def take(self, rows: np.ndarray) -> "EncodedData":
        """The same encoding restricted to ``rows`` (global tables kept)."""
        return EncodedData(
            numeric=self.numeric[rows],
            observed=None if self.observed is None else self.observed[rows],
            codes=self.codes[rows],
            n_levels=self.n_levels,
            offsets=self.offsets,
            eta0=self.eta0,
            log_eta0=self.log_eta0,
            global_mean=self.global_mean,
            global_var=self.global_var,
            unseen=None if self.unseen is None else self.unseen[rows],
        )

    def known_cells(self) -> np.ndarray:
        """Per row, the cells the clusters can judge: observed numbers and fitted levels, shape (n_samples,).

        A missing cell (marginalised) and a level never seen in fit add the
        same cost to every cluster, so a row with none known is equally far
        from every cluster: nothing places it.
        """
        numeric = self.n_numeric if self.observed is None else self.observed.sum(axis=1)
        return numeric + (self.codes >= 0).sum(axis=1)

    def onehot(self) -> sparse.csr_matrix:
        """One-hot codes of all categorical features side by side, (n_samples, n_levels_total).

        Unseen levels (code -1) have no entry.
        """
        seen = self.codes >= 0
        columns = (self.codes + self.offsets[None, :])[seen]
        indptr = np.concatenate([[0], np.cumsum(seen.sum(axis=1))])
        values = np.ones(columns.shape[0], dtype=np.float64)
        return sparse.csr_matrix((values, columns, indptr), shape=(self.n_samples, self.n_levels_total))

    def euclidean(self) -> np.ndarray:
        """Numeric block beside the dense one-hot block, for Euclidean baselines."""
        return np.hstack([self.numeric, self.onehot().toarray()])


@dataclass
class Encoder:
    """Fitted mapping from a table to :class:`EncodedData`.

    Parameters
    ----------
    numeric, categorical : list of str
        Columns used, each in table order.
    standardize : bool
        Scale numeric columns to zero mean and unit variance. Fixed-budget
        selection ranks features by their within-cluster variance, which is
        only comparable across features on a common scale.
    missing : {"marginalise", "impute"}
        What a missing cell is (see the module docstring).
    """

    numeric: list[str]
    categorical: list[str]
    standardize: bool = True
    missing: str = "impute"
    center_: np.ndarray = field(default=_UNFITTED, repr=False)
    scale_: np.ndarray = field(default=_UNFITTED, repr=False)
    impute_: np.ndarray = field(default=_UNFITTED, repr=False)
    levels_: list[list] = field(default=_UNFITTED, repr=False)
    has_missing_level_: list[bool] = field(default=_UNFITTED, repr=False)
    n_imputed_: dict[str, int] = field(default=_UNFITTED, repr=False)
    n_marginalised_: dict[str, int] = field(default=_UNFITTED, repr=False)
    # eta_0 and the numeric variances of the fitted table travel with every later encoding.
    fitted_eta0_: np.ndarray = field(default=_UNFITTED, repr=False)
    fitted_var_: np.ndarray = field(default=_UNFITTED, repr=False)
    # template() of the current fit: encoding no rows of a 10,000-column table takes seconds.
    _template: EncodedData | None = field(default=None, init=False, repr=False, compare=False)

    def fit_transform(self, table: pd.DataFrame) -> EncodedData:
        """Learn imputation values, scales and levels from ``table``; encode it."""
        self._template = None
        raw, n_missing = self._scanned_block(table)
        self.n_imputed_ = {} if self.marginalise else {name: int(n) for name, n in zip(self.numeric, n_missing, strict=True) if n}
        observed = len(table) - n_missing
        filled = raw
        if n_missing.any():
            missing = np.isnan(raw)
            totals = np.where(missing, 0.0, raw).sum(axis=0)
            self.impute_ = np.divide(totals, observed, out=np.zeros(raw.shape[1]), where=observed > 0)
            filled = np.where(missing, self.impute_[None, :], raw)
        else:
            self.impute_ = np.divide(raw.sum(axis=0), observed, out=np.zeros(raw.shape[1]), where=observed > 0)
        if self.standardize:
            self.center_ = filled.mean(axis=0)
            spread = filled.std(axis=0)
            if self.marginalise:
                # Imputed cells sit at the mean: the observed cells' spread is the same sum over fewer cells.
                spread = spread * np.sqrt(len(table) / np.maximum(observed, 1))
            # A constant column has no scale; leave it unscaled instead of dividing by 0.
            self.scale_ = np.where(spread > 0, spread, 1.0)
        else:
            self.center_ = np.zeros(filled.shape[1])
            self.scale_ = np.ones(filled.shape[1])
        del filled
        n_rows = len(table)
        self.levels_, self.has_missing_level_ = [], []
        factorized, counts, n_categorical_missing = [], [], []
        for name in self.categorical:
            inverse, uniques = _factorize(table[name], name)
            # Counts of each distinct value, the missing cells' first.
            per_unique = np.bincount(inverse.astype(np.intp) + 1, minlength=len(uniques) + 1)
            present = np.flatnonzero(per_unique[1:])
            order = sorted(range(present.size), key=lambda u: level_sort_key(uniques[present[u]]))
            levels = [uniques[present[u]] for u in order]
            has_missing = bool(per_unique[0]) and not self.marginalise
            n_categorical_missing.append(int(per_unique[0]))
            self.levels_.append(levels)
            self.has_missing_level_.append(has_missing)
            counts.append(per_unique[1:][present[order]] if present.size else np.zeros(0, dtype=np.int64))
            if has_missing:
                counts.append(per_unique[:1])
            factorized.append((inverse, uniques))
        level_counts = np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)
        n_levels = np.array([len(levels) + has for levels, has in zip(self.levels_, self.has_missing_level_, strict=True)], dtype=np.int64)
        categorical_observed = n_rows - np.array(n_categorical_missing, dtype=np.int64)
        if self.marginalise:
            check_observed(self.numeric + self.categorical, [*observed.tolist(), *categorical_observed.tolist()])
            # eta_0 of a feature is over its observed cells.
            self.fitted_eta0_ = level_counts / np.repeat(np.maximum(categorical_observed, 1), n_levels)
        else:
            self.fitted_eta0_ = level_counts / n_rows
        n_missing_all = dict(zip(self.numeric + self.categorical, [*n_missing.tolist(), *n_categorical_missing], strict=True))
        self.n_marginalised_ = {name: int(n) for name, n in n_missing_all.items() if n} if self.marginalise else {}
        return self._encode(raw, factorized, n_rows, fit=True)

    def transform(self, table: pd.DataFrame, notes: list[str] | None = None) -> EncodedData:
        """Encode a new table with the fitted imputation, scales and levels.

        A value that is not a fitted level but is written exactly as one level
        of another type (the text "10" for the integer level 10, and the
        reverse) is that level; any other value not fitted gets code -1.

        Parameters
        ----------
        table : DataFrame
        notes : list of str, optional
            When given, receives one sentence per categorical column that has
            values not seen in fit (their rows counted) or values read as a
            level of another type.
        """
        raw, _ = self._scanned_block(table)
        factorized = [_factorize(table[name], name) for name in self.categorical]
        data = self._encode(raw, factorized, len(table))
        if notes is not None:
            notes.extend(self._level_notes(factorized))
        if factorized:
            # Not missing (factorized index >= 0) yet no fitted level (code -1): a value never seen in fit.
            given = np.column_stack([inverse >= 0 for inverse, _ in factorized])
            unseen = given & (data.codes < 0)
            if unseen.any():
                data = dataclasses.replace(data, unseen=unseen)
        return data

    def template(self) -> EncodedData:
        """An encoding of no rows: the fitted global tables (eta_0, means, variances, level offsets).

        Computed once per fit; callers read it and never write to it.
        """
        if self._template is None:
            # Encoded from empty blocks, not an empty DataFrame: building and factorizing one empty
            # column per feature took seconds on a table of 10,000 columns.
            no_rows = np.empty((0, len(self.numeric)), dtype=np.float64, order="F")
            no_codes: list[tuple[np.ndarray, list]] = [(np.empty(0, dtype=np.int64), []) for _ in self.categorical]
            self._template = self._encode(no_rows, no_codes, 0)
        return self._template

    def level_names(self) -> list[list[str]]:
        """Display names of every categorical feature's levels, in code order.

        Missing cells (under ``missing="impute"``) are the level
        ``(missing)``, or ``(missing cell)`` (then ``(missing cell 2)``, ...)
        when the column holds the text ``"(missing)"`` as an answer, so that
        the two are never one name.
        """
        names = []
        for levels, has_missing in zip(self.levels_, self.has_missing_level_, strict=True):
            written = [str(level) for level in levels]
            names.append(written + ([_missing_level_name(written)] if has_missing else []))
        return names

    def to_original_units(self, values: np.ndarray) -> np.ndarray:
        """Map encoded numeric values (any leading shape) back to table units."""
        return values * self.scale_ + self.center_

    def _level_notes(self, factorized: list) -> list[str]:
        """Per categorical column: rows whose values are not fitted levels, or match one only by their text."""
        notes = []
        for name, (inverse, uniques), levels, codes in zip(self.categorical, factorized, self.levels_, self._level_codes(),
                                                          strict=True):
            if not uniques:
                continue
            direct = np.array([codes.get(value, -1) for value in uniques], dtype=np.int64)
            by_text = _levels_by_text(uniques, levels, direct)
            rows = np.bincount(inverse[inverse >= 0], minlength=len(uniques))
            # A category dtype lists categories no row holds: only values some row holds are reported.
            held = rows > 0
            unseen = (direct < 0) & (by_text < 0) & held
            matched = (direct < 0) & (by_text >= 0) & held
            if matched.any():
                given = [uniques[i] for i in np.flatnonzero(matched)]
                fitted = [levels[by_text[i]] for i in np.flatnonzero(matched)]
                kind = "text" if isinstance(given[0], str) else type(given[0]).__name__
                notes.append(
                    f"Column {name!r}: {int(rows[matched].sum()):,} row(s) hold {kind} values ({_shown(given)}) read "
                    f"as the fitted levels {_shown(fitted, quote=False)} (the same written form, another type)."
                )
            if unseen.any():
                notes.append(
                    f"Column {name!r}: {int(rows[unseen].sum()):,} of {inverse.size:,} row(s) hold values not seen in "
                    f"fit ({_shown([uniques[i] for i in np.flatnonzero(unseen)])}); they add the same cost to every "
                    f"cluster, so these rows are placed by their other columns only."
                )
        return notes

    def _level_codes(self) -> list[dict]:
        """Each categorical feature's code of every level, made once per fitted ``levels_``.

        Encoding a few rows (the app's per-row distances) would otherwise
        spend most of its time building these. A dictionary, not an Index:
        looking up a column's few distinct values in it costs microseconds,
        where an Index of them cost a fraction of a millisecond per column,
        seconds on a table of 10,000 columns.
        """
        cached = self.__dict__.get("_level_code_cache")
        if cached is None or cached[0] is not self.levels_:
            cached = (self.levels_, [{level: code for code, level in enumerate(levels)} for levels in self.levels_])
            self.__dict__["_level_code_cache"] = cached
        return cached[1]

    def _numeric_block(self, table: pd.DataFrame) -> np.ndarray:
        """The numeric columns as float64 (NaN where missing), checked."""
        return self._scanned_block(table)[0]

    def _scanned_block(self, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """The numeric block, and the number of missing cells of each column.

        Raises :class:`CraftInputError` for infinite values and for values too
        large to square.
        """
        columns = table[self.numeric] if self.numeric else table.iloc[:, :0]
        if all(pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype) for dtype in columns.dtypes):
            # One conversion for the whole block (column-major, as pandas stores it).
            block = columns.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            block = np.empty((len(table), len(self.numeric)), dtype=np.float64, order="F")
            for j, name in enumerate(self.numeric):
                block[:, j] = numeric_column(table[name], name)
        n_missing, n_infinite, n_too_large = _kernels.scan(block, MAX_MAGNITUDE)
        if n_infinite.any():
            j = int(np.flatnonzero(n_infinite)[0])
            raise CraftInputError(
                f"Column {self.numeric[j]!r} has {int(n_infinite[j])} infinite value(s); replace them (or mark them "
                "missing) before fitting."
            )
        if n_too_large.any():
            name = self.numeric[int(np.flatnonzero(n_too_large)[0])]
            raise CraftInputError(
                f"Column {name!r} has values beyond ±{MAX_MAGNITUDE:.0e}, too large to square in double "
                "precision (variances and distances would overflow); rescale it, e.g. take its logarithm."
            )
        return block, n_missing

    def _encode(self, raw: np.ndarray, factorized: list, n_rows: int, *, fit: bool = False) -> EncodedData:
        """Encoded data from the numeric block and each categorical column's factorization.

        When fitting, also the variance of the encoded numeric columns, which
        travels with every later encoding.
        """
        numeric, sums = _kernels.standardized(raw, self.impute_, self.center_, self.scale_)
        observed = None
        if self.marginalise and raw.size:
            observed = ~np.isnan(raw)
            observed = None if observed.all() else observed
        if fit:
            self.fitted_var_ = _kernels.column_variance(numeric, sums)
            if observed is not None:
                # Imputed cells sit at the mean: the observed cells' variance is the same sum over fewer cells.
                self.fitted_var_ = self.fitted_var_ * n_rows / np.maximum(observed.sum(axis=0), 1)
        n_levels = np.array(
            [len(levels) + has_missing for levels, has_missing in zip(self.levels_, self.has_missing_level_, strict=True)],
            dtype=np.int64,
        )
        offsets = np.concatenate([[0], np.cumsum(n_levels)[:-1]]).astype(np.int64) if n_levels.size else n_levels
        if factorized:
            inverse = np.empty((len(factorized), n_rows), dtype=np.int64)
            lookups = []
            level_codes = self._level_codes()
            for q, (codes, uniques) in enumerate(factorized):
                inverse[q] = codes
                lookups.append(_level_lookup(uniques, level_codes[q], self.levels_[q], self.has_missing_level_[q]))
            width = max(lookup.size for lookup in lookups)
            lookup = np.full((len(lookups), width), -1, dtype=np.int64)
            for q, values in enumerate(lookups):
                lookup[q, : values.size] = values
            codes = _kernels.gather_codes(inverse, lookup)
        else:
            codes = np.empty((n_rows, 0), dtype=np.int64)
        return EncodedData(
            numeric=numeric,
            observed=observed,
            codes=codes,
            n_levels=n_levels,
            offsets=offsets,
            eta0=self.fitted_eta0_,
            log_eta0=np.log(self.fitted_eta0_),
            global_mean=(self.impute_ - self.center_) / self.scale_,
            global_var=self.fitted_var_,
        )

    @property
    def marginalise(self) -> bool:
        return self.missing == "marginalise"


def check_observed(names: list[str], n_observed: list[int]) -> None:
    """Refuse a used column with no observed cell when missing cells are marginalised.

    Such a column would contribute nothing to any cost or statistic, yet
    count in the model's number of features D; leaving it out is the same
    fit without the pretence.
    """
    empty = [name for name, n in zip(names, n_observed, strict=True) if n == 0]
    if empty:
        raise CraftInputError(
            f"Column(s) {empty[:5]} have no observed value; with missing='marginalise' they carry no information. "
            "Leave them out (categorical='auto' ignores all-missing columns)."
        )


def _missing_level_name(levels: list[str]) -> str:
    """The name of the missing cells' level: one that no written level has."""
    taken = set(levels)
    if MISSING_LEVEL not in taken:
        return MISSING_LEVEL
    candidates = ("(missing cell)", *(f"(missing cell {i})" for i in range(2, len(taken) + 3)))
    return next(name for name in candidates if name not in taken)


def level_sort_key(level):
    # Levels of mixed types (1, "1", True) still need one deterministic order.
    return (type(level).__name__, str(level))


def numeric_column(column: pd.Series, name: str) -> np.ndarray:
    if pd.api.types.is_datetime64_any_dtype(column.dtype) or pd.api.types.is_timedelta64_dtype(column.dtype) \
            or isinstance(column.dtype, pd.PeriodDtype):
        # Their integer form (nanoseconds) would be taken for the number silently.
        raise CraftInputError(
            f"Column {name!r} is numeric in the schema but holds {column.dtype} values; convert them to numbers "
            f"(e.g. days since a date) or make the column categorical."
        )
    if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype == object or pd.api.types.is_string_dtype(column):
        converted = pd.to_numeric(column, errors="coerce")
        bad = converted.isna() & column.notna()
        if bad.any():
            example = column[bad].iloc[0]
            raise CraftInputError(
                f"Column {name!r} is numeric in the schema but {int(bad.sum())} value(s) are not numbers "
                f"(e.g. {str(example)[:40]!r}); make it categorical or clean it."
            )
        column = converted
    try:
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as error:
        raise CraftInputError(f"Column {name!r} is numeric in the schema but cannot be read as numbers: {error}.") from None
    return values


def _factorize(column: pd.Series, name: str) -> tuple[np.ndarray, list]:
    """Index of every cell into the column's distinct values (-1 if missing), and those values.

    Factorizing hashes the column in native code (Arrow's for Arrow strings)
    so that each distinct value is looked up once, instead of making a Python
    object of every cell; a categorical column is factorized already.
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        inverse = column.cat.codes.to_numpy()
        # Its categories are distinct values whether or not they occur.
        return inverse, column.cat.categories.tolist()
    try:
        inverse, uniques = pd.factorize(column, use_na_sentinel=True)
    except TypeError:  # list/dict/array cells (nested Parquet, say) cannot be levels
        kinds = sorted({type(v).__name__ for v in column.dropna().iloc[:1000]
                        if not isinstance(v, (str, bytes, int, float, bool, np.generic))})
        raise CraftInputError(
            f"Column {name!r} holds cells of type {', '.join(kinds) or 'unhashable'}, which cannot be levels of a "
            f"categorical feature; convert them to text (e.g. df[{name!r}].map(str)) or leave the column out."
        ) from None
    return inverse, uniques.tolist()


def _level_lookup(uniques: list, level_codes: dict, levels: list, has_missing_level: bool) -> np.ndarray:
    """Level code of a missing cell, then of each distinct value (-1 if not a level).

    ``level_codes`` maps each of ``levels`` to its code; a value that is not a
    level is matched by its written form (:func:`_levels_by_text`).

    A missing value gets ``len(level_codes)`` if it is a level of its own, else -1.
    """
    level_of_unique = np.array([level_codes.get(value, -1) for value in uniques], dtype=np.int64)
    if (level_of_unique < 0).any():
        level_of_unique = np.where(level_of_unique < 0, _levels_by_text(uniques, levels, level_of_unique),
                                   level_of_unique)
    missing = len(level_codes) if has_missing_level else -1
    return np.concatenate([[missing], level_of_unique]).astype(np.int64)


def _levels_by_text(uniques: list, levels: list, direct: np.ndarray) -> np.ndarray:
    """For each value not found among the levels, the one level written exactly as it is (-1 if none or several).

    Text sent for numbers ("10" for the fitted 10), or the reverse: the same written form, another type.
    Only a written form that one level alone has is matched, so nothing is guessed.
    """
    result = np.full(len(uniques), -1, dtype=np.int64)
    missed = np.flatnonzero(direct < 0)
    if not missed.size or not len(levels):
        return result
    written = pd.Series([str(level) for level in levels])
    unique_form = written[~written.duplicated(keep=False)]
    code_of = dict(zip(unique_form.tolist(), unique_form.index.tolist(), strict=True))
    for i in missed:
        result[i] = code_of.get(str(uniques[i]), -1)
    return result


def _shown(values: list, limit: int = 5, *, quote: bool = True) -> str:
    shown = sorted(values, key=level_sort_key)[:limit]
    text = ", ".join(repr(v) if quote else str(v) for v in shown)
    return text + (f", ... ({len(values):,} in all)" if len(values) > limit else "")
