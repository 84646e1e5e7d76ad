#!/usr/bin/python3
"""The cylinder-on-flat fretting wear case (cases/cylinder_wear.yaml) and its
figure script (scripts/plot_wear.py), checked against independent truth:

1. Archard's volume identity: with isotropic associated Coulomb friction a
   slipping node has |r_t| = mu r_n along -du_t and a stuck one du_t = 0,
   so r_n |du_t| = D / mu at every node and step, and the Archard volume of
   a cycle, sum over its steps and nodes of k (r_n / A) |du_t| A, times its
   count K, is (k / mu) K D_cycle: cycles.csv's wear_volume against its
   dissipation (1e-9 relative, the law's tolerance is 1e-10); their sum is
   summary.json's volume (1e-12);
2. the pressure after the frictionless pressing against the Hertz line
   contact of the same load per unit length (plane strain, E* = E / (1 -
   nu^2)): the peak within 1 % of p0, every node within 2 % of p0 of p(x)
   (the nodal pressure r_n / A averages over the node's tributary length,
   which matters only at the edge), the last loaded node within one element
   of b; and the first cycle's end (gross slip: the friction traction mu p
   couples into the pressure through Dundurs' beta = 0.29, which shifts it
   sideways) within 2 % of p0 at the peak;
3. the wear redistributes the pressure: the pressure at the scar's deepest
   node falls at every simulated cycle, the contact's extent along x never
   shrinks and ends at least 25 % wider, and at the last cycle the peak is
   at least 25 % below, and the extent at least 30 % wider than, the Hertz
   contact of the last cycle's own load (the top is displacement-held, so
   the load falls as the surface recedes: the comparison takes that out);
4. plot_wear.py writes its two figures and its numbers agree with 2.

Under 10 seconds. Usage: test_plot_wear.py --bipo BIPO --work WORK
"""

import argparse
import json
import math
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from plot_fretting import read_csv  # noqa: E402

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)


def hertz(load, radius, e_star):
    b = math.sqrt(4.0 * load * radius / (math.pi * e_star))
    return b, 2.0 * load / (math.pi * b)


def line(table):
    """The contact nodes of the row y < 0 of the slab, in order along x."""
    rows = np.flatnonzero(table["y"] < 0.0)
    return rows[np.argsort(table["x"][rows])]


def check_volume(out, case):
    summary = json.loads((out / "summary.json").read_text())
    cycles = read_csv(out / "cycles.csv")
    k = float(case["wear"]["coefficient"])  # YAML 1.1 reads 6e-8 as text
    mu = case["contact"][0]["friction_program"][0]["friction"]["mu"]
    counts = np.diff(np.concatenate(([0.0], cycles["represented_cycles"][1:])))
    expected = k / mu * counts * cycles["dissipation"][1:]
    error = np.max(np.abs(cycles["wear_volume"][1:] / expected - 1.0))
    check(error < 1e-9, f"Archard volume = (k / mu) K D per cycle (largest error {error:.1e})")
    total = summary["wear"]["volume"]
    check(abs(cycles["wear_volume"].sum() / total - 1) < 1e-12, "sum of cycles = summary volume")
    check(summary["wear"]["represented_cycles"] == 500, "500 cycles represented")


def check_hertz(out, case, history):
    radius = case["contact"][0]["cylinder"]["radius"]
    e_star = case["material"]["young"] / (1.0 - case["material"]["poisson"] ** 2)
    index = read_csv(out / "maps" / "index.csv")
    i = max(j for j, c in enumerate(index["cycle"]) if c == 0)
    m = read_csv(out / "maps" / index["file"][i])
    rows = line(m)
    x, p = m["x"][rows], m["pressure"][rows]
    thickness = np.ptp(m["y"])
    step = int(index["step"][i])
    load = abs(history["force_pad_z"][history["step"] == step][0]) / thickness
    b, p0 = hertz(load, radius, e_star)
    check(abs(p.max() / p0 - 1) < 0.01, f"pressing: peak {p.max():.1f} vs Hertz p0 {p0:.1f}")
    exact = p0 * np.sqrt(np.clip(1 - (x / b) ** 2, 0, None))
    worst = np.max(np.abs(p - exact)) / p0
    check(worst < 0.02, f"pressing: p(x) within 2 % of p0 of Hertz (worst {worst:.3f})")
    last = x[p > 0].max()
    element = np.diff(x)[np.searchsorted(x, last) - 1]
    check(abs(last - b) < element, f"pressing: contact edge {last:.3f} vs b {b:.3f}")
    return radius, e_star, p0


def profiles(out):
    files = sorted((out / "wear").glob("cycle_*.csv"))
    return [read_csv(f) for f in files]


def check_redistribution(out, history, radius, e_star):
    scars = profiles(out)
    centre, width = [], []
    for s in scars:
        rows = line(s)
        x, p = s["x"][rows], s["pressure"][rows]
        centre.append(p[np.argmax(s["wear_depth"][rows])])
        width.append(np.ptp(x[p > 0]))
    check(all(b < a for a, b in zip(centre, centre[1:])),
          f"pressure at the deepest node falls every cycle ({centre[0]:.0f} -> {centre[-1]:.0f})")
    check(all(b >= a for a, b in zip(width, width[1:])) and width[-1] > 1.25 * width[0],
          f"contact extent never shrinks and widens ({width[0]:.3f} -> {width[-1]:.3f})")
    steps = history["step"][np.r_[np.flatnonzero(np.diff(history["cycle"])), -1]][1:]
    last_step = int(steps[-1])
    load = abs(history["force_pad_z"][history["step"] == last_step][0]) / np.ptp(scars[-1]["y"])
    b, p0 = hertz(load, radius, e_star)
    rows = line(scars[-1])
    peak = scars[-1]["pressure"][rows].max()
    check(peak < 0.75 * p0, f"last cycle: peak {peak:.0f} < 0.75 x Hertz p0 {p0:.0f} at its load")
    check(width[-1] > 1.3 * 2 * b, f"last cycle: extent {width[-1]:.3f} > 1.3 x Hertz 2b {2*b:.3f}")
    first = scars[0]["pressure"][line(scars[0])].max()
    load1 = abs(history["force_pad_z"][history["step"] == int(steps[0])][0]) / np.ptp(scars[0]["y"])
    p01 = hertz(load1, radius, e_star)[1]
    check(abs(first / p01 - 1) < 0.02, f"first cycle's end: peak {first:.1f} vs Hertz {p01:.1f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bipo", required=True)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    case_file = ROOT / "cases" / "cylinder_wear.yaml"
    case = yaml.safe_load(case_file.read_text())
    out = args.work / "out"
    subprocess.run([args.bipo, "run", "-q", "-o", str(out), str(case_file)], check=True)
    history = read_csv(out / "history.csv")
    check_volume(out, case)
    radius, e_star, p0 = check_hertz(out, case, history)
    check_redistribution(out, history, radius, e_star)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "plot_wear.py"), str(out)], check=True)
    figures = out / "figures"
    for name in ("wear_scar.png", "wear_pressure.png"):
        check((figures / name).stat().st_size > 10_000, f"{name} written")
    numbers = json.loads((figures / "numbers.json").read_text())
    check(abs(numbers["pressing"]["hertz_peak"] / p0 - 1) < 1e-12, "plot_wear's Hertz p0 agrees")
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")


if __name__ == "__main__":
    main()
