"""Self-contained SVG figures without a plotting library.

A heatmap of the data is embedded as a small PNG (written here with zlib)
and scaled with ``image-rendering: pixelated``; masks, labels and legends are
plain SVG, so one figure is a few kilobytes and needs nothing to view.
"""

from __future__ import annotations

import base64
import html
import struct
import zlib
from pathlib import Path

import numpy as np

# A perceptually ordered ramp (dark blue -> teal -> yellow), viridis-like.
_RAMP = np.array([[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]], dtype=float)


def png_bytes(rgb: np.ndarray) -> bytes:
    """PNG file of an (h, w, 3) uint8 image."""
    height, width, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[row].astype(np.uint8).tobytes() for row in range(height))

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def colour(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Map values to RGB on the ramp, ``low`` and ``high`` at its ends."""
    t = np.clip((values - low) / max(high - low, 1e-12), 0.0, 1.0) * (len(_RAMP) - 1)
    index = np.minimum(t.astype(int), len(_RAMP) - 2)
    fraction = (t - index)[..., None]
    return (_RAMP[index] * (1 - fraction) + _RAMP[index + 1] * fraction).round().astype(np.uint8)


def _text(x, y, content, size=11, anchor="start", weight="normal", rotate=None):
    transform = f' transform="rotate({rotate} {x} {y})"' if rotate is not None else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
        f'font-family="Helvetica, Arial, sans-serif"{transform}>{html.escape(str(content))}</text>'
    )


def _mask_grid(x0, y0, mask, truth, cell, title):
    """One cluster x feature grid: selected cells filled, differences from the truth in red."""
    parts = [_text(x0, y0 - 6, title, 11, weight="bold")]
    n_clusters, n_features = mask.shape
    for k in range(n_clusters):
        parts.append(_text(x0 - 4, y0 + (k + 0.5) * cell + 4, f"C{k + 1}", 10, anchor="end"))
        for j in range(n_features):
            selected, wanted = bool(mask[k, j]), bool(truth[k, j]) if truth is not None else bool(mask[k, j])
            if selected and wanted:
                fill, stroke = "#2b2d6e", "#ffffff"
            elif selected:
                fill, stroke = "#d62728", "#ffffff"  # selected but not planted
            elif wanted:
                fill, stroke = "#ffffff", "#d62728"  # planted but missed
            else:
                fill, stroke = "#eeeeee", "#ffffff"
            parts.append(
                f'<rect x="{x0 + j * cell:.1f}" y="{y0 + k * cell:.1f}" width="{cell:.1f}" height="{cell:.1f}" '
                f'fill="{fill}" stroke="{stroke}" stroke-width="{1.5 if stroke != "#ffffff" else 0.5}"/>'
            )
    return parts


def recovery_figure(
    path: Path,
    title: str,
    values: np.ndarray,
    labels: np.ndarray,
    truth: np.ndarray,
    recovered: np.ndarray | None,
    caption: str,
) -> Path:
    """Dataset heatmap (rows grouped by true cluster) beside the planted and the recovered masks.

    ``recovered`` is aligned to the planted clusters (None when the fit had
    another number of clusters; the panel then says so).
    """
    order = np.argsort(labels, kind="stable")
    data = np.asarray(values, dtype=float)[order]
    n_rows, n_features = data.shape
    low, high = np.percentile(data, 1), np.percentile(data, 99)
    image = colour(data, low, high)
    uri = "data:image/png;base64," + base64.b64encode(png_bytes(image)).decode("ascii")

    cell = max(9.0, min(16.0, 420.0 / n_features))
    heat_w, heat_h = n_features * cell * 0.6, 300.0
    margin, gap = 40.0, 60.0
    mask_x = margin + heat_w + gap
    mask_w = n_features * cell
    k = truth.shape[0]
    width = mask_x + mask_w + 20
    caption_lines = _wrap(caption, int(width / 6.2))
    caption_y = max(52 + heat_h + 40, 70 + 2 * (k * cell + 40) + 20)
    height = caption_y + 13 * len(caption_lines) + 10

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">',
        '<rect width="100%" height="100%" fill="white"/>',
        _text(margin, 20, title, 13, weight="bold"),
        _text(margin, 44, "(a) dataset: rows grouped by planted cluster", 11),
        f'<image x="{margin}" y="52" width="{heat_w:.1f}" height="{heat_h:.1f}" preserveAspectRatio="none" '
        f'style="image-rendering:pixelated;image-rendering:crisp-edges" href="{uri}"/>',
        _text(margin + heat_w / 2, 52 + heat_h + 16, f"features 1–{n_features}", 10, anchor="middle"),
        _text(margin - 8, 52 + heat_h / 2, f"{n_rows} rows", 10, anchor="middle", rotate=-90),
    ]
    boundaries = np.flatnonzero(np.diff(np.sort(labels))) + 1
    for b in boundaries:
        y = 52 + heat_h * b / n_rows
        parts.append(f'<line x1="{margin}" x2="{margin + heat_w:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="white" stroke-width="1.5"/>')
    parts += _mask_grid(mask_x, 70, truth, None, cell, "planted subspaces")
    y_rec = 70 + k * cell + 40
    if recovered is not None:
        parts += _mask_grid(mask_x, y_rec, recovered, truth, cell, "(b) CRAFT: selected features")
    else:
        parts.append(_text(mask_x, y_rec, "(b) CRAFT found another number of clusters", 11, weight="bold"))
    y_legend = y_rec + k * cell + 24
    for i, (fill, stroke, label) in enumerate(
        (("#2b2d6e", "#ffffff", "selected and planted"), ("#d62728", "#ffffff", "selected, not planted"), ("#ffffff", "#d62728", "planted, missed"))
    ):
        x = mask_x + i * 150
        parts.append(f'<rect x="{x}" y="{y_legend}" width="10" height="10" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>')
        parts.append(_text(x + 14, y_legend + 9, label, 10))
    for i, line in enumerate(caption_lines):
        parts.append(_text(margin, caption_y + i * 13, line, 10))
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _wrap(text: str, width: int) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + ([line] if line else [])
