"""Subspace recovery on the synthetic sets of the paper's Figures 1-3.

*Exact recovery* of a run: CRAFT finds as many clusters as were planted, and
after matching found to planted clusters (Hungarian assignment on the
contingency table of labels) every cluster's selected features are exactly
its planted subspace. The share of runs with exact recovery is reported;
each run draws a new dataset and a new fit seed (both = the run's seed).

* Fixed budget (Figures 1 and 2): m = 1/3, both the paper's protocol and the
  product's defaults, with k = 3.
* Approximate budget (Figure 3): the product's defaults with k = 3 and
  ``budget="approximate"`` over the paper's ranges: eps_c in [0.76, 1) (step
  0.01) with m = 0.2 .. 0.9 on the binary set; eps_v in [4, 6] (step 0.5)
  with m = 0.1 .. 0.9 on the numeric set, left unstandardized so that its
  global variance is 9 as in the paper. Values outside those ranges and the
  binary set with noisy subspaces (cells 1 with probability 0.9) show where
  recovery stops.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from craft import CRAFT
from craft.metrics import planted_agreement
from craft.synthetic import FIGURES

from .common import ROOT, md_table, produced_by, quick_or_full_main, quiet
from .figures import recovery_figure

FIXED = ("fig1_binary", "fig1_binary_modified", "fig2_numeric", "fig2_numeric_modified")
TITLES = {
    "fig1_binary": "Figure 1(a-b): binary, disjoint 8-feature subspaces",
    "fig1_binary_modified": "Figure 1(c-d): unequal sizes, fragments, a noisy feature, overlap",
    "fig2_numeric": "Figure 2(a-b): numeric, 12-feature subspaces, N(0, 9) noise",
    "fig2_numeric_modified": "Figure 2(c-d): non-contiguous, nested subspaces, extraneous features",
    "fig3_categorical": "Figure 3(a-b): binary, unequal subspaces, approximate budget",
    "fig3_numeric": "Figure 3(c-d): numeric, unequal subspaces, approximate budget",
}
PAPER_EPS_C = tuple(round(0.76 + 0.01 * i, 2) for i in range(24))  # 0.76 .. 0.99
PAPER_M_C = tuple(round(0.1 * i, 1) for i in range(2, 10))  # 0.2 .. 0.9
PAPER_EPS_V = (4.0, 4.5, 5.0, 5.5, 6.0)
PAPER_M_V = tuple(round(0.1 * i, 1) for i in range(1, 10))  # 0.1 .. 0.9
OUTSIDE_EPS_C = (0.5, 0.6, 0.65, 0.7, 0.75)
OUTSIDE_EPS_V = (1.0, 2.0, 3.0, 3.5, 6.5, 7.0, 8.0, 9.0)
NOISY_EPS_C = (0.3, 0.4, 0.5, 0.6, 0.7, 0.76, 0.9)


def one_run(name, seed, **options):
    X, y, truth = FIGURES[name](random_state=seed)
    model = CRAFT(k=truth.shape[0], random_state=seed, **options).fit(X)
    agreement = planted_agreement(y, truth, model.labels_, model.feature_mask_)
    aligned = agreement["aligned_mask"] if model.n_clusters_ == truth.shape[0] else None
    return agreement["exact"], agreement["ari"], aligned, (X, y, truth)


def share(name, seeds, **options):
    """(share of exact recoveries, share of exact partitions)."""
    results = [one_run(name, seed, **options) for seed in seeds]
    return float(np.mean([r[0] for r in results])), float(np.mean([r[1] == 1.0 for r in results]))


def approx_cell(name, seeds, **options):
    """Exact recoveries, and failures whose partition was already wrong (K or ARI < 0.9)."""
    results = [one_run(name, seed, **options) for seed in seeds]
    exact = float(np.mean([r[0] for r in results]))
    wrong_partition = float(np.mean([(not r[0]) and (r[2] is None or r[1] < 0.9) for r in results]))
    return exact, wrong_partition


#: rho as shares of m(1-m) near 0, where the shrunk selection should be global.
GLOBAL_RHO_SHARES = (1e-3, 1e-6)


def common_share(name, seeds, m, share):
    """Share of runs of the shrunk selection at rho = share m(1-m) whose clusters all select one set."""
    common = []
    for seed in seeds:
        X, _, truth = FIGURES[name](random_state=seed)
        model = CRAFT(k=truth.shape[0], m=m, rho=share * m * (1 - m), rho_selection="shrink", random_state=seed).fit(X)
        common.append(bool((model.feature_mask_ == model.feature_mask_[0]).all()))
    return float(np.mean(common))


def run(quick: bool = False, figures_dir: Path | None = None, seeds=None) -> dict:
    figures_dir = Path(figures_dir or ROOT / "docs" / "figures")
    n_fixed = 2 if quick else 20
    n_approx = 1 if quick else 5
    data: dict[str, Any] = {"fixed": {}, "approx_c": {}, "approx_v": {}, "noisy_c": {}, "outside_c": {}, "outside_v": {}, "figures": []}
    protocols: dict[str, dict[str, Any]] = {
        "paper protocol": dict(k_method="farthest_first", init="random", n_init=1),
        "defaults": {},
        "defaults, shrink": dict(rho_selection="shrink"),
    }
    with quiet():
        for name in FIXED:
            for protocol, options in protocols.items():
                exact, partition = share(name, range(n_fixed), m=1 / 3, **options)
                data["fixed"][f"{name}|{protocol}"] = {"exact": exact, "partition": partition, "runs": n_fixed}
            for share_near_0 in GLOBAL_RHO_SHARES:
                data.setdefault("common", {})[f"{name}|{share_near_0:g}"] = common_share(name, range(n_fixed), 1 / 3, share_near_0)
        print("  recovery: fixed budget done", flush=True)

        eps_c = (0.76, 0.9) if quick else PAPER_EPS_C
        m_c = (0.2, 0.5, 0.9) if quick else PAPER_M_C
        for m in m_c:
            for eps in eps_c:
                exact, wrong = approx_cell("fig3_categorical", range(n_approx), m=m, budget="approximate", eps_c=eps)
                data["approx_c"][f"{m}|{eps}"] = exact
                data.setdefault("approx_c_wrong_partition", {})[f"{m}|{eps}"] = wrong
                exact, _ = approx_cell("fig3_categorical", range(n_approx), m=m, budget="approximate", eps_c=eps, rho_selection="shrink")
                data.setdefault("approx_c_shrink", {})[f"{m}|{eps}"] = exact
        eps_v = (4.0, 6.0) if quick else PAPER_EPS_V
        m_v = (0.1, 0.5, 0.9) if quick else PAPER_M_V
        for m in m_v:
            for eps in eps_v:
                exact, wrong = approx_cell("fig3_numeric", range(n_approx), m=m, budget="approximate", eps_v=eps, standardize=False)
                data["approx_v"][f"{m}|{eps}"] = exact
                data.setdefault("approx_v_wrong_partition", {})[f"{m}|{eps}"] = wrong
                exact, _ = approx_cell(
                    "fig3_numeric", range(n_approx), m=m, budget="approximate", eps_v=eps, standardize=False, rho_selection="shrink"
                )
                data.setdefault("approx_v_shrink", {})[f"{m}|{eps}"] = exact
        if not quick:
            for eps in OUTSIDE_EPS_C:
                data["outside_c"][str(eps)] = float(np.mean([share("fig3_categorical", range(3), m=m, budget="approximate", eps_c=eps)[0] for m in PAPER_M_C]))
            for eps in OUTSIDE_EPS_V:
                data["outside_v"][str(eps)] = float(
                    np.mean([share("fig3_numeric", range(3), m=m, budget="approximate", eps_v=eps, standardize=False)[0] for m in PAPER_M_V])
                )
            for eps in NOISY_EPS_C:
                results = []
                for seed in range(n_approx):
                    X, y, truth = FIGURES["fig3_categorical"](random_state=seed, noise_inside=0.1)
                    model = CRAFT(k=3, m=0.5, budget="approximate", eps_c=eps, random_state=seed).fit(X)
                    agreement = planted_agreement(y, truth, model.labels_, model.feature_mask_)
                    results.append((agreement["exact"], agreement["ari"]))
                data["noisy_c"][str(eps)] = {"exact": float(np.mean([r[0] for r in results])), "ari": float(np.mean([r[1] for r in results]))}
        print("  recovery: approximate budget done", flush=True)

        figure_options = {
            "fig3_categorical": dict(m=0.5, budget="approximate", eps_c=0.9),
            "fig3_numeric": dict(m=0.5, budget="approximate", eps_v=5.0, standardize=False),
        }
        for name in (*FIXED, "fig3_categorical", "fig3_numeric"):
            options = figure_options.get(name, dict(m=1 / 3))
            exact, _, aligned, (X, y, truth) = one_run(name, 0, **options)
            values = np.column_stack([np.asarray(X[c].astype(float)) for c in X.columns])
            described = ", ".join(f"{key}={value:.3g}" if isinstance(value, float) else f"{key}={value}" for key, value in options.items())
            caption = (
                f"CRAFT({described}, k={truth.shape[0]}, random_state=0) on the dataset drawn with seed 0; "
                f"{'exact recovery' if exact else 'not exact'}. Regenerate: python -m benchmarks.run_all --only recovery"
            )
            path = recovery_figure(figures_dir / f"recovery_{name}.svg", TITLES[name], values, y, truth, aligned, caption)
            data["figures"].append(str(path))
    data["markdown"] = markdown(data, quick, figures_dir)
    return data


def _pct(value):
    return f"{100 * value:.0f} %"


def markdown(data, quick, figures_dir: Path) -> str:
    lines = [
        "A run recovers exactly when it finds the planted number of clusters and, after matching clusters, "
        "selects exactly each planted subspace. Every run draws a fresh dataset and fit seed. "
        "Figure 2's third cluster is shifted to 12 features (`fig2_numeric`'s default; the paper's 13 "
        "cannot be recovered by a budget of 12).",
        "",
        "**Fixed budget, m = 1/3** (share of runs with exact recovery; in parentheses, share with the exact partition)",
        "",
    ]
    rows = []
    for name in FIXED:
        cells = [TITLES[name].split(":")[0]]
        for protocol in ("paper protocol", "defaults", "defaults, shrink"):
            v = data["fixed"][f"{name}|{protocol}"]
            cells.append(f"{_pct(v['exact'])} ({_pct(v['partition'])}) of {v['runs']}")
        cells += [_pct(data["common"][f"{name}|{share_near_0:g}"]) for share_near_0 in GLOBAL_RHO_SHARES]
        rows.append(cells)
    header = [
        "Dataset",
        "CRAFT, paper protocol",
        "CRAFT, defaults (ρ_selection = paper)",
        "CRAFT, defaults, ρ_selection = shrink",
        *[f"shrink at ρ = {share_near_0:g}·m(1−m): one common set" for share_near_0 in GLOBAL_RHO_SHARES],
    ]
    lines += [
        md_table(header, rows),
        "",
        "Both ρ modes at the paper's default ρ = m(1−m) − 0.01: `paper` is Algorithm CRAFT's selection, where ρ does "
        "not enter the ranking; `shrink` ranks each cluster's scores shrunk towards the scores pooled over clusters "
        "with weight ρ/(m(1−m)) = 0.955 on the cluster's own (docs/numerics.md). The last columns are the shares of "
        "runs in which, with `shrink` near ρ = 0, every cluster selects the same features (global selection); where "
        "it does not at 0.001, the pooled scores of several features tie (Figure 1(a): every planted feature is "
        "informative in exactly one of three equal clusters) and the clusters' own scores still break the tie.",
        "",
    ]

    def grid(values, title, eps_name, wrong=None):
        keys = [tuple(map(float, key.split("|"))) for key in values]
        ms = sorted({m for m, _ in keys})
        epss = sorted({e for _, e in keys})
        cells = [[f"{m:g}"] + [_pct(values[f"{m}|{e}"]) for e in epss] for m in ms]
        overall = float(np.mean(list(values.values())))
        detail = ""
        if wrong:
            failed = 1.0 - overall
            partition = float(np.mean(list(wrong.values())))
            if failed > 0:
                detail = (
                    f"; of the {_pct(failed)} of runs that fail, {_pct(partition / failed)} already had a wrong partition "
                    "(another K, or ARI < 0.9): a clustering failure, not a failure of the ε rule"
                )
        return [
            f"**{title}** — exact recovery over the whole grid: {_pct(overall)}{detail}",
            "",
            md_table(["m \\ " + eps_name, *[f"{e:g}" for e in epss]], cells),
            "",
        ]

    runs = 1 if quick else 5
    lines += grid(data["approx_c"], f"Approximate budget, binary set (Figure 3a), {runs} run(s) per cell", "ε_c", data.get("approx_c_wrong_partition"))
    lines += grid(
        data["approx_v"], f"Approximate budget, numeric set (Figure 3c, global variance 9), {runs} run(s) per cell", "ε_v", data.get("approx_v_wrong_partition")
    )
    if "approx_c_shrink" in data:
        lines += [
            "**Approximate budget with ρ_selection = shrink** (same grids, paper's default ρ): exact recovery over the "
            f"whole grid {_pct(float(np.mean(list(data['approx_c_shrink'].values()))))} on the binary set and "
            f"{_pct(float(np.mean(list(data['approx_v_shrink'].values()))))} on the numeric set (paper's selection: "
            f"{_pct(float(np.mean(list(data['approx_c'].values()))))} and {_pct(float(np.mean(list(data['approx_v'].values()))))}).",
            "",
        ]
    if data["outside_c"]:
        lines += [
            "**Outside the paper's ranges** (exact recovery, 3 runs for each m of the paper's grid): "
            + "; ".join(f"ε_c = {e}: {_pct(v)}" for e, v in data["outside_c"].items())
            + "; "
            + "; ".join(f"ε_v = {e}: {_pct(v)}" for e, v in data["outside_v"].items())
            + ".",
            "",
            "**Noisy subspaces** (binary set with subspace cells 1 with probability 0.9, m = 0.5, 5 runs): "
            + "; ".join(f"ε_c = {e}: {_pct(v['exact'])} exact (ARI {v['ari']:.2f})" for e, v in data["noisy_c"].items())
            + ". With noise inside the subspaces a true feature's gain ratio (G_d − G_kd)/G_d falls to about "
            "the level of background features, so no ε_c separates them: the paper's claim "
            "holds for deterministic subspaces.",
            "",
        ]
    lines.append("Figures (dataset heatmap beside the planted and the recovered masks, seed 0):")
    lines.append("")
    for path in data["figures"]:
        name = Path(path).name
        try:
            shown = Path(path).resolve().relative_to((ROOT / "docs").resolve())
        except ValueError:
            shown = Path(path)
        lines.append(f"- [{name}]({shown.as_posix()})")
    if not quick:
        lines.append("")
        lines += [f"![{Path(p).stem}]({Path(p).resolve().relative_to((ROOT / 'docs').resolve()).as_posix()})" for p in data["figures"] if _under_docs(p)]
    return "\n".join(lines)


def _under_docs(path) -> bool:
    try:
        Path(path).resolve().relative_to((ROOT / "docs").resolve())
        return True
    except ValueError:
        return False


def _options(parser) -> None:
    parser.add_argument("--figures", type=Path, help="folder for the recovery figures")


def main(argv=None) -> int:
    from .run_all import SECTIONS

    return quick_or_full_main(argv, name="recovery", title=SECTIONS["recovery"], description=__doc__.splitlines()[0],
                              quick_help="fewer seeds (run_all --quick's section)", options=_options,
                              run=lambda quick, figures: run(quick, figures),
                              markdown=lambda data, info: data["markdown"] + "\n\n" + produced_by("recovery", info))


if __name__ == "__main__":
    raise SystemExit(main())
