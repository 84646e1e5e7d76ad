#!/usr/bin/python3
"""Figures of a wear run from bipo's CSV results (docs/wear.md, docs/outputs.md
"wear/").

Usage: scripts/plot_wear.py RESULTS_DIR [--along x|y] [--profiles N]
                            [--radius R --young E --poisson NU]

Writes into RESULTS_DIR/figures:

- wear_scar.png: the worn depth along the line of contact nodes through the
  deepest node (along x by default), from wear/cycle_NNNN.csv at N (default
  6) simulated cycles spread over the run, each labelled with the cycles it
  represents (cycles.csv's represented_cycles);
- wear_pressure.png: the contact pressure along the same line at the end of
  the pressing (the last map of cycle 0, when there is one), at the end of
  the first and of the last simulated cycle (the pressure of the cycle's
  last step, before that cycle's wear is applied), with the Hertz line
  contact p(x) = p0 sqrt(1 - x^2 / b^2) of the same load overlaid on the
  first (and, dashed, the last) when the indenter is a cylinder;
- numbers.json: per simulated cycle the represented cycles, the largest
  depth, the peak pressure, the contact's extent along the line (the nodes
  with a pressure), the normal load per unit length, and the Hertz b and p0
  of that load.

The Hertz overlay is for a plane-strain model: a slab along the cylinder's
axis whose contact nodes all carry the line load, P' = the indenter's
force along the pressing direction / the slab's thickness (the extent of
the contact nodes along the axis). R, E and nu are read from the case file
named by summary.json (its --set values are not replayed: pass --radius,
--young and --poisson when they changed them). Needs Debian's python3-numpy,
python3-matplotlib and python3-yaml (run with the system python3).
"""

import argparse
import json
import math
import pathlib
import sys

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as error:
    sys.exit(f"plot_wear: {error}: install Debian's python3-numpy and python3-matplotlib "
             "and run this script with the system python3 (/usr/bin/python3)")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from plot_fretting import read_csv  # noqa: E402  (one CSV reader for the figure scripts)

AXES = {"x": 0, "y": 1}


def fail(message):
    sys.exit(f"plot_wear: {message}")


def line_rows(profile, along):
    """Rows of the contact nodes on the line through the deepest node, along
    `along`, in order along it (the other in-plane coordinate equal to the
    deepest node's within 1e-9 of the face's size)."""
    other = "y" if along == "x" else "x"
    coord, cross = profile[along], profile[other]
    size = max(np.ptp(coord), np.ptp(cross), 1e-300)
    deepest = int(np.argmax(profile["wear_depth"]))
    rows = np.flatnonzero(np.abs(cross - cross[deepest]) <= 1e-9 * size)
    return rows[np.argsort(coord[rows])]


def hertz_line(load_per_length, radius, e_star):
    """Half-width b and peak p0 of the Hertz line contact (Johnson 4.2)."""
    b = math.sqrt(4.0 * load_per_length * radius / (math.pi * e_star))
    return b, 2.0 * load_per_length / (math.pi * b)


def hertz_pressure(x, b, p0):
    s = np.clip(1.0 - (x / b) ** 2, 0.0, None)
    return p0 * np.sqrt(s)


def case_parameters(results, args):
    """(R, E*, contact name, the cylinder's point) from the options or the
    case file; None when the indenter is no cylinder."""
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    radius, young, poisson, name, point = args.radius, args.young, args.poisson, None, None
    try:
        import yaml

        case = yaml.safe_load(pathlib.Path(summary["case"]).read_text(encoding="utf-8"))
        wanted = summary.get("wear", {}).get("contact") or None
        for contact in case.get("contact", []):
            if "cylinder" in contact and (wanted is None or contact.get("name") == wanted):
                name, point = contact.get("name"), contact["cylinder"]["point"]
                radius = radius or float(contact["cylinder"]["radius"])
                break
        young = young or float(case["material"]["young"])
        poisson = poisson if poisson is not None else float(case["material"]["poisson"])
    except (ImportError, OSError, KeyError, TypeError, ValueError) as error:
        print(f"plot_wear: no Hertz overlay from the case file ({error})", file=sys.stderr)
    if not (radius and young and poisson is not None and name):
        return None
    return radius, young / (1.0 - poisson**2), name, point


def load_per_length(history, step, name, profile):
    """The indenter's force along z at `step` per unit thickness along y."""
    row = np.flatnonzero(history["step"] == step)
    force = abs(float(history[f"force_{name}_z"][row[0]]))
    return force / max(np.ptp(profile["y"]), 1e-300)


def extent(x, pressure):
    """Extent of the nodes with a pressure along the line: (first, last)."""
    touching = x[pressure > 0.0]
    return (float(touching.min()), float(touching.max())) if touching.size else (0.0, 0.0)


def read_run(results):
    cycles = read_csv(results / "cycles.csv")
    files = sorted((results / "wear").glob("cycle_*.csv"))
    if not files:
        fail(f"{results / 'wear'}: no scar profiles (was the run made with `wear`?)")
    profiles = {int(f.stem.split("_")[1]): read_csv(f) for f in files}
    represented = dict(zip(cycles["cycle"].astype(int), cycles["represented_cycles"]))
    history = read_csv(results / "history.csv")
    ends = {}
    for k in profiles:
        rows = np.flatnonzero(history["cycle"] == k)
        ends[k] = int(history["step"][rows[-1]])
    return profiles, represented, history, ends


def pressing_map(results):
    """The map at the end of cycle 0 (the pressing), or None."""
    index = read_csv(results / "maps" / "index.csv")
    rows = [i for i, c in enumerate(index["cycle"]) if int(c) == 0]
    if not rows:
        return None, None
    i = rows[-1]
    return read_csv(results / "maps" / index["file"][i]), int(index["step"][i])


def cycle_numbers(profiles, represented, history, ends, along, hertz):
    """numbers.json's per-cycle entries."""
    out = []
    for k, profile in sorted(profiles.items()):
        rows = line_rows(profile, along)
        x, p = profile[along][rows], profile["pressure"][rows]
        entry = {"cycle": k, "represented_cycles": int(represented.get(k, 0)),
                 "step": ends[k], "max_depth": float(profile["wear_depth"].max()),
                 "peak_pressure": float(p.max()), "contact_extent": extent(x, p)}
        if hertz:
            radius, e_star, name, _ = hertz
            load = load_per_length(history, ends[k], name, profile)
            b, p0 = hertz_line(load, radius, e_star)
            entry.update({"load_per_length": load, "hertz_half_width": b, "hertz_peak": p0})
        out.append(entry)
    return out


def plot_scar(profiles, represented, along, n, out):
    keys = sorted(profiles)
    chosen = sorted({keys[round(i * (len(keys) - 1) / max(n - 1, 1))] for i in range(n)})
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    colours = plt.cm.viridis(np.linspace(0, 0.9, len(chosen)))
    for colour, k in zip(colours, chosen):
        profile = profiles[k]
        rows = line_rows(profile, along)
        ax.plot(profile[along][rows], 1e3 * profile["wear_depth"][rows], "-o", ms=2.5,
                color=colour, label=f"{int(represented.get(k, 0))} cycles")
    worn = profiles[chosen[-1]]
    x = worn[along][worn["wear_depth"] > 0.0]
    if x.size:
        pad = 0.5 * (x.max() - x.min())
        ax.set_xlim(x.min() - pad, x.max() + pad)
    ax.set_xlabel(f"{along} [length]")
    ax.set_ylabel("worn depth h [1e-3 length]")
    ax.set_title("Scar profile")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_pressure(curves, hertz_curves, along, out):
    """curves: (label, x, p, style); hertz_curves: (label, b, p0, centre, style)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, x, p, style in curves:
        ax.plot(x, p, style, ms=3, label=label)
    for label, b, p0, centre, style in hertz_curves:
        xs = np.linspace(centre - 1.2 * b, centre + 1.2 * b, 241)
        ax.plot(xs, hertz_pressure(xs - centre, b, p0), style, lw=1.2, label=label)
    ax.set_xlabel(f"{along} [length]")
    ax.set_ylabel("pressure [stress]")
    ax.set_title("Contact pressure along the line of contact")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    lo = min(float(np.min(x[p > 0])) for _, x, p, _ in curves if np.any(p > 0))
    hi = max(float(np.max(x[p > 0])) for _, x, p, _ in curves if np.any(p > 0))
    pad = 0.5 * (hi - lo)
    ax.set_xlim(lo - pad, hi + pad)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def pressing_numbers(results, history, along, hertz):
    """numbers.json's `pressing` entry: the map ending cycle 0 (the state the
    first cycle starts from) and the Hertz line contact of its load."""
    pressing, step = pressing_map(results)
    if pressing is None:
        return None, None
    rows = line_rows({**pressing, "wear_depth": np.zeros_like(pressing["x"])}, along)
    x, p = pressing[along][rows], pressing["pressure"][rows]
    entry = {"step": step, "peak_pressure": float(p.max()), "contact_extent": extent(x, p)}
    if hertz:
        load = load_per_length(history, step, hertz[2], pressing)
        b, p0 = hertz_line(load, *hertz[:2])
        entry.update({"load_per_length": load, "hertz_half_width": b, "hertz_peak": p0})
    return entry, (x, p)


def pressure_figure(profiles, numbers, pressing, along, hertz, out):
    """Pressure after pressing (Hertz overlaid), after the first and the last
    simulated cycle (Hertz of the last cycle's load dashed)."""
    curves, hertz_curves = [], []
    first, last = numbers["cycles"][0], numbers["cycles"][-1]
    centre = float(hertz[3][AXES[along]]) if hertz and hertz[3] else 0.0
    if pressing is not None:
        curves.append(("after pressing (start of cycle 1)", *pressing, "s"))
        if hertz:
            entry = numbers["pressing"]
            hertz_curves.append(("Hertz, the pressing's load", entry["hertz_half_width"],
                                 entry["hertz_peak"], centre, "k-"))
    for entry, style in ((first, "o-"), (last, "^-")) if last is not first else ((first, "o-"),):
        profile = profiles[entry["cycle"]]
        rows = line_rows(profile, along)
        label = f"end of simulated cycle {entry['cycle']} ({entry['represented_cycles']} cycles)"
        curves.append((label, profile[along][rows], profile["pressure"][rows], style))
    if hertz and last is not first:
        hertz_curves.append(("Hertz, the last cycle's load (unworn)", last["hertz_half_width"],
                             last["hertz_peak"], centre, "k--"))
    plot_pressure(curves, hertz_curves, along, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=pathlib.Path)
    parser.add_argument("--along", choices=sorted(AXES), default="x")
    parser.add_argument("--profiles", type=int, default=6)
    parser.add_argument("--radius", type=float)
    parser.add_argument("--young", type=float)
    parser.add_argument("--poisson", type=float)
    args = parser.parse_args()
    results = args.results
    if not (results / "summary.json").is_file():
        fail(f"{results}: not a bipo results folder (no summary.json)")
    if args.profiles < 1:
        fail("--profiles: expected an integer >= 1")
    profiles, represented, history, ends = read_run(results)
    hertz = case_parameters(results, args)
    numbers = {"cycles": cycle_numbers(profiles, represented, history, ends, args.along, hertz)}
    numbers["pressing"], pressing = pressing_numbers(results, history, args.along, hertz)
    figures = results / "figures"
    figures.mkdir(exist_ok=True)
    plot_scar(profiles, represented, args.along, args.profiles, figures / "wear_scar.png")
    pressure_figure(profiles, numbers, pressing, args.along, hertz, figures / "wear_pressure.png")
    (figures / "numbers.json").write_text(json.dumps(numbers, indent=1) + "\n",
                                          encoding="utf-8")
    print(f"plot_wear: wear_scar.png, wear_pressure.png and numbers.json in {figures}")


if __name__ == "__main__":
    main()
