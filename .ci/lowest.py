"""Print the core dependencies pinned at the lower bounds pyproject.toml declares.

``.ci/run`` installs exactly these next to the wheel, so that every ``>=``
bound in ``[project] dependencies`` is a version the estimator checks ran on.
"""

import re
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
pins = []
for requirement in project["dependencies"]:
    match = re.fullmatch(r"([A-Za-z0-9_.\-]+)>=([0-9][0-9A-Za-z.]*)", requirement.replace(" ", ""))
    if match is None:
        raise SystemExit(f"core dependency {requirement!r} has no plain '>=' lower bound to test")
    pins.append(f"{match[1]}=={match[2]}")
print(" ".join(pins))
