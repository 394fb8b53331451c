"""read_table on the files real users send: read exactly, or refused with a
specific CraftInputError. Small files live in tests/corpus; large ones are
generated in tmp_path."""

from __future__ import annotations

import hashlib
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from craft.exceptions import CraftInputError
from craft.io import read_info, read_table, table_fingerprint

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def corpus(name: str) -> Path:
    return CORPUS / name


# --------------------------------------------------------------------------
# Refused files: CraftInputError with a message naming the file and the fault
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file_name", "message"),
    [
        ("empty.csv", r"'empty\.csv': the file is empty"),
        ("whitespace_only.csv", r"'whitespace_only\.csv': the file is empty"),
        ("header_only.csv", r"'header_only\.csv': it has a header but no data rows"),
        ("binary_garbage.csv", r"'binary_garbage\.csv' is not a readable table: .*binary"),
        ("image_named.csv", r"'image_named\.csv' is not a readable table: .*binary"),
        ("ragged_long_row.csv", r"line 4 has 3 fields but the header has 2"),
        ("unterminated_quote.csv", r"'unterminated_quote\.csv' is not a readable table: EOF"),
    ],
)
def test_refused_corpus_files(file_name, message):
    with pytest.raises(CraftInputError, match=message):
        read_table(corpus(file_name))


def test_missing_path_and_directory(tmp_path):
    with pytest.raises(CraftInputError, match="no such file"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(CraftInputError, match="is a directory"):
        read_table(tmp_path)


@pytest.mark.parametrize("source", [None, 42, 3.5, ["a,b"], {"a": 1}])
def test_unsupported_source_types(source):
    with pytest.raises(CraftInputError, match="cannot read a table from a"):
        read_table(source)


def test_unsupported_extension():
    with pytest.raises(CraftInputError, match=r"unsupported file type '\.json'"):
        read_table(b'{"a": 1}', name="data.json")


def test_xls_without_reader_is_refused_clearly():
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512
    try:
        import xlrd  # noqa: F401
    except ImportError:
        with pytest.raises(CraftInputError, match=r"\.xls\) files need the optional package xlrd"):
            read_table(ole, name="old.xls")
    else:  # with xlrd the file is tried, and this one is not a workbook
        with pytest.raises(CraftInputError, match="not a readable Excel file"):
            read_table(ole, name="old.xls")


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"PK\x03\x04 not really a zip", "book.xlsx", r"'book\.xlsx' is not a readable Excel file"),
        (b"a,b\n1,2\n", "book.xlsx", r"'book\.xlsx' is not a readable Excel file: .*ZIP"),
        (b"PAR1 then junk", "t.parquet", r"'t\.parquet' is not a readable Parquet file"),
        (b"a,b\n1,2\n", "t.pq", r"'t\.pq' is not a readable Parquet file: .*PAR1"),
    ],
)
def test_corrupt_binary_formats(data, name, message):
    with pytest.raises(CraftInputError, match=message):
        read_table(data, name=name)


def test_message_without_a_name_says_the_data():
    with pytest.raises(CraftInputError, match="the data: the file is empty"):
        read_table(b"")


@pytest.mark.parametrize("seed", range(20))
def test_random_bytes_never_escape_as_another_error(seed):
    rng = np.random.default_rng(seed)
    data = rng.bytes(int(rng.integers(1, 400)))
    for name in (None, "x.csv", "x.parquet", "x.xlsx", "x.tsv"):
        try:
            df = read_table(data, name=name)
        except CraftInputError:
            continue
        assert isinstance(df, pd.DataFrame) and df.shape[0] >= 1


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list(',;\t|"\n\r ab1.-?=\u00e9\x00')), max_size=60),
    st.sampled_from([None, "t.csv", "t.tsv", "t.txt"]),
    st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"]),
)
def test_property_text_is_a_table_or_an_input_error(text, name, encoding):
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        return
    try:
        df = read_table(data, name=name)
    except CraftInputError as exc:
        assert str(exc)
        return
    assert df.shape[0] >= 1 and df.shape[1] >= 1
    assert all(type(c) is str and c == c.strip() and c for c in df.columns)
    assert df.columns.is_unique
    assert isinstance(df.index, pd.RangeIndex)


# --------------------------------------------------------------------------
# Encodings, delimiters, quoting
# --------------------------------------------------------------------------


def test_latin1():
    df = read_table(corpus("latin1.csv"))
    assert list(df.columns) == ["ville", "café", "prix"]
    assert df["ville"].tolist() == ["Montréal", "Zürich"]
    assert df["café"].tolist() == ["crème", "thé"]
    assert df["prix"].tolist() == [3, 4]


def test_cp1252_punctuation():
    df = read_table(corpus("cp1252.csv"))
    assert df["quote"].tolist() == ["\u201cquoted\u201d \u20ac5", "plain"]


def test_utf8_bom_is_not_part_of_the_first_name():
    df = read_table(corpus("utf8_bom.csv"))
    assert list(df.columns) == ["name", "größe"]
    assert df["größe"].tolist() == [1.62, 1.80]
    assert df["name"].tolist() == ["Anna", "Björn"]


def test_utf16_with_bom():
    text = "a\tb\n1\tx\n2\ty\n"
    df = read_table(text.encode("utf-16"), name="excel_unicode.txt")
    assert list(df.columns) == ["a", "b"]
    assert df["a"].tolist() == [1, 2]


def test_semicolon_with_decimal_comma():
    df = read_table(corpus("semicolon_decimal_comma.csv"))
    assert df.shape == (3, 4)
    assert list(df.columns) == ["Name", "Gewicht", "Anzahl", "Preis"]
    assert df["Gewicht"].dtype == np.float64
    assert df["Gewicht"].tolist() == [1.5, 2.25, 0.75]
    assert df["Anzahl"].tolist() == [3, 10, 7]
    assert df["Preis"].tolist() == [0.99, 1.49, 2.0]


def test_semicolon_file_with_dot_and_comma_decimals_per_column():
    df = read_table(b"a;b\n1.5;2,5\n3.5;4,5\n", name="mixed.csv")
    assert df["a"].tolist() == [1.5, 3.5]
    assert df["b"].tolist() == [2.5, 4.5]


def test_comma_file_keeps_quoted_comma_numbers_as_text():
    # "1,5" in a comma-delimited file may be a thousands separator: no guess.
    df = read_table(b'a,b\n"1,5",1\n"2,5",2\n', name="c.csv")
    assert df["a"].tolist() == ["1,5", "2,5"]


def test_tab_delimited():
    df = read_table(corpus("tab_delimited.tsv"))
    assert list(df.columns) == ["gene", "score", "flag"]
    assert df["score"].tolist() == [0.5, 1.25, -2.0]
    assert df["flag"].dtype == bool
    assert df["flag"].tolist() == [True, False, True]


def test_tsv_extension_prefers_tab_over_commas_in_text():
    data = b"last, first\tcity, country\nSmith, J\tParis, FR\nDoe, A\tRome, IT\n"
    df = read_table(data, name="people.tsv")
    assert list(df.columns) == ["last, first", "city, country"]
    assert df["city, country"].tolist() == ["Paris, FR", "Rome, IT"]


def test_pipe_delimited():
    df = read_table(corpus("pipe_delimited.txt"))
    assert list(df.columns) == ["a", "b", "c"]
    assert df["c"].tolist() == [2.5, 3.5]


def test_quoted_newlines_and_quotes():
    df = read_table(corpus("quoted_newlines.csv"))
    assert df.shape == (3, 3)
    assert df["comment"].tolist() == [
        "first line\nsecond line",
        'has "quotes", and a comma',
        "plain",
    ]
    assert df["score"].tolist() == [3.5, 4.0, 5.0]


def test_crlf_line_endings():
    df = read_table(corpus("crlf.csv"))
    assert list(df.columns) == ["a", "b"]
    assert df["b"].tolist() == ["x", "y"]


def test_single_column_file():
    df = read_table(b"value\n1\n2\n3\n", name="one.csv")
    assert list(df.columns) == ["value"]
    assert df["value"].tolist() == [1, 2, 3]


def test_no_extension_is_sniffed_as_text():
    df = read_table(b"a;b\n1;2\n")
    assert df.to_dict("list") == {"a": [1], "b": [2]}


# --------------------------------------------------------------------------
# Column names
# --------------------------------------------------------------------------


def test_duplicated_and_empty_names_are_kept():
    df = read_table(corpus("duplicated_names.csv"))
    # Header: a, b, a, " b " (stripped to b), a.1, and an empty name. The
    # second a takes a.1, so the literal a.1 becomes a.1.1 (pandas' rule).
    assert list(df.columns) == ["a", "b", "a.1", "b.1", "a.1.1", "column_6"]
    assert df.iloc[0].tolist() == [1, 2, 3, 4, 5, 6]
    assert df.shape == (2, 6)


def test_trailing_delimiter_gives_an_all_missing_named_column():
    df = read_table(corpus("trailing_delimiter.csv"))
    assert list(df.columns) == ["a", "b", "column_3"]
    assert df["column_3"].isna().all()
    assert df["a"].tolist() == [1, 3]


def test_more_fields_than_header_in_every_row_keeps_every_field():
    df = read_table(corpus("extra_fields_everywhere.csv"))
    assert list(df.columns) == ["a", "b", "column_3"]
    assert df.to_dict("list") == {"a": [1, 4], "b": [2, 5], "column_3": [3, 6]}


def test_html_and_script_tags_are_plain_strings():
    df = read_table(corpus("html_tags.csv"))
    assert list(df.columns) == ["<b>name</b>", "<script>alert(1)</script>"]
    assert df["<b>name</b>"].tolist() == ["<i>x</i>", "y"]
    assert df["<script>alert(1)</script>"].tolist() == ["<img src=x onerror=alert(1)>", "2"]


def test_labels_are_str_and_index_is_default():
    df = read_table(b"1,2,3\n4,5,6\n", name="numbers_as_header.csv")
    assert list(df.columns) == ["1", "2", "3"]
    assert all(type(c) is str for c in df.columns)
    assert isinstance(df.index, pd.RangeIndex) and df.index.start == 0


# --------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------


def test_all_missing_column():
    df = read_table(corpus("all_missing_column.csv"))
    assert list(df.columns) == ["x", "empty", "y"]
    assert df["empty"].isna().all()
    assert df["x"].tolist() == [1, 2, 3]


def test_constant_column():
    df = read_table(corpus("constant_column.csv"))
    assert df["const"].tolist() == ["same"] * 3


def test_one_row_and_two_rows():
    one = read_table(corpus("one_row.csv"))
    assert one.shape == (1, 3)
    assert one.iloc[0].tolist() == [1, "hello", 2.5]
    two = read_table(corpus("two_rows.csv"))
    assert two.to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}


def test_infinities_and_huge_numbers_are_read_as_they_are():
    df = read_table(corpus("inf_huge.csv"))
    assert df["x"].tolist() == [math.inf, -math.inf, math.inf]
    assert df["y"].tolist() == [1e308, -1e308, math.inf]
    # An integer beyond 2**53 (here beyond 64 bits): the column stays as written, said so.
    assert df["z"].tolist() == ["99999999999999999999999", "1", "2"]
    assert "integers beyond 2**53" in read_info(df).column_notes["z"]


def test_missing_markers_and_stray_text():
    df = read_table(corpus("stray_text.csv"))
    assert df["clean"].tolist() == [1, 2, 3, 4, 5]
    # '?', 'n/a', '' and 'NA' are missing markers: the column stays numeric.
    assert df["markers"].dtype == np.float64
    assert df["markers"].isna().tolist() == [False, True, True, True, True]
    # Dashes are placeholders only in an otherwise numeric column.
    assert df["dashes"].dtype == np.float64
    assert df["dashes"].isna().tolist() == [False, True, False, False, True]
    assert df["dashes"].dropna().tolist() == [10.0, 20.0, 30.0]
    # Other stray text is not guessed away: the column stays text.
    assert df["stray"].tolist() == ["5", "6", "abc", "7", "8"]


def test_dash_stays_text_in_a_text_column():
    df = read_table(b"a,b\n-,x\nfoo,y\n", name="d.csv")
    assert df["a"].tolist() == ["-", "foo"]


def test_formula_like_cells_are_strings_and_negative_numbers_stay_numbers():
    df = read_table(corpus("formula_prefix.csv"))
    assert df["formula"].tolist() == ["=SUM(A1:A3)", "+1+2", "-cmd"]
    assert df["number"].tolist() == [-3.0, 4.0, 5.5]
    assert df["at"].tolist() == ["@user", "@admin", "plain"]


def test_very_long_strings(tmp_path):
    long_text = "x" * 300_000  # beyond the csv module's 131072 field limit
    path = tmp_path / "long.csv"
    path.write_text(f'id,text\n1,"{long_text}"\n2,short\n', encoding="utf-8")
    df = read_table(path)
    assert df.shape == (2, 2)
    assert len(df.loc[0, "text"]) == 300_000
    assert df.loc[1, "text"] == "short"


def test_ten_thousand_columns(tmp_path):
    n_columns = 10_000
    header = ",".join(f"c{i}" for i in range(n_columns))
    rows = [",".join(str(r * n_columns + i) for i in range(n_columns)) for r in range(3)]
    path = tmp_path / "wide.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    df = read_table(path)
    assert df.shape == (3, n_columns)
    assert df.columns[0] == "c0" and df.columns[-1] == f"c{n_columns - 1}"
    assert df["c9999"].tolist() == [9999, 19999, 29999]


# --------------------------------------------------------------------------
# Parquet and Excel, written in the test
# --------------------------------------------------------------------------


def test_parquet(tmp_path):
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"], "c": [0.5, 1.5, np.nan]})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    df = read_table(path)
    assert list(df.columns) == ["a", "b", "c"]
    assert df["a"].tolist() == [1, 2, 3]
    assert df["b"].tolist()[::2] == ["x", "z"] and pd.isna(df.loc[1, "b"])
    assert df["c"].isna().tolist() == [False, False, True]
    # Same bytes without a name: sniffed from the PAR1 signature.
    assert read_table(path.read_bytes()).equals(df)


def test_parquet_with_index_keeps_it_as_a_column(tmp_path):
    frame = pd.DataFrame({"id": ["p", "q"], "v": [1.0, 2.0]}).set_index("id")
    path = tmp_path / "indexed.parquet"
    frame.to_parquet(path)
    df = read_table(path)
    assert list(df.columns) == ["id", "v"]
    assert df["id"].tolist() == ["p", "q"]


def test_parquet_without_rows(tmp_path):
    path = tmp_path / "empty.parquet"
    pd.DataFrame({"a": pd.Series([], dtype=float)}).to_parquet(path)
    with pytest.raises(CraftInputError, match="has column names but no data rows"):
        read_table(path)


def test_xlsx(tmp_path):
    frame = pd.DataFrame(
        {
            "name": ["a", "b", "c"],
            " size ": [1.5, 2.5, None],
            "count": ["1", "-", "3"],
            "flag": [True, False, True],
            "status": ["ok", "?", "bad"],
        }
    )
    path = tmp_path / "book.xlsx"
    frame.to_excel(path, index=False)
    df = read_table(path)
    assert list(df.columns) == ["name", "size", "count", "flag", "status"]
    assert df["name"].tolist() == ["a", "b", "c"]
    assert df["size"].tolist()[:2] == [1.5, 2.5] and pd.isna(df.loc[2, "size"])
    assert df["count"].dtype == np.float64 and df["count"].isna().tolist() == [False, True, False]
    assert df["flag"].tolist() == [True, False, True]
    # "?" is missing in a number column, but an answer in a text column.
    assert df["status"].tolist() == ["ok", "?", "bad"]
    assert read_info(df).kept_as_text == {"status": {"?": 1}}
    assert read_table(path, tokens_in_text=True)["status"].isna().tolist() == [False, True, False]
    # Same bytes from a BytesIO without a name: sniffed from the ZIP signature.
    assert read_table(io.BytesIO(path.read_bytes())).shape == (3, 5)


def test_xlsx_header_only(tmp_path):
    path = tmp_path / "header.xlsx"
    pd.DataFrame({"a": [], "b": []}).to_excel(path, index=False)
    with pytest.raises(CraftInputError, match="it has a header but no data rows"):
        read_table(path)


def test_xlsx_duplicated_and_blank_header_cells(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["x", "x", None, "y"])
    sheet.append([1, 2, 3, "u"])
    sheet.append([4, 5, 6, "v"])
    path = tmp_path / "dups.xlsx"
    book.save(path)
    df = read_table(path)
    assert list(df.columns) == ["x", "x.1", "column_3", "y"]
    assert df["column_3"].tolist() == [3, 6]


# --------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------

SIMPLE = b"a,b\n1,x\n2,y\n"


def test_from_bytes_bytesio_and_path(tmp_path):
    expected = {"a": [1, 2], "b": ["x", "y"]}
    assert read_table(SIMPLE).to_dict("list") == expected
    assert read_table(bytearray(SIMPLE), name="s.csv").to_dict("list") == expected
    assert read_table(io.BytesIO(SIMPLE), name="s.csv").to_dict("list") == expected
    path = tmp_path / "s.csv"
    path.write_bytes(SIMPLE)
    assert read_table(path).to_dict("list") == expected
    assert read_table(str(path)).to_dict("list") == expected


class FakeUpload(io.BytesIO):
    """Like Streamlit's UploadedFile: a BytesIO with a name."""

    def __init__(self, data: bytes, name: str):
        super().__init__(data)
        self.name = name


def test_uploaded_file_name_is_used_even_after_a_read():
    upload = FakeUpload(b"a;b\n1,5;2\n", "upload.csv")
    upload.read()  # an app may have consumed it already
    df = read_table(upload)
    assert df.to_dict("list") == {"a": [1.5], "b": [2]}
    with pytest.raises(CraftInputError, match=r"'bad\.csv': the file is empty"):
        read_table(FakeUpload(b"", "bad.csv"))


def test_open_binary_file(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(SIMPLE)
    with open(path, "rb") as handle:
        assert read_table(handle).shape == (2, 2)


def test_table_fingerprint():
    assert table_fingerprint(SIMPLE) == hashlib.sha256(SIMPLE).hexdigest()
    assert table_fingerprint(SIMPLE) != table_fingerprint(SIMPLE + b"3,z\n")
    assert len(table_fingerprint(b"")) == 64
    with pytest.raises(CraftInputError, match="needs bytes"):
        table_fingerprint("a,b")  # type: ignore[arg-type]  # text is what is refused


# --------------------------------------------------------------------------
# Issues 14 and 15: values kept as written, bounded work, honest messages.
# Every input is generated here.
# --------------------------------------------------------------------------


def test_text_markers_stay_text_and_are_counted():
    # "None" = no children: an answer, not a missing value.
    rows = ["id,children,age"] + [f"{i},{'None' if i % 3 else 'two'},{'NA' if i == 4 else i}" for i in range(12)]
    df = read_table("\n".join(rows).encode(), name="survey.csv")
    assert df["children"].isna().sum() == 0 and (df["children"] == "None").sum() == 8
    assert df["age"].dtype == np.float64 and df["age"].isna().sum() == 1
    info = read_info(df)
    assert info.kept_as_text == {"children": {"None": 8}}
    assert info.read_as_missing == {"age": {"NA": 1}}
    assert "NA" in info.missing_tokens and "None" in info.missing_tokens
    # pandas' way, on request; and no markers at all.
    assert read_table("\n".join(rows).encode(), name="s.csv", tokens_in_text=True)["children"].isna().sum() == 8
    plain = read_table("\n".join(rows).encode(), name="s.csv", missing_tokens=())
    assert not pd.api.types.is_numeric_dtype(plain["age"]) and plain["children"].isna().sum() == 0
    with pytest.raises(CraftInputError, match="missing_tokens must be a list"):
        read_table(b"a\n1\n", missing_tokens="NA")


def test_schema_reason_names_the_markers():
    from craft import infer_schema

    df = read_table(b"answer,n\nNone,1\nyes,NA\nNone,3\nno,4\n", name="s.csv")
    reasons = infer_schema(df).reasons
    assert "kept as text, not missing: 'None' ×2" in reasons["answer"]
    assert "read as missing: 'NA' ×1" in reasons["n"]


def test_as_text_gives_the_original_cells():
    data = b'a;b;c\n1,50;None;"x;y"\n\n2,0;;  007\n;;\n'
    df = read_table(data, name="t.csv", as_text=True)
    assert df.to_dict("list") == {"a": ["1,50", "2,0"], "b": ["None", ""], "c": ["x;y", "  007"]}
    assert read_info(df).blank_rows == 2
    assert read_table(data, name="t.csv").shape == (2, 3)


def test_as_text_of_a_parquet_file_keeps_its_cells(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({
        "f32": pa.array([68.630135, None, 1e-8], pa.float32()),
        "big": pa.array([2**60 + 1, None, -3], pa.int64()),
        "flag": pa.array([True, None, False]),
    }), path)
    df = read_table(path.read_bytes(), name="plain.parquet", as_text=True)
    assert df.to_dict("list") == {"f32": ["68.630135", "", "1e-08"],
                                  "big": [str(2**60 + 1), "", "-3"],
                                  "flag": ["True", "", "False"]}


def test_nul_byte_refused_wherever_it_is():
    head = b"a,b\n" + b"1,x\n" * 20_000  # well past the first 64 KiB
    with pytest.raises(CraftInputError, match=r"NUL character on line 20002"):
        read_table(head + b"2,y\x00z\n", name="late.csv")
    with pytest.raises(CraftInputError, match="NUL character on line 2"):
        read_table(b"a,b\n1,\x00\n", name="early.csv")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32", "utf-16"])
def test_utf16_without_bom_and_utf32_are_read(encoding):
    text = "name,size\nZoë,1.5\nÅsa,2.5\n"
    df = read_table(text.encode(encoding), name="wide.csv")
    assert df.to_dict("list") == {"name": ["Zoë", "Åsa"], "size": [1.5, 2.5]}


def test_binary_message_lists_the_encodings():
    with pytest.raises(CraftInputError, match=r"encodings read are UTF-8 .*UTF-32 .*iconv"):
        read_table(bytes(range(256)) * 8, name="blob.csv")


def test_thousands_separators_are_numbers_and_say_so():
    from craft import infer_schema

    rows = ["city,population"] + [f'c{i},"{1000 + 997 * i:,}"' for i in range(30)]
    df = read_table("\n".join(rows).encode(), name="cities.csv")
    assert df["population"].dtype == np.int64
    assert df["population"].tolist()[:3] == [1000, 1997, 2994]
    assert "thousands separators" in infer_schema(df).reasons["population"]
    # A decimal comma in a ";" file is still a decimal comma.
    assert read_table(b"a;b\n1,5;x\n2,5;y\n", name="d.csv")["a"].tolist() == [1.5, 2.5]


def test_csv_blank_and_delimiter_only_lines_are_dropped_and_counted():
    df = read_table(b"\n\na,b\n1,x\n\n,\n2,y\n  \n", name="gaps.csv")
    assert df.to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}
    assert read_info(df).blank_rows == 3
    assert read_info(df).notes() == ["3 blank row(s) of 'gaps.csv' dropped (no cell had a value)."]


def test_too_many_columns_refused_before_parsing(monkeypatch):
    # The red team's table: a header of 1,000,000 columns and two data rows
    # (12 MB), refused from its header alone, before any parsing.
    header = ",".join(f"c{i}" for i in range(1_000_000))
    data = (header + "\n" + "1," * 999_999 + "1\n" + "2," * 999_999 + "2\n").encode()
    with pytest.raises(CraftInputError, match=r"'wide\.csv' has about 1,000,000 columns; this machine takes at "
                                              r"most [\d,]+ columns \(and [\d,]+ cells"):
        read_table(data, name="wide.csv")
    monkeypatch.setenv("CRAFT_MAX_COLUMNS", "50")
    with pytest.raises(CraftInputError, match=r"has about 51 columns; this machine takes at most 50 columns"):
        read_table((",".join(f"c{i}" for i in range(51)) + "\n" + "1," * 50 + "1\n").encode(), name="w.csv")
    monkeypatch.setenv("CRAFT_MAX_CELLS", "1000")
    rows = "\n".join("1,2,3,4" for _ in range(400))
    with pytest.raises(CraftInputError, match=r"about 400 rows × 4 columns = 1,600 cells; this machine takes at "
                                              r"most 1,000 cells"):
        read_table(("a,b,c,d\n" + rows).encode(), name="long.csv")


def test_infer_schema_refuses_a_too_wide_frame_by_the_fixed_limit_only(monkeypatch):
    from craft import infer_schema
    from craft.limits import MAX_COLUMNS

    # A frame already in memory: the readers' limits (here overridden to 50 columns) do not apply.
    monkeypatch.setenv("CRAFT_MAX_COLUMNS", "50")
    assert len(infer_schema(pd.DataFrame(np.zeros((3, 60)), columns=[f"c{i}" for i in range(60)])).columns) == 60
    wide = pd.DataFrame(np.zeros((3, MAX_COLUMNS + 1)), columns=[f"c{i}" for i in range(MAX_COLUMNS + 1)])
    with pytest.raises(CraftInputError, match="has 100,001 columns; CRAFT takes at most 100,000 columns on any machine"):
        infer_schema(wide)


def _xlsx(path, rows, *, extra_sheets=()):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Data"
    for row in rows:
        sheet.append(row)
    for title, sheet_rows in extra_sheets:
        other = book.create_sheet(title)
        for row in sheet_rows:
            other.append(row)
    book.save(path)
    return book


def test_xlsx_bomb_cell_far_away_is_bounded(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["a", "b"], [1, "x"], [2, "y"], [3, "z"]):
        sheet.append(row)
    sheet.cell(row=10_000, column=16_384, value=7)  # column XFD
    path = tmp_path / "bomb.xlsx"
    book.save(path)
    df = read_table(path)
    # Three real rows, a fourth with the far cell; 9,995 blank rows dropped, and
    # only the columns that hold a value.
    assert df.shape == (4, 3)
    assert df.columns.tolist() == ["a", "b", "column_3"]
    assert read_info(df).blank_rows == 10_000 - 1 - 4


def test_xlsx_refused_beyond_the_caps(tmp_path, monkeypatch):
    path = tmp_path / "long.xlsx"
    _xlsx(path, [["a", "b"]] + [[i, i * 2] for i in range(3000)])
    monkeypatch.setenv("CRAFT_MAX_EXCEL_CELLS", "2000")
    with pytest.raises(CraftInputError, match=r"'long\.xlsx' \(sheet 'Data'\) has more than 2,000 non-empty cells "
                                              r"\(1,001 rows read so far\); this machine reads at most 2,000 cells"):
        read_table(path)
    monkeypatch.delenv("CRAFT_MAX_EXCEL_CELLS")
    monkeypatch.setenv("CRAFT_MAX_UNZIPPED_MB", "0.01")
    with pytest.raises(CraftInputError, match=r"'long\.xlsx' expands to .* MB when unzipped .* reads at most 0 MB"):
        read_table(path)


def test_xlsx_blank_rows_dropped_and_counted(tmp_path):
    path = tmp_path / "gaps.xlsx"
    _xlsx(path, [["a", "b"], [1, "x"], [None, None], [None, " "], [2, "y"]])
    df = read_table(path)
    assert df.to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}
    assert read_info(df).blank_rows == 2


def test_xlsx_sheets_named_and_chosen(tmp_path):
    path = tmp_path / "book.xlsx"
    _xlsx(path, [["a"], [1], [2]], extra_sheets=[("Other", [["z", "w"], ["p", 1.5], ["q", 2.5]])])
    first = read_table(path)
    assert first.columns.tolist() == ["a"]
    assert read_info(first).sheet == "Data" and read_info(first).sheets == ("Data", "Other")
    assert read_info(first).notes() == ["Read sheet 'Data' of 2 ('Data', 'Other')."]
    assert read_table(path, sheet="Other").to_dict("list") == {"z": ["p", "q"], "w": [1.5, 2.5]}
    assert read_table(path, sheet=1).shape == (2, 2)
    with pytest.raises(CraftInputError, match=r"has no sheet named 'Nope'; its sheets are 'Data', 'Other'"):
        read_table(path, sheet="Nope")
    with pytest.raises(CraftInputError, match=r"has 2 sheet\(s\) .* no sheet at position 5"):
        read_table(path, sheet=5)


def test_xlsx_missing_shared_string_is_a_clear_error(tmp_path):
    import zipfile

    path = tmp_path / "strings.xlsx"
    _xlsx(path, [["name", "n"], ["alpha", 1], ["beta", 2]])
    broken = tmp_path / "broken.xlsx"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            content = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                # A cell that refers to shared string 5 of a workbook that has none
                # (what a string too long to load leaves behind).
                content = content.replace(b't="inlineStr"><is><t>alpha</t></is>', b't="s"><v>5</v>')
            target.writestr(item, content)
    with pytest.raises(CraftInputError, match=r"refers to a shared string that the workbook's string table does "
                                              r"not hold \(0 strings read\)"):
        read_table(broken)


def test_xlsx_mixed_numbers_and_text_say_so(tmp_path):
    from craft import infer_schema

    path = tmp_path / "mixed.xlsx"
    _xlsx(path, [["v", "w"]] + [[1, i] for i in range(5)] + [["1", 9], ["x", 8]])
    df = read_table(path)
    assert df["v"].tolist() == ["1"] * 6 + ["x"]
    assert "the number 1 and the text '1' are one level" in infer_schema(df).reasons["v"]


def test_parquet_nested_columns(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from craft import infer_schema

    table = pa.table({"x": [1.0, 2.0, 3.0, 4.0], "class": [[1, 2], [3], [], None],
                      "s": [{"a": 1}, {"a": 2}, {"a": 1}, {"a": 2}]})
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path)
    df = read_table(path)
    assert df["class"].tolist()[:3] == ["[1, 2]", "[3]", "[]"] and pd.isna(df["class"].iloc[3])
    assert df["s"].tolist()[0] == '{"a": 1}'
    schema = infer_schema(df)
    assert set(schema.ignored) == {"class", "s"}
    assert "nested Parquet list column" in schema.reasons["class"]
    assert df["class"].nunique() == 3  # hashable: the app's column report and label choice work


def test_parquet_duplicated_field_names(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from craft import infer_schema

    table = pa.Table.from_arrays([pa.array([1, 2]), pa.array([3.5, 4.5])], names=["a", "a"])
    path = tmp_path / "dups.parquet"
    pq.write_table(table, path)
    df = read_table(path)
    assert df.to_dict("list") == {"a": [1, 2], "a.1": [3.5, 4.5]}
    assert "the file names 2 columns 'a': renamed 'a.1'" in infer_schema(df).reasons["a.1"]


@pytest.mark.parametrize("cut", ["truncated", "footer", "flipped"])
def test_damaged_parquet_is_named_not_arrow_internal(tmp_path, cut):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"x": np.arange(200, dtype=float), "y": ["a", "b"] * 100}).to_parquet(path)
    data = bytearray(path.read_bytes())
    if cut == "truncated":
        data = data[: len(data) // 2]
    elif cut == "footer":
        data[-12:-8] = b"\xff\xff\xff\x7f"  # a footer length beyond the file
    else:
        data[len(data) // 2: len(data) // 2 + 64] = bytes(64)
    try:
        df = read_table(bytes(data), name="t.parquet")
    except CraftInputError as error:
        assert str(error).startswith("'t.parquet' is not a readable Parquet file: ")
        assert "damaged" in str(error) or "cannot be converted" in str(error)
    else:  # zeroed bytes inside a page can decode; the table is still a table
        assert df.shape[1] == 2


def test_parquet_with_checksums_flipped_byte_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table({"x": np.arange(2000, dtype=float)}), buffer, write_page_checksum=True)
    data = bytearray(buffer.getvalue())
    data[300:310] = b"\xff" * 10
    with pytest.raises(CraftInputError, match=r"'c\.parquet' is not a readable Parquet file: its data are damaged "
                                              r"\(.*CRC checksum verification failed"):
        read_table(bytes(data), name="c.parquet")


def _with_shared_string(path, text: str, out):
    """``path``'s workbook with its first text cell replaced by shared string 0 = ``text``."""
    import zipfile

    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            content = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                content = content.replace(b't="inlineStr"><is><t>alpha</t></is>', b't="s"><v>0</v>')
            elif item.filename == "[Content_Types].xml":
                content = content.replace(b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="'
                                          b'application/vnd.openxmlformats-officedocument.spreadsheetml.'
                                          b'sharedStrings+xml"/></Types>')
            elif item.filename == "xl/_rels/workbook.xml.rels":
                content = content.replace(b"</Relationships>", b'<Relationship Id="rIdS" Type="http://schemas.'
                                          b'openxmlformats.org/officeDocument/2006/relationships/sharedStrings" '
                                          b'Target="sharedStrings.xml"/></Relationships>')
            target.writestr(item.filename, content)
        target.writestr("xl/sharedStrings.xml", '<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.'
                        'org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>' + text + "</t></si></sst>")


def test_xlsx_huge_shared_string(tmp_path, monkeypatch):
    path = tmp_path / "strings.xlsx"
    _xlsx(path, [["name", "n"], ["alpha", 1], ["beta", 2], ["gamma", 3]])
    # Longer than any Excel cell: refused with Excel's limit.
    long_cell = tmp_path / "long.xlsx"
    _with_shared_string(path, "x" * 40_000, long_cell)
    with pytest.raises(CraftInputError, match=r"the cell at row 2, column 1 of sheet 'Data' holds 40,000 characters, "
                                              r"and Excel cells hold at most 32,767"):
        read_table(long_cell)
    # More shared text than the cells may hold (the red team's 300 MB string,
    # scaled down with the cap): refused before the strings are loaded.
    monkeypatch.setenv("CRAFT_MAX_EXCEL_CELLS", "1000")
    huge = tmp_path / "huge.xlsx"
    _with_shared_string(path, "y" * 300_000, huge)
    with pytest.raises(CraftInputError, match=r"'huge\.xlsx' holds 0 MB of shared text \(unzipped\); this machine "
                                              r"reads at most 0 MB of it \(256 bytes for each of the 1,000 cells"):
        read_table(huge)
    ok = tmp_path / "ok.xlsx"
    _with_shared_string(path, "z" * 100, ok)
    assert read_table(ok)["name"].tolist() == ["z" * 100, "beta", "gamma"]


def test_typed_part_types_parts_as_read_table_and_holds_later_parts_to_the_first():
    from craft.io import typed_part

    first = pd.DataFrame({"x": ["1", "2", "NA"], "t": ["None", "yes", "no"], "n": ["1,234", "5", "6"]}, dtype=object)
    typed = typed_part(first)
    assert typed.dtypes.to_dict() == {"x": np.float64, "t": object, "n": np.int64}
    assert typed["t"].tolist() == ["None", "yes", "no"] and typed["n"].tolist() == [1234, 5, 6]
    later = typed_part(pd.DataFrame({"x": ["?", "-", "3"], "t": ["NA", "a", "b"], "n": ["7", "8", "9"]}, dtype=object),
                       typed.dtypes)
    assert later.dtypes.equals(typed.dtypes) and later["x"].isna().tolist() == [True, True, False]
    assert later["t"].tolist() == ["NA", "a", "b"]
    with pytest.raises(CraftInputError, match="column 'n' holds whole numbers in the first part .* a missing cell"):
        typed_part(pd.DataFrame({"x": ["1"] * 2, "t": ["a"] * 2, "n": ["7", "NA"]}, dtype=object), typed.dtypes)
    with pytest.raises(CraftInputError, match="column 'x' holds numbers in the first part of the data but 'abc'"):
        typed_part(pd.DataFrame({"x": ["abc", "1"], "t": ["a"] * 2, "n": ["7", "8"]}, dtype=object), typed.dtypes)


# --------------------------------------------------------------------------
# Values changed without a word, and memory a small file can take: each
# input is generated here (tests/corpus/README.md lists them).
# --------------------------------------------------------------------------


def test_typed_part_refuses_decimals_an_integer_first_part_would_truncate():
    from craft.io import PATH_COLUMN, typed_part

    first = typed_part(pd.DataFrame({"x": ["1", "2"], PATH_COLUMN: ["a.csv"] * 2}, dtype=object))
    assert PATH_COLUMN not in first.columns and first["x"].dtype == np.int64
    later = pd.DataFrame({"x": ["8.75", "2"], PATH_COLUMN: ["b.csv"] * 2}, dtype=object)
    with pytest.raises(CraftInputError, match=r"column 'x' holds whole numbers .* but 8\.75 in a later one "
                                              r"\('b\.csv'\), whose decimals would be lost; write the first "
                                              r"file's numbers with a decimal point"):
        typed_part(later, first.dtypes)
    # Whole numbers written as 3.0 still fit the first part's integers.
    assert typed_part(pd.DataFrame({"x": ["3.0", "4"]}, dtype=object), first.dtypes)["x"].tolist() == [3, 4]
    # Codes stay text as read_table keeps them; codes after numbers are refused.
    codes = typed_part(pd.DataFrame({"x": ["007", "010"]}, dtype=object))
    assert codes["x"].tolist() == ["007", "010"]
    with pytest.raises(CraftInputError, match=r"column 'x' holds numbers in the first part of the data but codes "
                                              r"in a later one \('b\.csv'\), written with leading zeros"):
        typed_part(pd.DataFrame({"x": ["007", "2"], PATH_COLUMN: ["b.csv"] * 2}, dtype=object), first.dtypes)


def test_integers_beyond_float_precision_stay_distinct_identifiers():
    from craft.schema import infer_schema

    df = read_table(b"acct,v\n99999999999999999999,1\n99999999999999999998,2\n99999999999999999997,3\n",
                    name="b.csv")
    assert df["acct"].tolist() == ["99999999999999999999", "99999999999999999998", "99999999999999999997"]
    assert "integers beyond 2**53" in read_info(df).column_notes["acct"]
    schema = infer_schema(df)
    assert "acct" in schema.ignored and "an identifier" in schema.reasons["acct"]
    # Within 64 bits but beyond 2**53: float64 would merge 2**53 + 1 into 2**53.
    df = read_table(f"id,v\n{2**53 + 1},1\n{2**53},2\n".encode(), name="i.csv")
    assert df["id"].tolist() == [str(2**53 + 1), str(2**53)]


def test_leading_zero_codes_stay_as_written_and_say_so():
    from craft.schema import infer_schema

    df = read_table(b"code,v\n00123,1\n00456,2\nNA,3\n00123,4\n", name="c.csv")
    assert df["code"].isna().tolist() == [False, False, True, False]
    assert df["code"].dropna().tolist() == ["00123", "00456", "00123"]
    note = read_info(df).column_notes["code"]
    assert "leading zeros (e.g. '00123')" in note and "read as missing: 'NA' ×1" in note
    assert read_info(df).read_as_missing == {"code": {"NA": 1}}
    reason = infer_schema(df).reasons["code"]
    assert "digit codes with leading zeros" in reason and "categorical" in reason
    # Unique for every row: an identifier, whatever the table's size.
    unique = read_table(b"zip,v\n01234,1\n05678,2\n09999,3\n", name="z.csv")
    assert "zip" in infer_schema(unique).ignored
    # A plain 0 and numbers such as 100 are not codes.
    assert read_table(b"n,v\n0,1\n100,2\n", name="n.csv")["n"].tolist() == [0, 100]


def test_german_thousands_and_decimal_comma_are_numbers_and_say_so():
    df = read_table(b"betrag;name\n1.234,56;a\n1.000;b\n-7,5;c\n2.345.678,00;d\n", name="de.csv")
    assert df["betrag"].tolist() == [1234.56, 1000.0, -7.5, 2345678.0]
    assert read_info(df).column_notes["betrag"] == (
        "numbers written with thousands separators (e.g. '1.234,56') read as numbers")
    # Without a decimal comma in the file, "1.234" is a decimal point, as before.
    assert read_table(b"a;b\n1.234;x\n2.5;y\n", name="dot.csv")["a"].tolist() == [1.234, 2.5]


def test_every_nan_spelling_read_as_missing_is_counted():
    df = read_table(b"a,b\n1,x\nNAN,y\nNaN,z\nnAn,w\n", name="n.csv")
    assert df["a"].isna().tolist() == [False, True, True, True]
    assert read_info(df).read_as_missing == {"a": {"NAN": 1, "NaN": 1, "nAn": 1}}


def test_excel_sep_line_names_the_delimiter():
    df = read_table(b"sep=;\r\na;b\r\n1,5;x\r\n2,5;y\r\n", name="excel.csv")
    assert df.to_dict("list") == {"a": [1.5, 2.5], "b": ["x", "y"]}
    assert read_info(df).notes() == [
        "The first line of 'excel.csv', 'sep=;', names the delimiter (Excel's hint): read as such, not as data."]


def test_zip_archive_named_csv_says_what_it_is():
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("data.csv", "a,b\n1,2\n")
    with pytest.raises(CraftInputError, match=r"'data\.csv' is a ZIP archive, not a table or an Excel workbook "
                                              r"\(it holds 'data\.csv'\): unzip it and read the table inside"):
        read_table(buffer.getvalue(), name="data.csv")


@pytest.mark.slow  # a fresh Python process: in `make test`, not `make test-fast`
def test_blank_lines_and_long_lines_take_memory_bounded_by_the_file(tmp_path):
    """Peak memory (the process's maximum resident size, which counts the
    parser's native buffers) over reading each shape stays a few times the
    file: blank lines were a row each (4 MB of newlines took 400 MB)."""
    import subprocess
    import sys

    script = """
import os, resource
from craft.exceptions import CraftInputError
from craft.io import read_table
n = 4_000_000
shapes = {
    "blank lines": b"a,b\\n1,x\\n" + b"\\n" * n + b"2,y\\n",
    "lines of spaces": b"a,b\\n1,x\\n" + b" \\r\\n" * (n // 3) + b"2,y\\n",
    "one line of delimiters": b"a,b\\n" + b"," * (n // 4) + b"\\n1,x\\n",
    "one long cell": b"a,b\\n1,\\"" + b"x" * n + b"\\"\\n2,y\\n",
}
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
read_table(b"a,b\\n1,x\\n", name="warm.csv")
for name, data in shapes.items():
    # Each shape in a process of its own (forked after the imports), so that its peak is its own.
    child = os.fork()
    if child == 0:
        before = peak()
        try:
            read_table(data, name="m.csv")
        except CraftInputError:
            pass
        print(name, (peak() - before) / 2**20, flush=True)
        os._exit(0)
    os.waitpid(child, 0)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            env={**__import__("os").environ, "CRAFT_MAX_COLUMNS": "100000"})
    assert result.returncode == 0, result.stderr
    grown = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in result.stdout.splitlines()}
    assert len(grown) == 4
    # 4 MB files: at most 100 MB above what the process held before.
    assert all(mb < 100 for mb in grown.values()), grown


def test_widest_line_bounds_the_columns_before_parsing():
    with pytest.raises(CraftInputError, match=r"'w\.csv' has about 2,000,001 columns"):
        read_table(b"a,b\n1,x\n" + b"," * 2_000_000 + b"\n", name="w.csv")
    # Blank lines are counted, not kept: the count is exact, quoted newlines stay in their cell.
    df = read_table(b'a,b\n1,x\n\n \r\n2,"y\n\nz"\n\n', name="q.csv")
    assert df["b"].tolist() == ["x", "y\n\nz"] and read_info(df).blank_rows == 3


def _workbook(path, sheets, *, hidden=(), charts=()):
    """A workbook of the given sheets (name → rows) in order, some hidden, some chart sheets."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        if name in charts:
            book.create_chartsheet(name)
            continue
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
        if name in hidden:
            sheet.sheet_state = "hidden"
    book.save(path)


def test_first_visible_worksheet_with_data_is_read_and_named(tmp_path):
    path = tmp_path / "book.xlsx"
    table = [["x", "y"], [1, "a"], [2, "b"]]
    _workbook(path, {"Chart": [], "Secret": [["s"], [9]], "Empty": [], "Data": table, "More": [["m"], [3]]},
              hidden=("Secret",), charts=("Chart",))
    df = read_table(path)
    assert df.to_dict("list") == {"x": [1, 2], "y": ["a", "b"]}
    assert read_info(df).sheet == "Data"
    assert read_info(df).notes() == [
        "Read sheet 'Data' of 5 ('Chart', 'Secret', 'Empty', 'Data', 'More'), passing over 'Chart' (a chart); "
        "'Secret' (hidden); 'Empty' (empty)."]
    # A hidden sheet is read when named.
    assert read_table(path, sheet="Secret")["s"].tolist() == [9]
    with pytest.raises(CraftInputError, match=r"sheet 'Chart' is a chart, not a table; its sheets are 'Chart', "
                                              r"'Secret', 'Empty', 'Data', 'More': name another"):
        read_table(path, sheet="Chart")
    with pytest.raises(CraftInputError, match=r"sheet 'Empty' is empty; its other sheets: 'Chart', 'Secret', "
                                              r"'Data', 'More'"):
        read_table(path, sheet="Empty")
    bare = tmp_path / "bare.xlsx"
    _workbook(bare, {"Chart": [], "Secret": [["s"], [9]], "Empty": []}, hidden=("Secret",), charts=("Chart",))
    with pytest.raises(CraftInputError, match=r"no visible worksheet holds a table .*'Chart' \(a chart\), "
                                              r"'Secret' \(hidden\), 'Empty' \(empty\)\. Name the sheet to read"):
        read_table(bare)


def test_uncached_formulas_are_named(tmp_path):
    path = tmp_path / "formulas.xlsx"
    # openpyxl writes formulas without the values Excel would have saved.
    _workbook(path, {"Calc": [["a", "double"], [1, "=A2*2"], [2, "=A3*2"]]})
    df = read_table(path)
    assert df["double"].isna().all()
    info = read_info(df)
    assert info.uncached_formulas == {"double": 2}
    assert info.notes() == [
        "Sheet 'Calc' of 'formulas.xlsx' has 2 formula cell(s) without a saved value, in column(s) 'double': they "
        "are read as missing. Open the workbook in Excel and save it to store the values."]
    assert "2 formula cell(s) without a saved value" in info.column_notes["double"]


def test_cli_sheet_option_reads_the_named_sheet_and_prints_the_sheet_read(tmp_path, capsys):
    from craft.cli import main

    path = tmp_path / "book.xlsx"
    rows = [["x", "g"], *[[float(i % 7), "ab"[i % 2]] for i in range(30)]]
    _workbook(path, {"readme": [["about"], ["this workbook"]], "data": rows})
    assert main(["fit", str(path), "--sheet", "data", "--k", "2", "--n-init", "1"]) == 0
    assert "note: Read sheet 'data' of 2 ('readme', 'data')." in capsys.readouterr().err
    assert main(["fit", str(path), "--sheet", "nope"]) == 2
    assert "has no sheet named 'nope'; its sheets are 'readme', 'data'" in capsys.readouterr().err
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("x,g\n1,a\n2,b\n")
    assert main(["fit", str(csv_path), "--sheet", "data"]) == 2
    assert "is not an Excel workbook; leave --sheet out" in capsys.readouterr().err


def test_parquet_integers_beside_missing_cells_beyond_2_53_stay_exact(tmp_path):
    # float64, pandas' type for integers with missing cells, would round 2**60 + 1 into 2**60.
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "ids.parquet"
    big = 2**60
    pq.write_table(pa.table({"id": pa.array([big + 1, None, big], pa.int64()),
                             "small": pa.array([1, None, 3], pa.int64()),
                             "x": [0.5, 1.5, 2.5]}), path)
    df = read_table(path)
    assert df["id"].tolist()[0] == str(big + 1) and df["id"].tolist()[2] == str(big)
    assert pd.isna(df["id"].iloc[1])
    assert "2**53" in df.attrs["craft_read"].column_notes["id"]
    # Within 2**53 the integers are exact as floats: the column stays numeric.
    assert df["small"].dtype == np.float64 and df["small"].iloc[2] == 3.0
    assert "small" not in df.attrs["craft_read"].column_notes
