"""A text file's encoding and delimiter, sniffed from its first characters, and its decimal mark."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence

import numpy as np

from ..exceptions import CraftInputError


# Candidate delimiters, in order of preference when several fit equally well.
_DELIMITERS = (",", "\t", ";", "|")
# Characters of decoded text looked at to sniff the format.
_SAMPLE_CHARS = 65536
# Records of the sample parsed per candidate delimiter.
_SAMPLE_RECORDS = 200
# A text sample with more than this share of control characters is binary.
_MAX_CONTROL_SHARE = 0.01
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ENCODINGS_READ = (
    "UTF-8 (with or without BOM), UTF-16 (with or without BOM), UTF-32 with BOM, Windows-1252 and Latin-1"
)
_CONVERT_HINT = "save it as UTF-8 CSV (e.g. iconv -f <encoding> -t UTF-8 file.csv > file-utf8.csv)"
# Excel's delimiter hint, a first line "sep=;" (one ASCII character but a quote).
_SEP_HINT_RE = re.compile(r"[ \t]*sep=([\t !#-~])[ \t]*\r?\n")


def _bom_free_encoding(data: bytes) -> str | None:
    """UTF-16 or UTF-32 without a BOM, told by where the zero bytes of
    ASCII characters fall (every other byte, or three bytes of four)."""
    head = data[:4096]
    n = len(head) // 4 * 4
    if n < 8:
        return None
    quads = np.frombuffer(head[:n], dtype=np.uint8).reshape(-1, 4) == 0
    share = quads.mean(axis=0)
    if share[1] > 0.9 and share[2] > 0.9 and share[3] > 0.9 and share[0] < 0.5:
        return "utf-32-le"
    if share[0] > 0.9 and share[1] > 0.9 and share[2] > 0.9 and share[3] < 0.5:
        return "utf-32-be"
    pairs = np.frombuffer(head[: n], dtype=np.uint8).reshape(-1, 2) == 0
    even, odd = pairs.mean(axis=0)
    if odd > 0.4 and even < 0.05:
        return "utf-16-le"
    if even > 0.4 and odd < 0.05:
        return "utf-16-be"
    return None


def _decode(data: bytes, label: str) -> tuple[str, str]:
    encodings: tuple[str, ...]
    if data.startswith(b"\xef\xbb\xbf"):
        encodings = ("utf-8-sig",)
    elif data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        encodings = ("utf-32",)
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encodings = ("utf-16",)
    else:
        bom_free = _bom_free_encoding(data)
        encodings = (bom_free,) if bom_free else ("utf-8", "cp1252", "latin-1")
    for encoding in encodings:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise CraftInputError(
        f"{label} is not a readable table: it is not valid {encodings[0]} text; the encodings read are "
        f"{_ENCODINGS_READ}: {_CONVERT_HINT}"
    )


def _strip_leading_blank_lines(text: str) -> str:
    """Drop blank lines before the header (pandas would take one for the header)."""
    match = re.match(r"(?:[ \t]*\r?\n)+", text)
    return text[match.end():] if match else text


def _delimiter(text: str, *, prefer_tab: bool) -> tuple[str, str, list[list[str]], str | None]:
    """The text without Excel's ``sep=;`` first line (which names the
    delimiter, and is not the header), the delimiter, the sample's records,
    and that first line (None without it)."""
    hint = _SEP_HINT_RE.match(text)
    if hint:
        text = _strip_leading_blank_lines(text[hint.end():])
    sample = text[:_SAMPLE_CHARS]
    truncated = len(text) > _SAMPLE_CHARS
    if truncated and "\n" in sample:
        sample = sample[: sample.rindex("\n") + 1]
    if hint:
        delimiter = hint.group(1)
        return text, delimiter, _parse_records(sample, delimiter, truncated=truncated), hint.group(0).strip()
    delimiter, records = _sniff_delimiter(sample, truncated=truncated, prefer_tab=prefer_tab)
    return text, delimiter, records, None


def _parse_records(sample: str, delimiter: str, *, truncated: bool) -> list[list[str]]:
    """Up to ``_SAMPLE_RECORDS`` non-empty records of the sample."""
    records: list[list[str]] = []
    reader = csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter, quotechar='"',
                        strict=False)
    try:
        for record in reader:
            if record and (len(record) > 1 or record[0].strip()):  # pandas skips blanks
                records.append(record)
                if len(records) > _SAMPLE_RECORDS:
                    break
    except csv.Error:
        pass  # e.g. a field over the csv module's size limit: use what was read
    if truncated and len(records) > 1:
        records.pop()  # may be cut in the middle of a quoted field
    return records


def _sniff_delimiter(
    sample: str, *, truncated: bool, prefer_tab: bool
) -> tuple[str, list[list[str]]]:
    """The delimiter that splits the sample's records most consistently."""
    parsed = {d: _parse_records(sample, d, truncated=truncated) for d in _DELIMITERS}
    if prefer_tab and parsed["\t"] and len(parsed["\t"][0]) > 1:
        return "\t", parsed["\t"]
    scored = []
    for order, delimiter in enumerate(_DELIMITERS):
        records = parsed[delimiter]
        if not records or len(records[0]) < 2:
            continue
        width = len(records[0])
        consistency = sum(len(r) == width for r in records) / len(records)
        scored.append((consistency, delimiter, order))
    if not scored:  # one column
        delimiter = "\t" if prefer_tab else ","
        return delimiter, parsed[delimiter]
    best = max(score[0] for score in scored)
    tied = [(order, delimiter) for consistency, delimiter, order in scored
            if consistency == best]
    if len(tied) > 1:
        sniffed = _csv_sniffer(sample)
        if sniffed in {d for _, d in tied}:
            return sniffed, parsed[sniffed]
    delimiter = min(tied)[1]
    return delimiter, parsed[delimiter]


def _csv_sniffer(sample: str) -> str | None:
    """csv.Sniffer's guess on the first few kB, used only to break ties."""
    head = sample[:4096]
    if "\n" in head:
        head = head[: head.rindex("\n") + 1]
    try:
        return csv.Sniffer().sniff(head, delimiters="".join(_DELIMITERS)).delimiter
    except csv.Error:
        return None


_COMMA_DECIMAL_RE = re.compile(r"\s*[-+]?(?:\d{1,3}(?:\.\d{3})+|\d+),\d+(?:[eE][-+]?\d+)?\s*")
_DOT_DECIMAL_RE = re.compile(r"\s*[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?\s*")


def _uses_decimal_comma(records: Sequence[Sequence[str]]) -> bool:
    """Whether numbers in the sample use a decimal comma (``2,5``) more
    often than a decimal point."""
    n_comma = n_dot = 0
    for record in records:
        for field_ in record:
            if _COMMA_DECIMAL_RE.fullmatch(field_):
                n_comma += 1
            elif _DOT_DECIMAL_RE.fullmatch(field_):
                n_dot += 1
    return n_comma > 0 and n_comma >= n_dot
