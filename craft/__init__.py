"""CRAFT: clustering of mixed data with cluster-specific feature selection.

A library implementation of Garg, Rudin and Jaakkola's CRAFT (ClusteR-specific
Assorted Feature selecTion): a K-means-style, nonparametric clustering of
numeric and categorical data in which every cluster selects its own features.

>>> from craft import CRAFT, infer_schema, read_table
"""

from . import datasets, metrics, stability, synthetic
from ._assignment import Explanation
from ._engine import CostTerms, Inspection, IterationRecord, ObjectiveTerms, Selection
from ._compile import warm_up
from ._version import __version__ as __version__
from .cards import ClusterCard, cluster_card
from ._warm_start import warm_refit
from .estimator import CRAFT
from .exceptions import CraftInputError
from .io import read_table
from .persist import load
from .priors import default_rho, prior_terms
from .schema import Schema, infer_schema

__all__ = [
    "CRAFT",
    "ClusterCard",
    "CostTerms",
    "CraftInputError",
    "Explanation",
    "Inspection",
    "IterationRecord",
    "ObjectiveTerms",
    "Schema",
    "Selection",
    "cluster_card",
    "datasets",
    "default_rho",
    "infer_schema",
    "load",
    "metrics",
    "prior_terms",
    "read_table",
    "stability",
    "synthetic",
    "warm_refit",
    "warm_up",
]
