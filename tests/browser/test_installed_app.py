"""The app as a user installs it: the built wheel with its ``[app]`` extra in a virtual environment outside
the repository, started with ``craft app FILE --no-browser --port P`` and driven in Chromium to a drawn
mask heatmap.

The environment holds the dependencies of ``craft-explorer[app]`` and the wheel, nothing of this tree. It
is kept between runs under ``$XDG_CACHE_HOME/craft-explorer-tests/`` (``~/.cache`` by default), named by
the Python version and the wheel's requirements, because installing Streamlit, pyarrow, numba and the
rest takes minutes; the wheel itself is built from the tree at every run and reinstalled (without its
dependencies) whenever its files differ from the last one installed there. Its first creation needs the
package index pip is configured with, as any ``pip install`` does.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from benchmarks.app_server import ServerProcess, free_port
from test_flows import assert_clean, go_to, mask_figure, open_app

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
#: Seconds the installed program may take to answer: a fresh install compiles CRAFT's kernels first.
START_TIMEOUT = 240


def _cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "craft-explorer-tests"


def _outside_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would import from this tree (PYTHONPATH holds its root in the
    suite, and the wheel's build leaves craft_explorer.egg-info there, which pip would take as installed)."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def _run(command: list, **kwargs) -> None:
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True, check=False,
                          env=_outside_env(), **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def _build_wheel(out: Path) -> Path:
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", out, ROOT], timeout=600)
    (wheel,) = out.glob("craft_explorer-*.whl")
    return wheel


def _wheel_files(wheel: Path) -> tuple[str, str]:
    """The wheel's requirements (METADATA) and the digest of its files (RECORD), without build timestamps."""
    with zipfile.ZipFile(wheel) as archive:
        info = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        requires = "\n".join(line for line in archive.read(info).decode().splitlines() if line.startswith(("Requires-Dist", "Requires-Python")))
        record = archive.read(info.replace("METADATA", "RECORD"))
    return requires, hashlib.sha256(record).hexdigest()


def _installed_venv(wheel: Path) -> Path:
    """A virtual environment with ``wheel[app]`` installed: its dependencies kept between runs, the wheel fresh."""
    requires, files = _wheel_files(wheel)
    key = hashlib.sha256(f"{sys.version}\n{requires}".encode()).hexdigest()[:16]
    cache = _cache()
    cache.mkdir(parents=True, exist_ok=True)
    venv = cache / f"app-venv-{key}"
    python = venv / "bin" / "python"
    with open(cache / "app-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one run at a time sets up or updates the environment
        complete = venv / "craft-test-dependencies"
        if not complete.exists():
            _run([sys.executable, "-m", "venv", "--clear", venv], timeout=300)
            _run([python, "-m", "pip", "install", "--quiet", f"{wheel}[app]"], timeout=1200)
            complete.write_text(requires)
            (venv / "craft-test-wheel").write_text(files)
        marker = venv / "craft-test-wheel"
        if not marker.exists() or marker.read_text() != files:
            _run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", wheel], timeout=600)
            marker.write_text(files)
    return venv


@pytest.fixture(scope="module")
def installed(browser, tmp_path_factory):
    """``(venv, outside)``: the environment with the wheel, and a folder outside the repository to run in."""
    wheels = tmp_path_factory.mktemp("wheel")
    return _installed_venv(_build_wheel(wheels)), tmp_path_factory.mktemp("outside")


class _Program(ServerProcess):
    """``craft app ARGS`` of the installed environment, run from a folder outside the repository."""

    def __init__(self, venv: Path, cwd: Path, args: list[str], port: int):
        home = cwd / "home"
        home.mkdir(exist_ok=True)
        # The program must import craft and the app from the environment, not from this tree.
        env = _outside_env(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONUNBUFFERED="1")
        super().__init__([str(venv / "bin" / "craft"), "app", *args, "--port", str(port), "--no-browser"], port=port,
                         cwd=cwd, env=env, log_path=cwd / f"craft-app-{port}.log", start_timeout_s=START_TIMEOUT)

    def log(self, tail: int = 10**9) -> str:
        return super().log(tail)


def test_the_installed_craft_app_opens_a_file_and_draws_the_mask_heatmap(installed, page_on):
    venv, outside = installed
    site = next((venv / "lib").glob("python3*/site-packages"))
    # The installed app is this tree's code, file for file, in its own folder (no top-level `pages` or `app`).
    for name in ("app.py", ".streamlit/config.toml", "explorer/serve.py", *(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py"))):
        assert (site / "craft_app" / name).read_bytes() == (ROOT / name).read_bytes(), name
    assert not (site / "app.py").exists() and not (site / "pages").exists()

    from craft import datasets

    X, y = datasets.load("zoo")
    table = X.assign(kind=y)
    table.to_csv(outside / "animals.csv", index=False)
    port = free_port()
    program = _Program(venv, outside, ["animals.csv"], port)
    try:
        program.start()
        assert f"http://localhost:{port}" in program.log().splitlines()[0], program.log()
        page = page_on(program)
        open_app(page)
        assert_clean(page)
        sidebar = page.locator("[data-testid='stSidebar']").inner_text()
        assert "Your file animals.csv" in sidebar, sidebar
        # The server settings beside app.py apply from any working folder: toolbarMode "viewer" hides the
        # Deploy button that Streamlit shows by default on localhost.
        assert page.locator("[data-testid='stAppDeployButton']").count() == 0
        go_to(page, "Tune & see")
        figure = mask_figure(page)
        assert set(figure["x"]) <= set(table.columns) and len(figure["x"]) >= 10, figure["x"]
        assert len(figure["y"]) >= 2 and all(sum(row) >= 1 for row in figure["z"]), figure
        assert_clean(page)
        assert "Traceback" not in program.log(), program.log()[-6000:]
    finally:
        program.stop()
