#!/usr/bin/python3
"""Figures of the cyclic punch (cases A, B, C) from bipo's CSV results.

Usage: scripts/punch_figures.py RESULTS_DIR

RESULTS_DIR must hold the folders punch_A, punch_B and punch_C written by
`bipo run cases/punch_<X>.yaml` (each with cycles.csv, probes/P.csv and
maps/). Writes PNG files into RESULTS_DIR/figures and an index,
RESULTS_DIR/index.html (and the same list as RESULTS_DIR/README.md), with a
one-line caption per figure. Needs Debian's python3-numpy and
python3-matplotlib (run with the system python3). No VTK reader is needed: the
maps of the contact face come from maps/step_NNNNNN.csv.
"""

import csv
import html
import pathlib
import sys

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.tri as mtri
except ImportError as error:
    sys.exit(f"punch_figures: {error}: install Debian's python3-numpy and python3-matplotlib "
             "and run this script with the system python3 (/usr/bin/python3)")

CASES = {
    "A": "A: isotropic (mu = p = 0.2)",
    "B": "B: anisotropic, associated (mu = 0.30/0.15, p = mu)",
    "C": "C: anisotropic, non-associated (mu = 0.30/0.15, p = 0.05/0.20)",
}
MAP_CYCLES = (1, 3, 4, 6)  # end of the unloading of these cycles (the paper's Fig. 3)
COLOURS = {"A": "tab:blue", "B": "tab:orange", "C": "tab:green"}
STATE_OPEN, STATE_STICK, STATE_SLIP = 0, 1, 2


def fail(message):
    sys.exit(f"punch_figures: {message}")


def read_table(path):
    """A CSV of numbers as a dict of numpy arrays (text columns kept as strings)."""
    if not path.exists():
        fail(f"missing {path} (run the case first: bipo run cases/<case>.yaml)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail(f"{path} has no rows")
    table = {}
    for key in rows[0]:
        values = [r[key] for r in rows]
        try:
            table[key] = np.array([float(v) for v in values])
        except ValueError:
            table[key] = np.array(values)
    return table


class CaseResults:
    def __init__(self, folder, name):
        self.name = name
        self.folder = folder
        if not folder.is_dir():
            fail(f"missing results folder {folder} (expected {folder.name}/ from "
                 f"`bipo run cases/{folder.name}.yaml`)")
        for required in ("cycles.csv", "history.csv", "probes/P.csv", "maps/index.csv"):
            if not (folder / required).exists():
                partial = folder / (required + ".partial")
                why = " (only a .partial file: the run stopped early)" if partial.exists() else ""
                fail(f"missing {folder / required}{why}")
        self.cycles = read_table(folder / "cycles.csv")
        self.history = read_table(folder / "history.csv")
        self.p = read_table(folder / "probes" / "P.csv")
        self.map_index = read_table(folder / "maps" / "index.csv")

    def unloading_map(self, cycle):
        idx = self.map_index
        hits = [i for i in range(len(idx["step"]))
                if int(idx["cycle"][i]) == cycle and idx["segment"][i] == "unloading"]
        if not hits:
            return None
        return read_table(self.folder / "maps" / str(idx["file"][hits[-1]]))


def figure_f_maps(case, out):
    maps = {c: case.unloading_map(c) for c in MAP_CYCLES}
    present = {c: m for c, m in maps.items() if m is not None}
    if not present:
        fail(f"{case.folder}: no map at the end of an unloading")
    fmin = min(float(m["f"].min()) for m in present.values())
    fig, axes = plt.subplots(1, len(MAP_CYCLES), figsize=(16, 4.6), constrained_layout=True)
    mappable = None
    for ax, c in zip(axes, MAP_CYCLES):
        ax.set_aspect("equal")
        ax.set_xticks([-10, 0, 10])
        ax.set_yticks([-10, 0, 10])
        m = maps[c]
        if m is None:
            ax.set_title(f"cycle {c}: not computed")
            ax.set_axis_off()
            continue
        x, y, f, state = m["x"], m["y"], m["f"], m["state"].astype(int)
        tri = mtri.Triangulation(x, y)
        mappable = ax.tripcolor(tri, f, shading="gouraud", cmap="viridis", vmin=fmin, vmax=0.0)
        ax.tricontour(tri, f, levels=[0.02 * fmin], colors="white", linewidths=0.8)
        slip = state == STATE_SLIP
        ax.plot(x[slip], y[slip], "o", ms=2.6, mfc="red", mec="none", label="slip (f = 0)")
        open_ = state == STATE_OPEN
        if open_.any():
            ax.plot(x[open_], y[open_], "s", ms=3.5, mfc="0.6", mec="0.3", label="open")
        n = np.bincount(state, minlength=3)
        ax.set_title(f"end of unloading, cycle {c}\nstick {n[STATE_STICK]}, slip {n[STATE_SLIP]}, "
                     f"open {n[STATE_OPEN]} nodes", fontsize=10)
        ax.set_xlabel("x [mm]")
    axes[0].set_ylabel("y [mm]  (t1 = x, t2 = y)")
    axes[0].legend(loc="lower left", fontsize=8, framealpha=0.8)
    if mappable is not None:
        bar = fig.colorbar(mappable, ax=axes, shrink=0.85, pad=0.01)
        bar.set_label("f = |r_t|_mu - r_n  [N]  (< 0 stick; 0 slip)")
    fig.suptitle(f"Case {CASES[case.name]}: f on the contact face (white line: f = 2 % of min f; "
                 "red dots: slipping nodes; grey squares: open)", fontsize=11)
    path = out / f"punch_{case.name}_f_maps.png"
    fig.savefig(path, dpi=68)
    plt.close(fig)
    return path, (f"Case {case.name}: map of f on the contact face at the end of the unloadings "
                  f"after cycles 1, 3, 4 and 6 (stick f < 0 coloured, slip nodes red, open grey; "
                  f"one colour scale).")


def shade_unloadings(ax, case):
    """Light grey bands over the unloading increments."""
    step, factor = case.history["step"], case.history["load_factor"]
    prev = np.concatenate([[0.0], factor[:-1]])
    unloading = factor < prev
    start = None
    for s, u in zip(step, unloading):
        if u and start is None:
            start = s - 1
        if not u and start is not None:
            ax.axvspan(start, s - 1, color="0.92", lw=0)
            start = None
    if start is not None:
        ax.axvspan(start, step[-1], color="0.92", lw=0)


def figure_p(case, out):
    p = case.p
    fig, axes = plt.subplots(2, 2, figsize=(12, 9), constrained_layout=True)
    # Trajectory: in-plane displacement of P, coloured by cycle.
    ax = axes[0, 0]
    ux, uy = 1e3 * p["ux"], 1e3 * p["uy"]
    ux0, uy0 = np.concatenate([[0.0], ux]), np.concatenate([[0.0], uy])
    ax.plot(ux0, uy0, "-", color="0.6", lw=0.8)
    sc = ax.scatter(ux, uy, c=p["cycle"], cmap="plasma", s=14, zorder=3)
    fig.colorbar(sc, ax=ax, label="cycle")
    ax.set_xlabel("u_x of P [µm]")
    ax.set_ylabel("u_y of P [µm]")
    ax.set_title("trajectory of P in the plane (start at 0)")
    ax.set_aspect("equal", adjustable="datalim")
    later = p["cycle"] >= 1
    if later.any():
        inset = ax.inset_axes([0.08, 0.5, 0.42, 0.45])
        first = np.nonzero(later)[0][0]
        iu, iv = ux[first - 1:], uy[first - 1:]
        inset.plot(iu, iv, "-", color="0.6", lw=0.8)
        inset.scatter(iu[1:], iv[1:], c=p["cycle"][first:], cmap="plasma", s=10, zorder=3,
                      vmin=0, vmax=max(p["cycle"].max(), 1))
        inset.set_title("cycles 1-6 (zoom)", fontsize=8)
        inset.tick_params(labelsize=7)
    # Friction forces over the history.
    ax = axes[0, 1]
    shade_unloadings(ax, case)
    ax.plot(p["step"], p["friction_force_t1"], "-o", ms=2.5, label="r_t1 (along x)")
    ax.plot(p["step"], p["friction_force_t2"], "-o", ms=2.5, label="r_t2 (along y)")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("increment (grey: unloading)")
    ax.set_ylabel("friction force at P [N]")
    ax.set_title("friction forces at P")
    ax.legend(fontsize=9)
    # Slip of P over the history.
    ax = axes[1, 0]
    shade_unloadings(ax, case)
    ax.plot(p["step"], 1e3 * p["radial_slip"], "-o", ms=2.5, label="radial (accumulated)")
    ax.plot(p["step"], 1e3 * p["accumulated_slip_length"], "--", label="path length")
    slipping = p["state"] == STATE_SLIP
    ax.plot(p["step"][~slipping], 1e3 * p["radial_slip"][~slipping], "s", mfc="none", mec="k",
            ms=5, label="P sticks")
    ax.set_xlabel("increment (grey: unloading)")
    ax.set_ylabel("slip of P [µm]")
    ax.set_title("slip of P")
    ax.legend(fontsize=9)
    # Applied force vs slip of P, cycles 1.. (the first loading is the straight
    # line from the origin and would hide the loops).
    ax = axes[1, 1]
    s = 1e3 * p["radial_slip"]
    force = 1e-3 * p["applied_force"]
    cyc = p["cycle"]
    cmap = plt.get_cmap("tab10")
    for k in range(1, int(cyc.max()) + 1):
        idx = np.nonzero(cyc == k)[0]
        idx = np.concatenate([[idx[0] - 1], idx])
        ax.plot(s[idx], force[idx], "-o", ms=2.5, color=cmap(k - 1), label=f"cycle {k}")
    ax.set_title("applied force vs slip of P, cycles 1-6 (hysteresis)")
    ax.set_xlabel("radial slip of P [µm]")
    ax.set_ylabel("applied force (top reaction) [kN]")
    ax.legend(fontsize=8, ncol=2)
    fig.suptitle(f"Case {CASES[case.name]}: contact point P (probe 'P')", fontsize=12)
    path = out / f"punch_{case.name}_P.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path, (f"Case {case.name}: point P: in-plane trajectory, friction forces, slip over the "
                  f"history (grey bands: unloadings) and applied force vs radial slip (hysteresis).")


def figure_dissipation(cases, out):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), constrained_layout=True)
    width = 0.27
    for j, case in enumerate(cases):
        c = case.cycles["cycle"]
        d = case.cycles["dissipation"]
        axes[0].bar(c + (j - 1) * width, d, width, color=COLOURS[case.name], label=CASES[case.name])
        axes[1].plot(c[1:], d[1:], "-o", color=COLOURS[case.name], label=f"case {case.name}")
    axes[0].set_xlabel("cycle (0: first loading)")
    axes[0].set_ylabel("frictional dissipation of the cycle [N mm]")
    axes[0].set_title("dissipation per cycle")
    axes[0].legend(fontsize=8)
    axes[1].set_xlabel("cycle")
    axes[1].set_ylabel("[N mm]")
    axes[1].set_title("cycles 1 to 6 (unloading + reloading)")
    axes[1].set_ylim(bottom=0)
    axes[1].legend(fontsize=9)
    path = out / "punch_dissipation.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path, "Dissipation per cycle for A, B and C (left: every cycle; right: cycles 1-6)."


def figure_hysteresis(cases, out):
    fig, axes = plt.subplots(1, len(cases), figsize=(15, 4.5), constrained_layout=True)
    for ax, case in zip(np.atleast_1d(axes), cases):
        p = case.p
        s = 1e3 * np.concatenate([[0.0], p["radial_slip"]])
        force = 1e-3 * np.concatenate([[0.0], p["applied_force"]])
        ax.plot(s, force, "-", color=COLOURS[case.name], lw=1)
        ax.plot(s, force, "o", color=COLOURS[case.name], ms=2)
        ax.set_title(f"case {case.name}")
        ax.set_xlabel("radial slip of P [µm]")
    np.atleast_1d(axes)[0].set_ylabel("applied force [kN]")
    fig.suptitle("Applied force vs radial slip of P, whole history", fontsize=12)
    path = out / "punch_hysteresis_ABC.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path, "Applied force vs radial slip of P for A, B and C side by side (whole history)."


def write_index(results, entries):
    rows = []
    md = ["# Cyclic punch: figures", "",
          "Made by `scripts/punch_figures.py` from the CSV results in this folder.", ""]
    for path, caption in entries:
        rel = path.relative_to(results).as_posix()
        rows.append(f'<figure><img src="{html.escape(rel)}" style="max-width:100%">'
                    f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        md += [f"![{caption}]({rel})", "", caption, ""]
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bipo: cyclic punch</title>"
            "<style>body{font-family:sans-serif;max-width:1400px;margin:auto}"
            "figure{margin:2em 0}figcaption{font-size:1.05em}</style></head><body>\n"
            "<h1>Cyclic punch, cases A, B and C</h1>\n" + "\n".join(rows) + "\n</body></html>\n")
    (results / "index.html").write_text(page)
    (results / "README.md").write_text("\n".join(md))


def main(argv):
    if len(argv) != 2:
        fail("usage: punch_figures.py RESULTS_DIR (the folder holding punch_A, punch_B, punch_C)")
    results = pathlib.Path(argv[1])
    if not results.is_dir():
        fail(f"results folder {results} does not exist")
    cases = [CaseResults(results / f"punch_{name}", name) for name in CASES]
    out = results / "figures"
    out.mkdir(exist_ok=True)
    entries = []
    for case in cases:
        entries.append(figure_f_maps(case, out))
        entries.append(figure_p(case, out))
    entries.append(figure_dissipation(cases, out))
    entries.append(figure_hysteresis(cases, out))
    write_index(results, entries)
    print(f"punch_figures: {len(entries)} figures in {out}; index: {results / 'index.html'}")


if __name__ == "__main__":
    main(sys.argv)
