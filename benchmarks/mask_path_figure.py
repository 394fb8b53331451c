"""The README's mask path picture: Zoo, k = 4, m from 0.1 to 0.9, drawn at 1280 px wide.

``python -m benchmarks.mask_path_figure`` writes ``docs/screenshots/mask_path.png``
(:func:`craft.path.fit_path` and :func:`craft.plots.fig_mask_path`, as
the app's "Mask path" tab draws them; kaleido renders the PNG) and prints the
path's tracks and events.
"""

from __future__ import annotations

import argparse
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "docs" / "screenshots" / "mask_path.png"
#: The README's picture: the width of a 1280 x 720 window.
WIDTH = 1280


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from craft import CRAFT, datasets
    from craft.path import fit_path
    from craft.plots import fig_mask_path

    X, _ = datasets.load("zoo")
    values = [round(0.1 * i, 1) for i in range(1, 10)]
    _, path = fit_path(CRAFT(k=4, random_state=0), X, "m", values)
    fig_mask_path(path).write_image(args.out, width=WIDTH, scale=1)
    print(f"{args.out}: {path.n_tracks} tracks over m = {values}")
    for event in path.events:
        print(f"  {event}")


if __name__ == "__main__":
    main()
