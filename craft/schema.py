"""Column roles of a table: which columns are clustered as numeric, which as
categorical, and which are left out, each with a reason a user can read.

:func:`infer_schema` suggests the roles from the column dtypes and values;
the user decides with :meth:`Schema.override`.
"""

from __future__ import annotations

import numbers
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pandas.tseries.api import guess_datetime_format

from .exceptions import CraftInputError
from .limits import check_columns

__all__ = ["Schema", "infer_schema"]

ROLES = ("numeric", "categorical", "ignored")

# A text or integer column is taken for an identifier only in tables with more
# rows than this: in a tiny table every column is "unique per row".
_MIN_ROWS_FOR_IDENTIFIER = 20
# Text columns with more levels than this, and more than half of their values
# distinct, are treated as free text or identifiers.
_FREE_TEXT_MIN_LEVELS = 50
_FREE_TEXT_MIN_SHARE = 0.5
# Share of a text column's distinct values that must parse as numbers for the
# reason to say that the column looks numeric.
_NUMERIC_LOOKING_SHARE = 0.9
# At most this many distinct values are parsed to decide that.
_NUMERIC_LOOKING_SAMPLE = 1000
# An integer column with at least this share of its non-missing values
# distinct (in a table of more than 20 rows), every value non-negative and
# written with the same number of digits (at least 4), is taken for an
# identifier (customer numbers, zip codes read as numbers). Unique integers
# of varying width (a shuffled 0..49, amounts in whole units) stay numeric.
_NEARLY_UNIQUE_SHARE = 0.95
# A text column whose first distinct value starts so is tried as ISO 8601 dates.
_DIGIT_RUNS = re.compile(r"\d+")
_ISO_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]|$)")
# Integers beyond this in magnitude are not all float64 values: as numbers,
# neighbours (identifiers, account numbers) would round into one value.
_FLOAT_EXACT = 2**53


class _FrozenMapping(Mapping):
    """A read-only, picklable, hashable mapping that keeps insertion order."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, str]):
        self._data = dict(data)

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(tuple(self._data.items()))

    def __repr__(self) -> str:
        return repr(self._data)

    def __getstate__(self) -> dict[str, str]:
        return self._data

    def __setstate__(self, state: dict[str, str]) -> None:
        self._data = state


@dataclass(frozen=True)
class Schema:
    """Roles of the columns of one table.

    Every column of the table is in exactly one of ``numeric``,
    ``categorical`` and ``ignored``, and has one reason in ``reasons``. The
    keys of ``reasons`` are in the table's column order, and each role tuple
    keeps that order.

    Parameters
    ----------
    numeric : tuple of str
        Columns clustered as real numbers (Gaussian-like, per-cluster means).
    categorical : tuple of str
        Columns clustered as categories (per-cluster level frequencies).
    ignored : tuple of str
        Columns left out of the clustering.
    reasons : Mapping of str to str
        One human-readable reason per column, in table order, e.g.
        ``"integer with 3 distinct values (≤ 20) → categorical"``.

    Attributes
    ----------
    used : tuple of str
        ``numeric`` and ``categorical`` columns, in table order.
    columns : tuple of str
        All columns, in table order.

    Raises
    ------
    CraftInputError
        If a column is in two roles, or the columns of the roles and of
        ``reasons`` differ.

    See Also
    --------
    infer_schema : Suggest a schema for a table.

    Examples
    --------
    >>> s = Schema(numeric=("age",), categorical=("city",), ignored=("id",),
    ...            reasons={"id": "identifier", "age": "float", "city": "text"})
    >>> s.used
    ('age', 'city')
    >>> s.override(numeric=["id"]).numeric
    ('id', 'age')
    """

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    ignored: tuple[str, ...]
    reasons: Mapping[str, str]
    _role_of: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        roles: dict[str, str] = {}
        for role in ROLES:
            names = _as_names(getattr(self, role), role)
            object.__setattr__(self, role, names)
            for column in names:
                if column in roles:
                    raise CraftInputError(
                        f"column {column!r} has two roles: {roles[column]} and {role}"
                    )
                roles[column] = role
        if not isinstance(self.reasons, Mapping):
            raise CraftInputError(
                f"reasons must be a mapping from column to reason, "
                f"got {type(self.reasons).__name__}"
            )
        # Each column's role by name, so that role() is a lookup: on a table of 10,000
        # columns a scan of the role tuples per column made every per-column loop quadratic.
        object.__setattr__(self, "_role_of", roles)
        reasons = _FrozenMapping({k: str(v) for k, v in self.reasons.items()})
        missing = [c for c in roles if c not in reasons]
        extra = [c for c in reasons if c not in roles]
        if missing:
            raise CraftInputError(f"no reason given for column(s) {_quote_list(missing)}")
        if extra:
            raise CraftInputError(
                f"reason given for column(s) {_quote_list(extra)} that have no role"
            )
        object.__setattr__(self, "reasons", reasons)

    def __hash__(self) -> int:
        return hash((self.numeric, self.categorical, self.ignored, self.reasons))

    @property
    def columns(self) -> tuple[str, ...]:
        """All columns, in table order."""
        return tuple(self.reasons)

    @property
    def used(self) -> tuple[str, ...]:
        """Numeric and categorical columns, in table order."""
        used = set(self.numeric) | set(self.categorical)
        return tuple(c for c in self.reasons if c in used)

    def role(self, column: str) -> str:
        """Role of one column: ``"numeric"``, ``"categorical"`` or ``"ignored"``.

        Raises
        ------
        CraftInputError
            If the column is not in the schema.

        Examples
        --------
        >>> infer_schema(pd.DataFrame({"x": [1.5, 2.5]})).role("x")
        'numeric'
        """
        role = self._role_of.get(column)
        if role is None:
            raise CraftInputError(_unknown_message([column], self.columns))
        return role

    def override(
        self,
        *,
        numeric: Iterable[str] | str = (),
        categorical: Iterable[str] | str = (),
        ignored: Iterable[str] | str = (),
    ) -> Schema:
        """Return a copy with the named columns moved to the given roles.

        The reason of every moved column becomes ``"set by user"``; the other
        columns keep their role and reason. A single string names one column.

        Parameters
        ----------
        numeric, categorical, ignored : iterable of str or str
            Columns to move into that role.

        Returns
        -------
        Schema
            A new schema; this one is unchanged.

        Raises
        ------
        CraftInputError
            If a name is not a column of the table, or one column is named in
            two roles.

        Examples
        --------
        >>> s = infer_schema(pd.DataFrame({"legs": [0, 2, 4, 4], "w": [1.5, 2.0, 3.5, 1.0]}))
        >>> s.categorical
        ('legs',)
        >>> t = s.override(numeric="legs")
        >>> t.numeric, t.reasons["legs"]
        (('legs', 'w'), 'set by user')
        """
        wanted: dict[str, str] = {}
        for role, names in (("numeric", numeric), ("categorical", categorical),
                            ("ignored", ignored)):
            for column in _as_names(names, role):
                if column in wanted and wanted[column] != role:
                    raise CraftInputError(
                        f"column {column!r} is named in both {wanted[column]} and {role}"
                    )
                wanted[column] = role
        unknown = [c for c in wanted if c not in self.reasons]
        if unknown:
            raise CraftInputError(_unknown_message(unknown, self.columns))
        roles: dict[str, list[str]] = {role: [] for role in ROLES}
        reasons = {}
        for column in self.reasons:
            if column in wanted:
                roles[wanted[column]].append(column)
                reasons[column] = "set by user"
            else:
                roles[self.role(column)].append(column)
                reasons[column] = self.reasons[column]
        return Schema(
            numeric=tuple(roles["numeric"]),
            categorical=tuple(roles["categorical"]),
            ignored=tuple(roles["ignored"]),
            reasons=reasons,
        )

    def to_frame(self) -> pd.DataFrame:
        """The schema as a table for display.

        Returns
        -------
        pandas.DataFrame
            Columns ``column``, ``role``, ``reason``; one row per column of
            the table, in table order.

        Examples
        --------
        >>> infer_schema(pd.DataFrame({"x": [1.5, 2.5]})).to_frame()
          column     role           reason
        0      x  numeric  float → numeric
        """
        role_of = {c: role for role in ROLES for c in getattr(self, role)}
        return pd.DataFrame(
            {
                "column": list(self.reasons),
                "role": [role_of[c] for c in self.reasons],
                "reason": list(self.reasons.values()),
            },
            columns=["column", "role", "reason"],
        )


def infer_schema(df: pd.DataFrame, *, max_categorical_levels: int = 20) -> Schema:
    """Suggest a role for every column of a table, with the reason.

    The rules, checked in this order for each column:

    * all values missing → ignored;
    * datetime or period dtype, or Python dates → ignored, the reason giving
      the number of distinct days and their range (name the column
      categorical to use each value as a level); timedelta → ignored (not
      supported: convert to numbers first);
    * one distinct non-missing value (constant, with or without missing
      cells) → ignored;
    * bool → categorical; ``category`` dtype → categorical;
    * float → numeric (also when the values are whole numbers);
    * integer: unique for every row and strictly monotonic in a table of
      more than 20 rows → ignored (a row index or identifier); at most
      ``max_categorical_levels`` distinct values → categorical; nearly
      unique (at least 95% of the non-missing values distinct, more than 20
      of them) with every value non-negative and of one width of at least 4
      digits → ignored (an identifier: customer numbers, zip codes);
      otherwise numeric;
    * codes: integers beyond 2**53 in magnitude (float64 would round
      neighbours into one value), and text of integers written in digits
      with leading zeros (``"00123"``) or beyond 2**53, as
      :func:`craft.io.read_table` keeps them: unique for every row →
      ignored (an identifier); at most ``max_categorical_levels`` distinct
      values → categorical; otherwise ignored (identifier-like codes, such as
      zip codes);
    * text dates: every distinct text value parses as a date in ISO 8601, or
      in the one format pandas guesses from the first value (with a day, a
      month and a year; both orders when day and month are ambiguous, said in
      the reason) → ignored, with the number of distinct days and their
      range (name it categorical to use each written date as a level);
    * text (``str``/``object``): if more than ``max_categorical_levels``
      distinct values and most of them parse as numbers → categorical, and
      the reason says that the column looks numeric (the stray text values
      are not converted here); unique for every row in a table of more than
      20 rows → ignored (an identifier); more than 50 distinct values that
      make up more than half of the non-missing values → ignored (free text
      or identifier); otherwise categorical.

    An ``object`` column that holds only numbers follows the integer or
    float rule; one that holds only booleans is categorical.

    Parameters
    ----------
    df : pandas.DataFrame
        The table, one row per item. Column labels must be unique strings:
        :func:`craft.io.read_table` returns such labels; convert others with
        ``df.columns = df.columns.map(str)``.
    max_categorical_levels : int, default=20
        Integer columns with at most this many distinct values are
        suggested as categorical.

    Returns
    -------
    Schema
        Every column in exactly one role, each with its reason.

    Raises
    ------
    CraftInputError
        If the table has no columns or no rows, a label is not a string or
        is duplicated, ``max_categorical_levels`` is not a positive integer,
        or the table has more than :data:`craft.limits.MAX_COLUMNS` columns
        (a fixed limit, the same on every machine).

    Examples
    --------
    >>> df = pd.DataFrame({
    ...     "id": range(100),
    ...     "height": np.linspace(1.5, 2.0, 100),
    ...     "grade": [1, 2, 3, 4] * 25,
    ...     "city": ["Paris", "Lyon"] * 50,
    ...     "country": "FR",
    ... })
    >>> s = infer_schema(df)
    >>> s.numeric, s.categorical, s.ignored
    (('height',), ('grade', 'city'), ('id', 'country'))
    >>> s.reasons["grade"]
    'integer with 4 distinct values (≤ 20) → categorical'
    >>> s.reasons["country"]
    "constant (single value 'FR') → ignored"
    """
    if not isinstance(df, pd.DataFrame):
        raise CraftInputError(f"expected a pandas DataFrame, got {type(df).__name__}")
    if (
        isinstance(max_categorical_levels, bool)
        or not isinstance(max_categorical_levels, numbers.Integral)
        or max_categorical_levels < 1
    ):
        raise CraftInputError(
            f"max_categorical_levels must be a positive integer, "
            f"got {max_categorical_levels!r}"
        )
    if df.shape[1] == 0:
        raise CraftInputError("the table has no columns")
    if df.shape[0] == 0:
        raise CraftInputError(
            f"the table has no rows (only the {df.shape[1]} column names)"
        )
    for label in df.columns:
        if not isinstance(label, str):
            raise CraftInputError(
                f"column label {label!r} is a {type(label).__name__}, not a string; "
                f"convert the labels first: df.columns = df.columns.map(str)"
            )
    duplicated = df.columns[df.columns.duplicated()].unique().tolist()
    if duplicated:
        raise CraftInputError(
            f"duplicated column name(s) {_quote_list(duplicated)}; every column needs "
            f"a unique name"
        )

    # Before the per-column work, which is what a very wide table pays for
    # (the cells are already in memory: only the columns are bounded here,
    # by the fixed limit, never by the machine's free memory).
    check_columns(df.shape[1])
    read = df.attrs.get("craft_read")
    notes = dict(getattr(read, "column_notes", {}) or {})
    nested = set(getattr(read, "nested", ()) or ())

    roles = {role: [] for role in ROLES}
    reasons = {}
    for position, column in enumerate(df.columns):
        if column in nested:
            role, reason = "ignored", "nested values (lists or structs) → ignored (not supported)"
        else:
            role, reason = _infer_column(df.iloc[:, position], int(max_categorical_levels))
        if notes.get(column):
            reason = f"{reason} ({notes[column]})"
        roles[role].append(column)
        reasons[column] = reason
    return Schema(
        numeric=tuple(roles["numeric"]),
        categorical=tuple(roles["categorical"]),
        ignored=tuple(roles["ignored"]),
        reasons=reasons,
    )


def _infer_column(s: pd.Series, max_levels: int) -> tuple[str, str]:  # noqa: C901 - one ordered rule list, a reason per rule
    """Role and reason for one column (a non-empty Series)."""
    dtype = s.dtype
    n_rows = len(s)
    try:
        missing = s.isna()
    except (TypeError, ValueError):  # exotic extension arrays
        return "ignored", f"unsupported dtype {dtype} → ignored"
    n_missing = int(missing.sum())
    if n_missing == n_rows:
        return "ignored", "all values missing → ignored"

    if isinstance(dtype, pd.PeriodDtype) or pd.api.types.is_datetime64_any_dtype(dtype):
        return "ignored", _date_reason("datetime", _as_stamps(s[~missing]))
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "ignored", "timedelta → ignored (not supported; convert to numbers)"

    values = s[~missing] if n_missing else s
    kind = _value_kind(values)
    if kind == "datetime":
        return "ignored", _date_reason("datetime values", _as_stamps(values))
    if kind == "timedelta":
        return "ignored", "timedelta values → ignored (not supported; convert to numbers or categories)"
    if kind == "complex":
        return "ignored", "complex numbers → ignored (not supported)"

    try:
        n_levels = _count_levels(values, kind)
    except TypeError:  # unhashable values: lists, dicts, arrays
        type_name = type(values.iloc[0]).__name__
        return "ignored", f"values of type {type_name} are not supported → ignored"

    if n_levels == 1:
        extra = f" plus {n_missing} missing" if n_missing else ""
        return "ignored", (
            f"constant (single value {_short(values.iloc[0])}{extra}) → ignored"
        )

    if kind == "bool":
        return "categorical", "boolean → categorical"
    if kind == "category":
        return "categorical", f"category dtype with {n_levels} levels → categorical"
    if kind == "float":
        if _has_infinite(values):
            return "numeric", (
                "float → numeric (contains infinite values, which the clustering "
                "rejects: fix or remove them)"
            )
        return "numeric", "float → numeric"
    if kind == "integer" and _beyond_float(values):
        return _code_role(f"integers beyond 2**53 (e.g. {_short(values.iloc[int(np.argmax(np.abs(values.to_numpy(dtype=object))))])})",
                          n_levels, n_rows - n_missing, max_levels)
    if kind == "integer":
        if (
            n_missing == 0
            and n_levels == n_rows
            and n_rows > _MIN_ROWS_FOR_IDENTIFIER
            and (values.is_monotonic_increasing or values.is_monotonic_decreasing)
        ):
            return "ignored", (
                "integer, unique for every row and strictly monotonic "
                "(looks like a row index or identifier) → ignored"
            )
        if n_levels <= max_levels:
            return "categorical", (
                f"integer with {n_levels} distinct values (≤ {max_levels}) → categorical"
            )
        n_present = n_rows - n_missing
        width = _fixed_width(values)
        if n_present > _MIN_ROWS_FOR_IDENTIFIER and n_levels >= _NEARLY_UNIQUE_SHARE * n_present and width:
            return "ignored", (
                f"integer, nearly unique ({n_levels:,} distinct values in {n_present:,} non-missing cells, "
                f"≥ {_NEARLY_UNIQUE_SHARE:.0%}) and every value {width} digits long: looks like an identifier "
                f"→ ignored (name it numeric to use it as a number)"
            )
        return "numeric", (
            f"integer with {n_levels} distinct values (> {max_levels}) → numeric"
        )
    # Text, bytes and mixed values.
    what = "text" if kind == "text" else "mixed values"
    if kind == "mixed":
        what += _merged_note(values)
    codes = _digit_codes(values) if kind == "text" else None
    if codes is not None:
        return _code_role(codes, n_levels, n_rows - n_missing, max_levels)
    dates = _text_dates(values) if kind == "text" else None
    if dates is not None:
        return "ignored", _date_reason(dates[0], dates[1], level="each written date")
    if n_levels > max_levels:
        share, stray = _numeric_looking(values)
        if share >= _NUMERIC_LOOKING_SHARE:
            example = f", e.g. {_short(stray)}" if stray is not None else ""
            return "categorical", (
                f"{what} with {n_levels} distinct values, {share:.0%} of them numbers "
                f"but not all{example} → categorical (make every value a number, or "
                f"a missing cell, to use it as numeric)"
            )
    if n_missing == 0 and n_levels == n_rows and n_rows > _MIN_ROWS_FOR_IDENTIFIER:
        return "ignored", f"{what}, unique for every row (looks like an identifier) → ignored"
    n_present = n_rows - n_missing
    if n_levels > _FREE_TEXT_MIN_LEVELS and n_levels > _FREE_TEXT_MIN_SHARE * n_present:
        return "ignored", (
            f"free text / identifier-like: {n_levels} distinct values in "
            f"{n_present} non-missing cells → ignored"
        )
    if n_levels > max_levels:
        return "categorical", (
            f"{what} with {n_levels} distinct values → categorical "
            f"(many levels: more than {max_levels})"
        )
    return "categorical", f"{what} with {n_levels} distinct values → categorical"


def _code_role(what: str, n_levels: int, n_present: int, max_levels: int) -> tuple[str, str]:
    """Role of a column of codes written as integers, which as numbers would
    lose their zeros or round into each other: an identifier when unique
    for every row, else categorical with few levels, else ignored."""
    if n_levels == n_present:
        return "ignored", f"{what}, unique for every row (an identifier) → ignored"
    if n_levels <= max_levels:
        return "categorical", f"{what} with {n_levels} distinct values (≤ {max_levels}) → categorical"
    return "ignored", (
        f"{what}, {n_levels:,} distinct values (> {max_levels}): identifier-like codes, such as zip codes or "
        f"account numbers → ignored (name it categorical to use each value as a level)"
    )


def _date_reason(what: str, stamps: pd.Series, *, level: str = "each value") -> str:
    """Why a column of dates is ignored, with how many distinct days it spans
    and how to switch it on (as levels: the encoder refuses dates as numbers)."""
    days = stamps.dropna().dt.normalize()
    span = f"{days.nunique():,} distinct days, {days.min():%Y-%m-%d} to {days.max():%Y-%m-%d}"
    return (f"{what}: looks like a date ({span}) → ignored (a date is neither a measurement nor a "
            f"category; name it categorical to use {level} as a level)")


def _as_stamps(values: pd.Series) -> pd.Series:
    """Datetime, period or Python date/datetime values as timestamps (UTC
    when they carry time zones, so that mixed zones compare)."""
    if isinstance(values.dtype, pd.PeriodDtype):
        return values.dt.to_timestamp()
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        return values
    return pd.to_datetime(values, errors="coerce", utc=True)


def _text_dates(values: pd.Series) -> tuple[str, pd.Series] | None:
    """Whether every distinct text value parses as a date in one format: ISO
    8601 (``2024-01-31``, with or without a time) or the single format pandas
    guesses from the first value (``31/01/2024``, ``Jan 31, 2024``), taken
    only when it has a day, a month and a year. Returns what the column
    looks like and the parsed distinct values, or None."""
    first = values.iloc[0]
    if not isinstance(first, str) or len(_DIGIT_RUNS.findall(first)) < 2:
        return None  # a date with a day and a year has two runs of digits at least (cheap: wide tables)
    uniques = pd.Series(pd.unique(values), dtype=object)
    if not all(isinstance(v, str) for v in uniques):
        return None  # bytes
    uniques = uniques.map(str.strip)
    first = uniques.iloc[0]
    if _ISO_DATE.match(first):
        candidates = ["ISO8601"]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pandas warns when a guess is day-first
            guesses = (guess_datetime_format(first), guess_datetime_format(first, dayfirst=True))
        # "May" is a full and an abbreviated month name: both spellings are tried.
        guesses += tuple(g.replace("%B", "%b") for g in guesses if g)
        candidates = list(dict.fromkeys(
            g for g in guesses if g and "%d" in g and ("%Y" in g or "%y" in g) and any(m in g for m in ("%m", "%b", "%B"))))
    parsed = {}
    for candidate in candidates:
        try:
            parsed[candidate] = pd.to_datetime(uniques, format=candidate)
        except (ValueError, OverflowError, TypeError):
            continue
    if not parsed:
        return None
    formats = [f for i, f in enumerate(parsed) if not any(parsed[f].equals(parsed[g]) for g in list(parsed)[:i])]
    if len(formats) > 1:
        # 03/04/2024 is March or April: both orders read every value.
        return (f"text dates in {formats[0]!r} or {formats[1]!r} (day and month order ambiguous)",
                parsed[formats[0]])
    what = "ISO 8601 text dates" if formats[0] == "ISO8601" else f"text dates in {formats[0]!r}"
    return what, parsed[formats[0]]


def _fixed_width(values: pd.Series) -> int:
    """The number of digits every value has, when all are non-negative
    integers of one width of at least 4 digits (customer numbers, zip codes);
    else 0."""
    array = values.to_numpy(dtype=object) if values.dtype == object else values.to_numpy()
    low, high = int(array.min()), int(array.max())
    if low < 1000 or len(str(low)) != len(str(high)):
        return 0
    return len(str(high))


def _beyond_float(values: pd.Series) -> bool:
    """Whether integers lie beyond 2**53, where float64 rounds neighbours into one value."""
    array = values.to_numpy(dtype=object) if values.dtype == object else values.to_numpy()
    return bool(np.any(np.abs(array) > _FLOAT_EXACT))


def _digit_codes(values: pd.Series) -> str | None:
    """What makes a text column of integers written in digits a column of
    codes (leading zeros, or integers beyond 2**53), or None."""
    uniques = pd.Series(pd.unique(values), dtype=object)
    for head in (uniques.iloc[:256], uniques):
        text = head.map(lambda v: v.strip() if isinstance(v, str) else None)
        if not text.str.fullmatch(r"[+-]?\d+").fillna(False).all():
            return None
    leading = text[text.str.fullmatch(r"[+-]?0\d+")]
    if len(leading):
        return f"digit codes with leading zeros (e.g. {_short(leading.iloc[0])})"
    beyond = [v for v in text if len(v) > 15 and abs(int(v)) > _FLOAT_EXACT]
    if beyond:
        return f"digit codes beyond 2**53 (e.g. {_short(beyond[0])})"
    return None


def _value_kind(values: pd.Series) -> str:
    """Classify non-missing values by dtype, or by content for ``object``."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_complex_dtype(dtype):
        return "complex"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if isinstance(dtype, pd.StringDtype):
        return "text"
    if pd.api.types.is_object_dtype(dtype):
        inferred = pd.api.types.infer_dtype(values, skipna=True)
        if inferred == "boolean":
            return "bool"
        if inferred == "integer":
            return "integer"
        if inferred in ("floating", "mixed-integer-float", "decimal"):
            return "float"
        if inferred == "complex":
            return "complex"
        if inferred in ("datetime64", "datetime", "date", "period"):
            return "datetime"
        if inferred in ("timedelta64", "timedelta"):
            return "timedelta"
        if inferred in ("string", "bytes"):
            return "text"
        return "mixed"
    return "mixed"


def _count_levels(values: pd.Series, kind: str) -> int:
    """Distinct non-missing values; for floats only 1 (constant) or 2 (not).

    A float column's role depends only on whether it is constant, and a
    min/max comparison is far cheaper than hashing every value (it is most
    of the time of a small fit on a wide numeric table).
    """
    if kind == "float":
        array = np.asarray(values, dtype=float)
        return 1 if array.min() == array.max() else 2
    return int(values.nunique(dropna=True))


def _merged_note(values: pd.Series) -> str:
    """A note when values of different types count as one level (``1``,
    ``1.0`` and ``True`` are equal in Python); empty otherwise."""
    types = values.map(type)
    groups = {t: pd.unique(values[types == t]) for t in pd.unique(types)}
    seen: dict[object, list[str]] = {}
    for value_type, uniques in groups.items():
        for value in uniques[:_NUMERIC_LOOKING_SAMPLE]:
            try:
                seen.setdefault(value, []).append(f"{value!r} ({value_type.__name__})")
            except TypeError:  # unhashable: reported elsewhere
                return ""
    merged = [group for group in seen.values() if len(group) > 1]
    if not merged:
        return ""
    return (f" ({' and '.join(sorted(merged[0]))} are equal in Python and form one level: convert the "
            f"column to text, df[col].astype(str), to keep them apart)")


def _has_infinite(values: pd.Series) -> bool:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return False
    return bool(np.isinf(array).any())


def _numeric_looking(values: pd.Series) -> tuple[float, object]:
    """Share of (up to 1000) distinct values that parse as numbers, and one
    value that does not (None if all do)."""
    uniques = pd.unique(values)[:_NUMERIC_LOOKING_SAMPLE]
    if len(uniques) == 0:
        return 0.0, None
    n_numbers = 0
    stray = None
    for value in uniques:
        if _parses_as_number(value):
            n_numbers += 1
        elif stray is None:
            stray = value
    return n_numbers / len(uniques), stray


def _parses_as_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Number):
        return True
    if not isinstance(value, str):
        return False
    text = value.strip()
    if not text or "_" in text or not text.isascii():
        return False
    if text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")  # decimal comma
    try:
        float(text)
    except ValueError:
        return False
    return True


def _short(value: object, limit: int = 30) -> str:
    """``repr`` of a value for a reason, at most ``limit`` characters."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _as_names(names: Iterable[str] | str, role: str) -> tuple[str, ...]:
    if isinstance(names, str):
        return (names,)
    try:
        names = tuple(names)
    except TypeError:
        raise CraftInputError(
            f"{role} must be a column name or an iterable of column names, "
            f"got {type(names).__name__}"
        ) from None
    for name in names:
        if not isinstance(name, str):
            raise CraftInputError(
                f"{role}: column names must be strings, got {name!r} "
                f"({type(name).__name__})"
            )
    return names


def _quote_list(names: Iterable[object], limit: int = 10) -> str:
    names = list(names)
    text = ", ".join(repr(n) for n in names[:limit])
    if len(names) > limit:
        text += f" and {len(names) - limit} more"
    return text


def _unknown_message(unknown: list[str], columns: tuple[str, ...]) -> str:
    noun = "column" if len(unknown) == 1 else "columns"
    return (
        f"unknown {noun} {_quote_list(unknown)}; the table's columns are "
        f"{_quote_list(columns)}"
    )
