#!/usr/bin/env python3
"""Whole-process times of the seed punch cases (issue 5, "Speed").

Runs `bipo run cases/punch_X.yaml --quiet` for X in A, B, C, interleaved,
REPS times each (after one warm-up run of each), into a temporary folder, and
prints as a Markdown table the median wall time of the whole process and the
medians of the phase times that bipo reports in summary.json (`seconds`).
Then times REPS runs of the three cases in one process
(`bipo run cases/punch_A.yaml cases/punch_B.yaml cases/punch_C.yaml`, one
set-up shared), writing to the cases' own results folders.

    scripts/punch_speed.py [--bipo build/release/bipo] [--reps 5] [--cases A B C]

Quote the figures with the machine's load (printed first and last): on a
shared machine other processes change them a lot.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = ["contact_sweeps", "linear_solves", "output", "assembly", "factorization", "delassus"]


def run_once(bipo, case, out):
    start = time.perf_counter()
    subprocess.run([bipo, "run", os.path.join(ROOT, "cases", f"punch_{case}.yaml"), "-o", out,
                    "--quiet"], check=True)
    wall = time.perf_counter() - start
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return wall, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bipo", default=os.path.join(ROOT, "build", "release", "bipo"))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cases", nargs="+", default=["A", "B", "C"])
    args = parser.parse_args()
    if not os.access(args.bipo, os.X_OK):
        sys.exit(f"punch_speed.py: {args.bipo} is not an executable (build bipo first)")

    print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    walls = {c: [] for c in args.cases}
    phases = {c: {p: [] for p in PHASES} for c in args.cases}
    last = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps + 1):
            for case in args.cases:
                out = os.path.join(tmp, f"{case}_{rep}")
                wall, summary = run_once(args.bipo, case, out)
                if rep == 0:
                    continue  # warm-up: file caches, first-touch effects
                walls[case].append(wall)
                for p in PHASES:
                    phases[case][p].append(summary["seconds"][p])
                last[case] = summary

    print("| case | whole process [s] | contact iterations | linear solves | output | "
          "set-up (assembly, factorization with condensation, W) | Newton steps / sweeps |")
    print("|---|---|---|---|---|---|---|")
    total = 0.0
    for case in args.cases:
        med = {p: statistics.median(v) for p, v in phases[case].items()}
        wall = statistics.median(walls[case])
        total += wall
        setup = med["assembly"] + med["factorization"] + med["delassus"]
        s = last[case]
        print(f"| {case} | {wall:.2f} | {med['contact_sweeps']:.2f} | {med['linear_solves']:.2f} | "
              f"{med['output']:.2f} | {setup:.2f} | "
              f"{s['total_newton_iterations']} / {s['total_sweeps']} |")
    print(f"\nsum of the medians: {total:.2f} s ({args.reps} runs of each case after a warm-up)")

    files = [os.path.join(ROOT, "cases", f"punch_{c}.yaml") for c in args.cases]
    together = []
    for _ in range(args.reps):
        start = time.perf_counter()
        subprocess.run([args.bipo, "run", *files, "--quiet"], check=True)
        together.append(time.perf_counter() - start)
    print(f"the same cases in one process (one set-up): median {statistics.median(together):.2f} s"
          f" ({args.reps} runs)")
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
