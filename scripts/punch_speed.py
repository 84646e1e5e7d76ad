#!/usr/bin/env python3
"""Whole-process times of the seed punch cases (issue 5, "Speed").

Runs `bipo run cases/punch_X.yaml --quiet` for X in A, B, C, interleaved,
REPS times each (after one warm-up run of each), into a temporary folder, and
prints as a Markdown table the median wall time of the whole process and the
medians of the phase times that bipo reports in summary.json (`seconds`).
Then times REPS runs of the three cases in one process (one set-up shared),
interleaved: one after the other (`bipo run --jobs 1 cases/punch_A.yaml
cases/punch_B.yaml cases/punch_C.yaml`) and two at a time, longest first
(`bipo run --jobs 2 cases/punch_C.yaml cases/punch_B.yaml cases/punch_A.yaml`),
writing to the cases' own results folders; wall and CPU (user + system) time.

    scripts/punch_speed.py [--bipo build/release/bipo] [--reps 5] [--cases A B C]

Quote the figures with the machine's load (printed first and last): on a
shared machine other processes change them a lot.
"""
import argparse
import json
import os
import resource
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

    # The cases in one process: one after the other, and two at a time
    # (--jobs 2, longest first: C, B, A), interleaved; wall and CPU time.
    files = [os.path.join(ROOT, "cases", f"punch_{c}.yaml") for c in args.cases]
    variants = {"one after the other": ["--jobs", "1", *files],
                "two at a time (--jobs 2, longest first)": ["--jobs", "2", *reversed(files)]}
    times = {name: ([], []) for name in variants}
    for _ in range(args.reps):
        for name, arguments in variants.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([args.bipo, "run", *arguments, "--quiet"], check=True)
            times[name][0].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[name][1].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    for name, (wall, cpu) in times.items():
        print(f"the same cases in one process, {name}: median {statistics.median(wall):.2f} s "
              f"(CPU {statistics.median(cpu):.2f} s; {args.reps} runs)")
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
