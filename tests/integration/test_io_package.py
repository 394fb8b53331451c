"""The packages craft.io, craft.cli, craft.cards and craft.stability, split into modules of one job each (issue 33):
the names users import still import from where they did, the console script still resolves, and no module
reaches into another module's private names (tests/integration/test_doctests.py runs the new modules' examples)."""

from __future__ import annotations

import importlib
import importlib.util
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The public names of each module before the split (their __all__, or every public name they defined).
PUBLIC = {
    "craft.io": ["DEFAULT_MISSING_TOKENS", "PATH_COLUMN", "ReadInfo", "read_info", "read_table", "table_fingerprint",
                 "typed_part"],
    "craft.cards": ["ClusterCard", "ClusterRule", "CardWords", "cluster_card", "numeric_evidence", "level_evidence",
                    "paragons", "border_rows", "cluster_rule", "RULE_DEPTH", "RULE_ROWS", "RULE_LEVELS", "MULTIPLICITY",
                    "LEVEL_P_CONVENTION", "LEVEL_P_WORDS", "NUMERIC_COLUMNS", "LEVEL_COLUMNS"],
    "craft.stability": ["UNSTABLE_JACCARD", "DISSOLVED_JACCARD", "MATCHED_JACCARD", "MAX_RESAMPLES", "ROWS_PER_K", "MAX_KS",
                        "UNSTABLE_MEANING", "Progress", "Stopped", "best_match_jaccard", "refit_params", "sizing",
                        "Stability", "bootstrap_stability", "PermutationNull", "REFERENCE_WORDS", "shuffled_columns",
                        "one_cluster_reference", "permutation_null", "cost_silhouette", "k_evidence"],
    "craft.cli": ["main"],
}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_every_public_name_imports_from_where_it_did(package):
    module = importlib.import_module(package)
    missing = [name for name in PUBLIC[package] if not hasattr(module, name)]
    assert not missing, f"{package} lost {missing}"
    assert set(getattr(module, "__all__", PUBLIC[package])) <= set(dir(module))


def test_the_console_script_resolves_to_the_cli_main(capsys):
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["craft"]
    module, _, name = target.partition(":")
    assert getattr(importlib.import_module(module), name)(["--version"]) == 0
    assert capsys.readouterr().out.startswith("craft ")


