"""The :mod:`craft.plots` package: its figures are those drawn before the split, and its privates stay inside it.

The first test draws every figure of ``plots_gallery.gallery`` (133 figures on
the Figure 1-3 tables and bundled tables, cards, stability and mask path
included) and compares the sha256 of each one's canonical JSON with the
digests recorded from ``craft/plots.py``, ``card_plots.py``,
``path_plots.py`` and ``stability_plots.py`` before they were split into the
package: not one byte of any figure changed.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import plots_gallery
import pytest

import craft.plots

ROOT = next(folder for folder in Path(__file__).resolve().parents if (folder / "pyproject.toml").exists())
FAMILIES = ("masks", "heatmap", "fit", "compare", "cards", "stability", "mask_path")


@pytest.mark.slow  # 133 figures drawn: 15-30 s, left to make test
def test_every_figure_is_byte_identical_to_the_one_drawn_before_the_split():
    recorded = json.loads(plots_gallery.DIGESTS.read_text())
    drawn = plots_gallery.digests()
    assert sorted(drawn) == sorted(recorded), "the gallery draws other figures than were recorded"
    changed = sorted(name for name in recorded if drawn[name] != recorded[name])
    assert not changed, f"{len(changed)} of {len(recorded)} figures changed: {changed}"


def test_every_figure_and_public_name_of_a_family_is_importable_from_the_package():
    for family in FAMILIES:
        module = getattr(craft.plots, family)
        figures = [name for name in module.__all__ if name.startswith("fig_")]
        assert figures, family
        for name in figures:
            assert name in craft.plots.__all__ and getattr(craft.plots, name) is getattr(module, name), name
    for name in craft.plots.__all__:
        assert not name.startswith("_") and getattr(craft.plots, name) is not None, name


def _private_uses(path: Path) -> list[str]:
    """``_names`` that ``path`` takes from :mod:`craft.plots` or its modules (imports and ``plots._x`` attributes)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("craft.plots"):
            if node.module.split(".")[-1].startswith("_"):
                found.append(f"from {node.module} import ...")
            found += [f"from {node.module} import {alias.name}" for alias in node.names if alias.name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [f"import {alias.name}" for alias in node.names if alias.name.startswith("craft.plots._")]
        elif (isinstance(node, ast.Attribute) and node.attr.startswith("_") and isinstance(node.value, ast.Name)
              and node.value.id.endswith("plots")):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_module_outside_the_package_takes_a_private_helper_from_it():
    package = ROOT / "craft" / "plots"
    files = [path for folder in ("craft", "explorer", "pages", "benchmarks", "tests") for path in (ROOT / folder).rglob("*.py")
             if package not in path.parents] + [ROOT / "app.py"]
    uses = {str(path.relative_to(ROOT)): found for path in files if (found := _private_uses(path))}
    assert not uses, uses


def test_the_figure_modules_without_plotly_name_the_plots_extra():
    # Every module of the package is reached through its __init__, whose first import (_style) holds the guard.
    for module in ("craft.plots.stability", "craft.plots.mask_path", "craft.plots.cards"):
        result = subprocess.run([sys.executable, "-c", f"import sys; sys.modules['plotly'] = None\nimport craft\nimport {module}"],
                                capture_output=True, text=True, cwd=ROOT, check=False)
        assert result.returncode != 0
        assert "MissingExtraError: craft.plots needs the optional package plotly" in result.stderr, result.stderr
        assert "pip install 'craft-explorer[plots]'" in result.stderr
