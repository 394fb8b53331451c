"""Exercise an installed craft-explorer wheel from outside the repository.

Run by .ci/run with a virtual environment that holds the wheel and nothing
of the source tree: the bundled datasets must load from the installed
package, a fit must work with the core dependencies only, and every extra
that is absent must say which extra brings it.

Usage: python wheel_smoke.py [--core-only]
"""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import craft
from craft import CRAFT, datasets, metrics

here = Path(craft.__file__).resolve().parent
assert "site-packages" in here.parts, f"craft imported from {here}, not from the installed wheel"
assert (here / "py.typed").is_file(), "py.typed is missing from the wheel"

# The app ships beside the library under craft_app/: its entry point, every page it lists, its package and
# the server settings Streamlit reads beside the entry point.
spec = importlib.util.find_spec("craft_app")
assert spec is not None and spec.submodule_search_locations, "craft_app (the app) is missing from the wheel"
app = Path(next(iter(spec.submodule_search_locations)))
pages = re.findall(r'st\.Page\("([^"]+)"', (app / "app.py").read_text())
assert len(pages) >= 8, pages
# The charts' plotly.js (served as app/static/), its licence, the chart component's JavaScript and the template
# the charts are drawn with.
shipped = ("explorer/__init__.py", "explorer/serve.py", "explorer/services/__init__.py", ".streamlit/config.toml", "static/plotly-cartesian.min.js",
           "static/plotly-cartesian.LICENSE", "static/plotly_view.js", "explorer/chart_theme.json")
for name in (*pages, *shipped):
    assert (app / name).is_file(), f"{name} is missing from the wheel's craft_app/"
assert not (here.parent / "pages").exists() and not (here.parent / "app.py").exists(), "the app must not land at the top of site-packages"

X, y = datasets.load("wine")
assert X.shape == (178, 13), X.shape
model = CRAFT(m=0.5, k=3, n_init=2, random_state=0).fit(X)
assert model.n_clusters_ == 3 and model.labels_.shape == (178,)
scores = metrics.evaluate(y, model.labels_)
assert scores["purity"] > 0.8, scores
assert (datasets.list_datasets()["rows"] > 0).all()
print(f"wheel: {here}; wine fit K={model.n_clusters_}, purity={scores['purity']:.3f}")

if "--core-only" in sys.argv:
    # A core install pulls in none of the extras...
    for package in ("streamlit", "plotly", "pyarrow", "openpyxl", "kmodes", "tqdm", "dask"):
        assert importlib.util.find_spec(package) is None, f"{package} came with the core install"
    # ...and each one that is missing is named with its extra.
    for module, extra in (("craft.plots", "plots"), ("craft.plots.stability", "plots"), ("craft.distributed", "dask")):
        try:
            __import__(module)
        except ImportError as error:
            assert f"craft-explorer[{extra}]" in str(error), str(error)
        else:
            raise AssertionError(f"{module} imported without its extra")
    cli = subprocess.run(
        [str(Path(sys.executable).parent / "craft"), "fit", "zoo", "--k", "7", "--progress"],
        capture_output=True, text=True, check=False,
    )
    assert cli.returncode == 1 and "craft-explorer[cli]" in cli.stderr, (cli.returncode, cli.stderr)
    cli = subprocess.run([str(Path(sys.executable).parent / "craft"), "app", "zoo"], capture_output=True, text=True, check=False)
    assert cli.returncode == 1 and "craft-explorer[app]" in cli.stderr, (cli.returncode, cli.stderr)
    cli = subprocess.run(
        [str(Path(sys.executable).parent / "craft"), "fit", "zoo", "--k", "7", "--n-init", "2"],
        capture_output=True, text=True, check=False,
    )
    assert cli.returncode == 0, cli.stderr
    print("core install: no extras, each missing one named (craft app too); craft fit zoo runs")
