"""Re-vendor the charts' plotly.js: the cartesian bundle of the version plotly.py writes its figures for.

Usage (from the repository root, with the app extra installed)::

    python .ci/vendor_plotly.py            # the version of the installed plotly.py
    python .ci/vendor_plotly.py 4.1.1      # a given plotly.js version

It runs ``npm pack plotly.js-cartesian-dist-min@<version>`` (npm, the registry's
own client), takes ``plotly-cartesian.min.js`` and its ``LICENSE`` from the
package into ``static/``, and writes ``static/plotly-cartesian.json``: the npm
package, its version and the bundle's sha256. ``tests/app/test_plotly_view.py``
checks the file against that record and the version against
``plotly.offline.get_plotlyjs_version()``, so a plotly.py upgrade, or a bundle
changed by hand, fails there until this script is run again.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"
PACKAGE = "plotly.js-cartesian-dist-min"
BUNDLE = "plotly-cartesian.min.js"
LICENSE = "plotly-cartesian.LICENSE"
RECORD = "plotly-cartesian.json"


def record(bundle: bytes, version: str) -> dict:
    """What ``static/plotly-cartesian.json`` holds for ``bundle`` of plotly.js ``version``."""
    return {"package": PACKAGE, "version": version, "sha256": hashlib.sha256(bundle).hexdigest()}


def main(argv: list[str]) -> int:
    if argv:
        version = argv[0]
    else:
        import plotly.offline

        version = plotly.offline.get_plotlyjs_version()
    with tempfile.TemporaryDirectory() as folder:
        packed = subprocess.run(["npm", "pack", "--silent", f"{PACKAGE}@{version}"], cwd=folder, check=True,
                                capture_output=True, text=True).stdout.strip().splitlines()[-1]
        with tarfile.open(Path(folder) / packed) as archive:
            bundle = archive.extractfile(f"package/{BUNDLE}")
            license_text = archive.extractfile("package/LICENSE")
            assert bundle is not None and license_text is not None, f"{packed} lacks {BUNDLE} or LICENSE"
            data = bundle.read()
            (STATIC / BUNDLE).write_bytes(data)
            (STATIC / LICENSE).write_bytes(license_text.read())
    (STATIC / RECORD).write_text(json.dumps(record(data, version), indent=2) + "\n", encoding="utf-8")
    print(f"static/{BUNDLE}: {PACKAGE}@{version}, sha256 {hashlib.sha256(data).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
