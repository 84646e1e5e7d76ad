#!/usr/bin/python3
"""Figures of a fretting run from bipo's CSV results (docs/outputs.md, "Cycles
and the fretting loop").

Usage: scripts/plot_fretting.py RESULTS_DIR [--maps ends|all]

Writes into RESULTS_DIR/figures:

- fretting_loops.png: the fretting loop of every cycle, the force of the
  driver of `cycles.program` on the body against its displacement
  (history.csv's loop_force and loop_displacement), one colour per cycle,
  each loop from the end of the step before the cycle, as bipo integrates it;
- fretting_map_step_NNNNNN.png for the maps written at the extremes of the
  motion (maps/index.csv's `extreme` is max or min): the stick/slip/open state
  and the slip amplitude of the cycle so far, on the contact face projected
  on its plane (its two principal directions). By default the extremes of
  the first and the last cycle only (`--maps all`: every extreme);
- numbers.json: each cycle's loop area recomputed from history.csv (the
  shoelace formula over the loop closed back to its start), with
  cycles.csv's loop_area, dissipation and regime beside it.

Needs Debian's python3-numpy and python3-matplotlib (run with the system
python3). Reads CSV files only.
"""

import argparse
import csv
import json
import pathlib
import sys

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as error:
    sys.exit(f"plot_fretting: {error}: install Debian's python3-numpy and python3-matplotlib "
             "and run this script with the system python3 (/usr/bin/python3)")

STATES = {0: ("open", "#bbbbbb"), 1: ("stick", "#1f77b4"), 2: ("slip", "#d62728")}


def read_csv(path):
    """A CSV file as a dict of columns (floats where every cell is a number)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        sys.exit(f"plot_fretting: {path}: empty file")
    columns = {}
    for j, name in enumerate(rows[0]):
        cells = [row[j] if j < len(row) else "" for row in rows[1:]]
        try:
            columns[name] = np.array([float(c) for c in cells])
        except ValueError:
            columns[name] = cells
    return columns


def cycle_loops(history):
    """cycle -> (x, y) of its loop, starting where the step before it ended."""
    x, y, cycle = history["loop_displacement"], history["loop_force"], history["cycle"]
    loops = {}
    for k in np.unique(cycle).astype(int):
        rows = np.flatnonzero(cycle == k)
        before = rows[0] - 1
        x0, y0 = (x[before], y[before]) if before >= 0 else (0.0, 0.0)
        loops[k] = (np.concatenate(([x0], x[rows])), np.concatenate(([y0], y[rows])))
    return loops


def shoelace(x, y):
    """Area enclosed by the polygon (x, y) closed back to its start."""
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def plot_loops(loops, out):
    fig, ax = plt.subplots(figsize=(6, 4.5))
    colours = plt.cm.viridis(np.linspace(0, 1, max(len(loops), 2)))
    for (k, (x, y)), colour in zip(sorted(loops.items()), colours):
        ax.plot(x, y, color=colour, lw=1, label=f"cycle {k}" if len(loops) <= 10 else None)
    ax.set_xlabel("driver displacement along its direction [length]")
    ax.set_ylabel("driver force on the body [force]")
    ax.set_title("Fretting loops")
    if len(loops) <= 10:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    ax.ticklabel_format(style="sci", scilimits=(-3, 3))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def face_axes(points):
    """Two in-plane axes of the contact face and their labels: the two global
    axes of a face flat across the third (a square face's principal axes are
    arbitrary), else the face's principal directions."""
    extent = np.ptp(points, axis=0)
    flat = int(np.argmin(extent))
    if extent[flat] <= 1e-9 * max(extent.max(), 1e-300):
        a, b = [k for k in range(3) if k != flat]
        return points[:, a], points[:, b], "xyz"[a], "xyz"[b]
    centred = points - points.mean(axis=0)
    axes = np.linalg.svd(centred, full_matrices=False)[2][:2]
    return centred @ axes[0], centred @ axes[1], "face axis 1", "face axis 2"


def plot_map(data, title, out):
    """State and slip amplitude of one map, on the face's plane, zoomed on
    the nodes in contact (the open ones around them in grey)."""
    points = np.column_stack([data["x"], data["y"], data["z"]])
    a, b, a_label, b_label = face_axes(points)
    touching = data["state"] != 0
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
    for code, (name, colour) in STATES.items():
        mask = data["state"] == code
        left.scatter(a[mask], b[mask], s=14, color=colour, label=f"{name} ({mask.sum()})")
    left.legend(fontsize="small")
    left.set_title("state")
    right.scatter(a[~touching], b[~touching], s=14, color=STATES[0][1])
    sc = right.scatter(a[touching], b[touching], s=14, c=data["slip_amplitude_cycle"][touching],
                       cmap="magma")
    fig.colorbar(sc, ax=right, label="slip amplitude of the cycle so far [length]")
    right.set_title("slip amplitude (nodes in contact)")
    for ax in (left, right):
        ax.set_aspect("equal")
        ax.set_xlabel(f"{a_label} [length]")
        ax.set_ylabel(f"{b_label} [length]")
        if touching.any() and not touching.all():
            # The contact zone and a margin of half its size.
            lo = np.array([a[touching].min(), b[touching].min()])
            hi = np.array([a[touching].max(), b[touching].max()])
            margin = 0.5 * (hi - lo).max() + 1e-12
            ax.set_xlim(lo[0] - margin, hi[0] + margin)
            ax.set_ylim(lo[1] - margin, hi[1] + margin)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def extreme_maps(results, which):
    index = read_csv(results / "maps" / "index.csv")
    if "extreme" not in index:
        return []
    rows = [j for j, e in enumerate(index["extreme"]) if e in ("max", "min")]
    if which == "ends" and rows:
        cycles = index["cycle"][rows]
        rows = [j for j in rows if index["cycle"][j] in (cycles.min(), cycles.max())]
    return [(int(index["step"][j]), int(index["cycle"][j]), index["extreme"][j],
             index["file"][j]) for j in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=pathlib.Path)
    parser.add_argument("--maps", choices=("ends", "all"), default="ends")
    args = parser.parse_args()
    results = args.results
    for needed in ("history.csv", "cycles.csv", "maps/index.csv"):
        if not (results / needed).is_file():
            sys.exit(f"plot_fretting: {results / needed}: missing (is {results} a bipo "
                     "results folder of a run with contact?)")
    history = read_csv(results / "history.csv")
    if "loop_force" not in history:
        sys.exit(f"plot_fretting: {results / 'history.csv'}: no loop_force column "
                 "(written by a bipo without fretting outputs)")
    cycles = read_csv(results / "cycles.csv")
    figures = results / "figures"
    figures.mkdir(exist_ok=True)
    loops = cycle_loops(history)
    plot_loops(loops, figures / "fretting_loops.png")
    for step, cycle, extreme, name in extreme_maps(results, args.maps):
        data = read_csv(results / "maps" / name)
        plot_map(data, f"step {step}, cycle {cycle}, extreme {extreme} of the motion",
                 figures / f"fretting_map_step_{step:06d}.png")
    numbers = []
    for j, k in enumerate(cycles["cycle"].astype(int)):
        x, y = loops[k]
        numbers.append({"cycle": int(k), "loop_area_from_history": shoelace(x, y),
                        "loop_area": float(cycles["loop_area"][j]),
                        "dissipation": float(cycles["dissipation"][j]),
                        "regime": int(cycles["regime"][j])})
    (figures / "numbers.json").write_text(json.dumps({"cycles": numbers}, indent=2) + "\n")
    print(f"plot_fretting: {len(list(figures.glob('fretting_*.png')))} figures in {figures}")


if __name__ == "__main__":
    main()
