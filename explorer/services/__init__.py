"""Computations behind the CRAFT Explorer app, free of any user-interface code.

The Streamlit app wraps these functions in its caches; a notebook can call
them directly, from this one namespace (``from explorer.services import
load_example, fit_craft``). Nothing here imports Streamlit. One module a job;
the app's own modules import from them:

* :mod:`~explorer.services.params` - :class:`FitParams`, every knob of a
  CRAFT fit as one hashable value, and :func:`rho_from_share`.
* :mod:`~explorer.services.loading` - :func:`load_example`,
  :func:`load_upload`: a table, its suggested column roles, its label column
  and (for synthetic sets) the planted subspaces, as :class:`LoadedData`.
* :mod:`~explorer.services.roles` - :func:`fit_schema`, the roles used for
  fitting after the user's changes (the label column is never fitted), the
  columns' report, k from the label's classes, the truth a fit is scored
  against.
* :mod:`~explorer.services.fitting` - :func:`fit_craft`, one fit, with the
  problems a user can act on turned into messages (:class:`FitOutcome`), and
  :func:`distance_table` (the Teach page: one row's distance to every
  cluster, term by term, read from the fit's inspection surface).
* :mod:`~explorer.services.compare`, :mod:`~explorer.services.whatif` -
  :func:`compare_methods` and :func:`sweep`, the Compare and What-if pages.
* :mod:`~explorer.services.scoring` - new rows scored by a fit or a saved
  model (:func:`score_rows`), and the model file.
"""

from __future__ import annotations

from .compare import DENSE_LIMIT_BYTES, METHODS, compare_methods
from .fitting import TEACH_ROWS, FitOutcome, distance_table, fit_craft, fitted_X
from .loading import (
    EXAMPLE_ROWS,
    EXAMPLES,
    PRESETS,
    SYNTHETIC_LABEL,
    UPLOAD_TYPES,
    LoadedData,
    cells_as_written,
    example_names,
    file_stem,
    load_example,
    load_upload,
    original_cells,
    read_upload,
    reading_notes,
    upload_key,
)
from .params import ESTIMATOR_DEFAULTS, FitParams, rho_from_share, share_of_rho
from .roles import column_report, fit_schema, fitted_table, k_advice, labels_for_evaluation, suggested_k, truth_agreement
from .scoring import MODEL_FILE_TYPES, Scoring, load_saved_model, model_file, score_rows, scored_cells
from .whatif import SWEEPABLE, sweep, sweep_values, swept

__all__ = [
    "FitParams",
    "FitOutcome",
    "LoadedData",
    "EXAMPLES",
    "PRESETS",
    "EXAMPLE_ROWS",
    "SYNTHETIC_LABEL",
    "suggested_k",
    "k_advice",
    "truth_agreement",
    "METHODS",
    "DENSE_LIMIT_BYTES",
    "SWEEPABLE",
    "example_names",
    "load_example",
    "load_upload",
    "read_upload",
    "UPLOAD_TYPES",
    "file_stem",
    "upload_key",
    "original_cells",
    "cells_as_written",
    "reading_notes",
    "load_saved_model",
    "model_file",
    "MODEL_FILE_TYPES",
    "Scoring",
    "score_rows",
    "scored_cells",
    "fit_schema",
    "column_report",
    "fitted_table",
    "labels_for_evaluation",
    "rho_from_share",
    "share_of_rho",
    "ESTIMATOR_DEFAULTS",
    "TEACH_ROWS",
    "fit_craft",
    "fitted_X",
    "compare_methods",
    "sweep",
    "sweep_values",
    "swept",
    "distance_table",
]
