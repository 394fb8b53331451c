"""Engine options for tests that drive ``craft._engine`` directly, with the estimator's defaults.

``_engine.Options`` has no defaults of its own for what mirrors a parameter of
``craft.CRAFT``; tests take the estimator's, from its signature, as the CLI
and ``DaskCRAFT`` do.
"""

from __future__ import annotations

import dataclasses
import inspect

from craft import CRAFT, _engine
from craft.priors import PriorTerms

#: The estimator's defaults of the options that mirror its parameters.
ESTIMATOR_DEFAULTS = {
    name: parameter.default
    for name, parameter in inspect.signature(CRAFT.__init__).parameters.items()
    if name in {field.name for field in dataclasses.fields(_engine.Options)} and name != "lam"
}


def engine_options(terms: PriorTerms, lam: float, **changes) -> _engine.Options:
    """``_engine.Options`` with the estimator's defaults, ``changes`` applied."""
    return _engine.Options(terms=terms, lam=lam, **{**ESTIMATOR_DEFAULTS, **changes})
