"""The version of craft, in a module of its own.

``craft.persist`` and ``craft.export`` write it into the files they save, and
pyproject.toml reads it (``[tool.setuptools.dynamic]``), so it is written once.
A module that imports nothing lets them read it without importing the package's
``__init__`` (which imports every public module, persist among them).
"""

__version__ = "0.1.0"
