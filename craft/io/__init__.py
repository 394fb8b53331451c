"""Reading user tables (CSV/TSV/text, Parquet, Excel) into DataFrames.

:func:`read_table` accepts whatever a user uploads and either returns a
DataFrame with unique, stripped string column labels and a default
``RangeIndex``, or raises :class:`~craft.exceptions.CraftInputError` with a
message that names the file and says what is wrong. No other exception type
escapes it.

What the reader decided is kept with the table, in ``df.attrs["craft_read"]``
(a :class:`ReadInfo`, see :func:`read_info`): the missing-value markers it
used and how many cells of each column they turned missing, the markers it
left as text, blank rows dropped, the sheet read, and per-column notes that
:func:`craft.infer_schema` adds to the columns' reasons.

The package keeps one job per module; every public name is imported from
here (``from craft.io import read_table``):

- ``_read``: the entry (:func:`read_table`, :func:`read_info`,
  :func:`table_fingerprint`): a source to bytes, the format chosen;
- ``_sniff``: a text file's encoding, delimiter and decimal mark;
- ``_text``: a text table parsed, its work bounded by its lines' shape;
- ``_excel``: .xlsx streamed from its XML within bounds, .xls through xlrd;
- ``_parquet``: Parquet with its stored types;
- ``_columns``: cells typed (numbers, missing markers, codes kept as
  written) and labels cleaned, for every format;
- ``_info``: :class:`ReadInfo`, the options and the default markers;
- ``_parts``: :func:`typed_part`, a part of a table read in parts (Dask).

Examples
--------
>>> df = read_table(b"id;score\\n007;1,5\\n008;NA\\n", name="scores.csv")
>>> df["id"].tolist(), df["score"].tolist()
(['007', '008'], [1.5, nan])
>>> read_info(df).column_notes["id"]
"kept as text, as written: written with leading zeros (e.g. '007'), which numbers would drop"
"""

from ._info import DEFAULT_MISSING_TOKENS, ReadInfo
from ._parts import PATH_COLUMN, typed_part
from ._read import read_info, read_table, table_fingerprint

__all__ = ["DEFAULT_MISSING_TOKENS", "PATH_COLUMN", "ReadInfo", "read_info", "read_table", "table_fingerprint",
           "typed_part"]
