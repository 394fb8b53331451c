"""From a table and its schema to the arrays the engine works on.

Numeric columns become a float64 matrix (mean-imputed, standardized by
default); categorical columns become integer level codes, one-hot encoded once
per fit as a sparse matrix so that per-cluster categorical costs are a single
sparse-dense product. A missing categorical value is a level of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from .exceptions import CraftInputError

MISSING_LEVEL = "(missing)"
# Beyond this a value's square, summed over rows, can overflow float64.
MAX_MAGNITUDE = 1e150


@dataclass(frozen=True, eq=False)
class EncodedData:
    """Arrays of one table in the engine's feature order (numeric, then categorical).

    Attributes
    ----------
    numeric : ndarray of shape (n_samples, n_numeric)
        Imputed (and, when asked, standardized) numeric values.
    numeric_sq : ndarray of shape (n_samples, n_numeric)
        ``numeric ** 2``, kept because every pass needs it.
    codes : ndarray of shape (n_samples, n_categorical)
        Level codes per categorical feature; -1 marks a level unseen in fit.
        Unseen levels add no cost, the same (zero) for every cluster.
    n_levels, offsets : ndarray of shape (n_categorical,)
        Feature ``q`` owns positions ``offsets[q]:offsets[q] + n_levels[q]``
        of the flat level axis used by ``eta0`` and per-cluster tables.
    log_eta0 : ndarray of shape (n_levels_total,)
        Log of the global level distribution eta_0 (from the fitted table).
    eta0 : ndarray of shape (n_levels_total,)
    global_var : ndarray of shape (n_numeric,)
        Variance of each numeric feature in the fitted table, in encoded units.
    """

    numeric: np.ndarray
    numeric_sq: np.ndarray
    codes: np.ndarray
    n_levels: np.ndarray
    offsets: np.ndarray
    eta0: np.ndarray
    log_eta0: np.ndarray
    global_var: np.ndarray

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
            numeric_sq=self.numeric_sq[rows],
            codes=self.codes[rows],
            n_levels=self.n_levels,
            offsets=self.offsets,
            eta0=self.eta0,
            log_eta0=self.log_eta0,
            global_var=self.global_var,
        )

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
    """

    numeric: list[str]
    categorical: list[str]
    standardize: bool = True
    center_: np.ndarray = field(default=None, repr=False)
    scale_: np.ndarray = field(default=None, repr=False)
    impute_: np.ndarray = field(default=None, repr=False)
    levels_: list[list] = field(default=None, repr=False)
    has_missing_level_: list[bool] = field(default=None, repr=False)
    n_imputed_: dict[str, int] = field(default=None, repr=False)
    # eta_0 and the numeric variances of the fitted table travel with every later encoding.
    fitted_eta0_: np.ndarray = field(default=None, repr=False)
    fitted_var_: np.ndarray = field(default=None, repr=False)

    def fit_transform(self, table: pd.DataFrame) -> EncodedData:
        """Learn imputation values, scales and levels from ``table``; encode it."""
        raw = self._numeric_block(table)
        missing = np.isnan(raw)
        self.n_imputed_ = {name: int(n) for name, n in zip(self.numeric, missing.sum(axis=0)) if n}
        observed = (~missing).sum(axis=0)
        totals = np.where(missing, 0.0, raw).sum(axis=0)
        self.impute_ = np.divide(totals, observed, out=np.zeros(raw.shape[1]), where=observed > 0)
        filled = np.where(missing, self.impute_[None, :], raw)
        if self.standardize:
            self.center_ = filled.mean(axis=0)
            spread = filled.std(axis=0)
            # A constant column has no scale; leave it unscaled instead of dividing by 0.
            self.scale_ = np.where(spread > 0, spread, 1.0)
        else:
            self.center_ = np.zeros(filled.shape[1])
            self.scale_ = np.ones(filled.shape[1])
        self.levels_, self.has_missing_level_ = [], []
        for name in self.categorical:
            column = table[name]
            try:
                present = pd.unique(column.dropna())
            except TypeError as error:
                raise _unhashable(name, column, error) from None
            self.levels_.append(sorted(present.tolist(), key=_level_sort_key))
            self.has_missing_level_.append(bool(column.isna().any()))
        return self._encode(filled, table, fit=True)

    def transform(self, table: pd.DataFrame) -> EncodedData:
        """Encode a new table with the fitted imputation, scales and levels."""
        raw = self._numeric_block(table)
        filled = np.where(np.isnan(raw), self.impute_[None, :], raw)
        return self._encode(filled, table, fit=False)

    def level_names(self) -> list[list[str]]:
        """Display names of every categorical feature's levels, in code order."""
        return [
            [str(level) for level in levels] + ([MISSING_LEVEL] if has_missing else [])
            for levels, has_missing in zip(self.levels_, self.has_missing_level_)
        ]

    def to_original_units(self, values: np.ndarray) -> np.ndarray:
        """Map encoded numeric values (any leading shape) back to table units."""
        return values * self.scale_ + self.center_

    def _numeric_block(self, table: pd.DataFrame) -> np.ndarray:
        columns = table[self.numeric] if self.numeric else table.iloc[:, :0]
        block = None
        if all(pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype) for dtype in columns.dtypes):
            # One conversion for the whole block; per-column checks only name a culprit.
            block = columns.to_numpy(dtype=np.float64, na_value=np.nan)
            if np.isinf(block).any():
                block = None
        if block is None:
            block = np.empty((len(table), len(self.numeric)), dtype=np.float64)
            for j, name in enumerate(self.numeric):
                block[:, j] = _numeric_column(table[name], name)
        with np.errstate(invalid="ignore"):
            too_large = np.flatnonzero((np.abs(block) > MAX_MAGNITUDE).any(axis=0))
        if too_large.size:
            name = self.numeric[too_large[0]]
            raise CraftInputError(
                f"Column {name!r} has values beyond ±{MAX_MAGNITUDE:.0e}, too large to square in double "
                "precision (variances and distances would overflow); rescale it, e.g. take its logarithm."
            )
        return block

    def _encode(self, filled: np.ndarray, table: pd.DataFrame, *, fit: bool) -> EncodedData:
        numeric = np.ascontiguousarray((filled - self.center_) / self.scale_)
        n_levels = np.array(
            [len(levels) + has_missing for levels, has_missing in zip(self.levels_, self.has_missing_level_)],
            dtype=np.int64,
        )
        offsets = np.concatenate([[0], np.cumsum(n_levels)[:-1]]).astype(np.int64) if n_levels.size else n_levels
        codes = np.empty((len(table), len(self.categorical)), dtype=np.int64)
        for q, name in enumerate(self.categorical):
            try:
                codes[:, q] = _codes(table[name], self.levels_[q], self.has_missing_level_[q])
            except TypeError as error:
                raise _unhashable(name, table[name], error) from None
        if fit:
            flat = (codes + offsets[None, :]).ravel()
            counts = np.bincount(flat, minlength=int(n_levels.sum()))
            eta0 = counts / len(table)
            self.fitted_eta0_ = eta0
            self.fitted_var_ = numeric.var(axis=0)
        eta0 = self.fitted_eta0_
        return EncodedData(
            numeric=numeric,
            numeric_sq=numeric * numeric,
            codes=codes,
            n_levels=n_levels,
            offsets=offsets,
            eta0=eta0,
            log_eta0=np.log(eta0),
            global_var=self.fitted_var_,
        )


def _level_sort_key(level):
    # Levels of mixed types (1, "1", True) still need one deterministic order.
    return (type(level).__name__, str(level))


def _unhashable(name: str, column: pd.Series, error: TypeError) -> CraftInputError:
    """The error for a categorical column with list/dict/array cells (nested Parquet, say)."""
    kinds = sorted({type(v).__name__ for v in column.dropna().iloc[:1000]
                    if not isinstance(v, (str, bytes, int, float, bool, np.generic))})
    what = ", ".join(kinds) or str(error)
    return CraftInputError(
        f"Column {name!r} holds cells of type {what}, which cannot be levels of a categorical feature; convert "
        f"them to text (e.g. df[{name!r}].map(str)) or leave the column out."
    )


def _numeric_column(column: pd.Series, name: str) -> np.ndarray:
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
    n_inf = int(np.isinf(values).sum())
    if n_inf:
        raise CraftInputError(
            f"Column {name!r} has {n_inf} infinite value(s); replace them (or mark them missing) before fitting."
        )
    return values


def _codes(column: pd.Series, levels: list, has_missing_level: bool) -> np.ndarray:
    """Level code of every value: -1 for a level not in ``levels``; a missing
    value gets ``len(levels)`` if it is a level of its own, else -1."""
    # Factorizing first hashes the column in native code (Arrow's for Arrow
    # strings) and looks each distinct value up once, instead of making a
    # Python object of every cell: 4-8x faster on a million rows.
    inverse, uniques = pd.factorize(column, use_na_sentinel=True)
    level_of_unique = pd.Index(levels, dtype=object).get_indexer(pd.Index(uniques).astype(object))
    missing = len(levels) if has_missing_level else -1
    # A missing value has inverse -1, which reads the last entry.
    lookup = np.append(level_of_unique.astype(np.int64), np.int64(missing))
    return lookup[inverse]
