#!/usr/bin/python3
"""Mesh convergence of the cyclic punch (cases A, B, C) on three O-grid levels.

The check of issue 5; the test PunchConvergence.FinestTwoLevelsAgree runs it.

For each case and level (core = ring = N elements, L layers) the script writes
a copy of cases/punch_<X>_refined.yaml with that mesh (VTK output off), runs
bipo, and reads history.csv and cycles.csv. It reports, per case:

- the total normal force at the first peak (end of the first loading) and at
  the last peak (end of the last reloading),
- the dissipation of each cycle 0..6 and of the whole history,

on each level, the observed order of convergence p (from the three levels,
with h = 1/N, solving (q1 - q2)/(q2 - q3) = (h1^p - h2^p)/(h2^p - h3^p)), and
the difference of the finest two levels, checked against the stated
tolerance (--tolerance, default 2 %):

- a force, and the dissipation of the first loading (cycle 0) and of the
  whole history: relative to the quantity itself;
- the dissipation of a later cycle: relative to the larger of itself and the
  dissipation of the first loading (on the finest level). The later cycles'
  dissipation tends to a small value, near zero for a body that shakes down;
  the relative difference of a quantity whose limit is zero is a ratio of two
  discretization errors and does not go to zero with h, so it is measured on
  the scale of the dissipation the case produces (a mixed absolute/relative
  tolerance, with the absolute part = tolerance x first-loading dissipation).

The table shows both the difference relative to the quantity and the one the
check uses. A Markdown table goes to standard output and to
<out>/convergence.md; the exit status is 1 if a finest-two difference exceeds
the tolerance.

Usage:
  scripts/punch_convergence.py [--levels 16:8,24:12,32:16] [--cases A,B,C]
                               [--out results/convergence] [--bipo build/release/bipo]
                               [--tolerance 0.02] [--rim-grading Q] [--bottom-grading Q]
                               [--whole] [--fresh]

By default each level is the quarter x >= 0, y >= 0 of the cylinder
(mesh.cylinder.sector: quarter) held by the symmetry conditions ux = 0 on
x = 0 and uy = 0 on y = 0, and the script reports four times its forces and
dissipations: the whole punch's, since the cases are mirror symmetric
(docs/punch.md, "Quarter model"). The quarter needs even levels (core); it
has a quarter of the unknowns and of the contact nodes, so the dense
contact Newton systems cost about a 64th, which is what lets the study reach
32/16 (the three cases in about 2 minutes on 2 cores). Its folders end in
_quarter. For case C the quarter model follows the mirror-symmetric
solution, whereas the whole seed mesh leaves it at increment 60
(docs/punch.md). --whole runs the whole cylinder (any levels; give --levels,
since its 32/16 level takes 11 GB and hours on 2 cores).

--rim-grading / --bottom-grading set the cylinder's rim_grading /
bottom_grading (docs/case-file.md) on every level; without them each level
keeps the case file's gradings (1, uniform, where it has none). The results
folder of a graded level is punch_<X>_<N>_<L>_r<Q>_b<Q>[_quarter].

A level whose results folder already holds a completed run of the same case
text is not rerun (delete the folder, or pass --fresh, to force it).
"""

import argparse
import csv
import json
import math
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


QUARTER_CONDITIONS = ("  - {set: symmetry_x0, displacement: {x: 0}}   # mirror x -> -x\n"
                      "  - {set: symmetry_y0, displacement: {y: 0}}   # mirror y -> -y\n")


def cylinder_map(case, core, layers, gradings, quarter=False):
    """The case file's `cylinder: {...}` map with core = ring = core, the given
    layers and, for each grading given (not None), that grading; returns
    (text of the case with it, the map's keys and values)."""
    src = (ROOT / "cases" / f"punch_{case}_refined.yaml").read_text()
    found = re.findall(r"cylinder: \{([^}]*)\}", src)
    if len(found) != 1:
        sys.exit(f"punch_convergence: cannot find the cylinder mesh line in punch_{case}_refined.yaml")
    keys = {}
    for item in found[0].split(","):
        key, _, value = item.partition(":")
        keys[key.strip()] = value.strip()
    if not {"core", "ring", "layers"} <= keys.keys():
        sys.exit(f"punch_convergence: the cylinder map of punch_{case}_refined.yaml needs core, ring, layers")
    keys["core"] = keys["ring"] = str(core)
    keys["layers"] = str(layers)
    for key, value in gradings.items():
        if value is not None:
            keys[key] = f"{value:g}"
    if quarter:
        keys["sector"] = "quarter"
    mesh = "cylinder: {" + ", ".join(f"{k}: {v}" for k, v in keys.items()) + "}"
    # The comment after the map (its element counts) is the case file's level's: dropped.
    return re.sub(r"cylinder: \{[^}]*\}[^\n]*", lambda _: mesh, src), keys


def case_text(case, core, layers, gradings, out_dir, quarter=False):
    text, _ = cylinder_map(case, core, layers, gradings, quarter)
    if quarter:
        text, n = re.subn(r"(?m)^(boundary_conditions:\n(?:  - .*\n)+)",
                          lambda m: m.group(1) + QUARTER_CONDITIONS, text)
        if n != 1:
            sys.exit(f"punch_convergence: cannot find the boundary conditions in punch_{case}_refined.yaml")
    text, n = re.subn(r"(?ms)^output:.*\Z",
                      f"output:\n  directory: {out_dir.resolve()}\n  vtk: false\n", text)
    if n != 1:
        sys.exit(f"punch_convergence: cannot find the output block in punch_{case}_refined.yaml")
    return text


def grading_of(case, gradings):
    """(rim_grading, bottom_grading) of a run: the options, else the case file's, else 1."""
    _, keys = cylinder_map(case, 1, 1, gradings)
    return tuple(float(keys.get(k, "1")) for k in ("rim_grading", "bottom_grading"))


def run_level(bipo, case, core, layers, gradings, out, quarter, fresh):
    rim, bottom = grading_of(case, gradings)
    suffix = "" if (rim, bottom) == (1.0, 1.0) else f"_r{rim:g}_b{bottom:g}"
    suffix += "_quarter" if quarter else ""
    folder = out / f"punch_{case}_{core}_{layers}{suffix}"
    folder.mkdir(parents=True, exist_ok=True)
    case_file = folder / "case.yaml"
    text = case_text(case, core, layers, gradings, folder / "results", quarter)
    summary_path = folder / "results" / "summary.json"
    if not fresh and case_file.exists() and case_file.read_text() == text and summary_path.exists():
        if json.loads(summary_path.read_text()).get("status") == "completed":
            return folder / "results"
    case_file.write_text(text)
    start = time.monotonic()
    print(f"running case {case}, core = ring = {core}, {layers} layers, rim_grading {rim:g}, "
          f"bottom_grading {bottom:g}{', quarter' if quarter else ''} ...", file=sys.stderr, flush=True)
    done = subprocess.run([str(bipo), "run", str(case_file), "-q"])
    if done.returncode != 0:
        sys.exit(f"punch_convergence: bipo failed on {case_file} (exit {done.returncode})")
    print(f"  {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)
    return folder / "results"


def quantities(results, quarter):
    history = read_csv(results / "history.csv")
    cycles = read_csv(results / "cycles.csv")
    summary = json.loads((results / "summary.json").read_text())
    by_step = {int(float(r["step"])): r for r in history}
    first_peak = int(cycles[0]["step_end_loading"])
    last_peak = int(cycles[-1]["step_end_loading"])
    q = {
        "normal force, first peak [N]": float(by_step[first_peak]["normal_force"]),
        "normal force, last peak [N]": float(by_step[last_peak]["normal_force"]),
    }
    for r in cycles:
        q[f"dissipation, cycle {r['cycle']} [N mm]"] = float(r["dissipation"])
    q["dissipation, total [N mm]"] = sum(float(r["dissipation"]) for r in cycles)
    if quarter:  # the whole punch: four mirror images of the quarter
        q = {key: 4.0 * value for key, value in q.items()}
    info = {"contact_nodes": summary["mesh"]["contact_nodes"], "seconds": summary["seconds"]["total"]}
    return q, info


def observed_order(h, q):
    """Order p with (q1-q2)/(q2-q3) = (h1^p-h2^p)/(h2^p-h3^p); None if not monotone."""
    d12, d23 = q[0] - q[1], q[1] - q[2]
    if d23 == 0 or d12 / d23 <= 0:
        return None
    ratio = d12 / d23

    def g(p):
        return (h[0] ** p - h[1] ** p) / (h[1] ** p - h[2] ** p) - ratio

    lo, hi = 1e-3, 12.0
    if g(lo) * g(hi) > 0:
        return None
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(lo) * g(mid) <= 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="16:8,24:12,32:16")
    parser.add_argument("--cases", default="A,B,C")
    parser.add_argument("--out", default=str(ROOT / "results" / "convergence"))
    parser.add_argument("--bipo", default=str(ROOT / "build" / "release" / "bipo"))
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--rim-grading", type=float, default=None,
                        help="cylinder rim_grading of every level (default: the case file's)")
    parser.add_argument("--bottom-grading", type=float, default=None,
                        help="cylinder bottom_grading of every level (default: the case file's)")
    parser.add_argument("--whole", action="store_true",
                        help="run the whole cylinder instead of the quarter model")
    parser.add_argument("--fresh", action="store_true",
                        help="rerun every level even if its folder holds a completed run")
    args = parser.parse_args()
    args.quarter = not args.whole
    for name, value in (("--rim-grading", args.rim_grading), ("--bottom-grading", args.bottom_grading)):
        if value is not None and not (math.isfinite(value) and value >= 1.0):
            sys.exit(f"punch_convergence: {name} must be a finite number >= 1, got {value}")
    gradings = {"rim_grading": args.rim_grading, "bottom_grading": args.bottom_grading}
    levels = [tuple(int(v) for v in item.split(":")) for item in args.levels.split(",")]
    if len(levels) != 3:
        sys.exit("punch_convergence: give exactly three levels, e.g. 8:4,12:6,16:8")
    if args.quarter and any(core % 2 for core, _ in levels):
        sys.exit("punch_convergence: the quarter model needs even levels (core), got " + args.levels
                 + " (or pass --whole)")
    bipo = pathlib.Path(args.bipo)
    if not bipo.exists():
        sys.exit(f"punch_convergence: no bipo executable at {bipo} (build first or pass --bipo)")
    out = pathlib.Path(args.out)
    h = [1.0 / core for core, _ in levels]
    lines = []
    failed = []
    for case in args.cases.split(","):
        data = [quantities(run_level(bipo, case, core, layers, gradings, out, args.quarter, args.fresh), args.quarter)
                for core, layers in levels]
        names = ", ".join(f"{core}/{layers} ({info['contact_nodes']} contact nodes, {info['seconds']:.0f} s)"
                          for (core, layers), (_, info) in zip(levels, data))
        rim, bottom = grading_of(case, gradings)
        model = ("quarter model (x, y >= 0, symmetry conditions; contact nodes of the quarter, "
                 "forces and dissipations x 4)" if args.quarter else "whole cylinder")
        lines.append(f"\n### Case {case}\n\nLevels core=ring/layers: {names}\n"
                     f"Mesh grading: rim_grading {rim:g}, bottom_grading {bottom:g}; {model}\n")
        lines.append("| quantity | " + " | ".join(f"{c}/{l}" for c, l in levels)
                     + " | observed order | finest two differ by | on the check's scale |")
        lines.append("|---|" + "---|" * (len(levels) + 3))
        first_loading = data[2][0]["dissipation, cycle 0 [N mm]"]
        for key in data[0][0]:
            q = [d[0][key] for d in data]
            p = observed_order(h, q)
            difference = abs(q[2] - q[1])
            rel = difference / max(abs(q[2]), 1e-300)
            later_cycle = key.startswith("dissipation, cycle") and key != "dissipation, cycle 0 [N mm]"
            scale = max(abs(q[2]), abs(first_loading)) if later_cycle else abs(q[2])
            checked = difference / max(scale, 1e-300)
            ok = checked <= args.tolerance
            if not ok:
                failed.append(f"case {case}: {key}: {100 * checked:.2f} %")
            scale_text = " of the first loading's" if later_cycle and scale > abs(q[2]) else ""
            lines.append(f"| {key} | " + " | ".join(f"{v:.6g}" for v in q)
                         + f" | {'-' if p is None else f'{p:.2f}'} | {100 * rel:.2f} %"
                         + f" | {100 * checked:.2f} %{scale_text}{'' if ok else ' (over)'} |")
    lines.append(f"\nTolerance on the finest two levels: {100 * args.tolerance:.1f} %, relative to the "
                 "quantity (forces, first loading, total) or to the larger of the quantity and the "
                 "first loading's dissipation (later cycles).")
    if failed:
        lines.append("Over the tolerance: " + "; ".join(failed))
    report = "\n".join(lines) + "\n"
    print(report)
    (out / "convergence.md").write_text(report)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
