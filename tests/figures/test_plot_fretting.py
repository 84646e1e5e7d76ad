#!/usr/bin/python3
"""Test of scripts/plot_fretting.py on a small fretting run.

Runs a cylinder pressed on a plane that then moves +-delta for two cycles
(`cycles: {program: contact.base.motion}`, 10 increments per half cycle, a
fraction of a second), then the script, and checks:

1. each cycle's loop area that the script recomputes from history.csv
   (shoelace formula over loop_displacement, loop_force) equals cycles.csv's
   loop_area, which bipo accumulates step by step (1e-9 relative: the
   round-off of the 17-digit CSV values);
2. the loops figure and the maps of the extremes of the first and last
   cycle (steps 12 and 42: where the motion turns; step 52 ends the
   program, no turn) are written as PNG files;
3. a missing results folder is a clear error, not a traceback.

Usage: test_plot_fretting.py --bipo BIPO --work WORK
"""

import argparse
import json
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASE = """title: small fretting loop
mesh: {cylinder: {radius: 10, height: 10, core: 2, ring: 2, layers: 1}}
material: {young: 210000, poisson: 0.3}
load_program: [{to: 1, increments: 2}, {to: 1, increments: 50}]
boundary_conditions:
  - {set: top, displacement: {x: 0, y: 0, z: -0.0001}}
contact:
  - name: base
    set: bottom
    plane: {point: [0, 0, 0], normal: [0, 0, 1]}
    friction: {mu: 0.3}
    motion:
      displacement: [0.001, 0, 0]
      program:
        - {to: 0, increments: 2}
        - {to: 1, increments: 10}
        - repeat: 2
          segments: [{to: -1, increments: 10}, {to: 1, increments: 10}]
cycles: {program: contact.base.motion}
output: {vtk: false}
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bipo", required=True)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    (args.work / "case.yaml").write_text(CASE)
    out = args.work / "out"
    subprocess.run([args.bipo, "run", "-q", "-o", str(out), str(args.work / "case.yaml")],
                   check=True)
    script = ROOT / "scripts" / "plot_fretting.py"
    subprocess.run([sys.executable, str(script), str(out)], check=True)
    failures = []
    numbers = json.loads((out / "figures" / "numbers.json").read_text())["cycles"]
    if [c["cycle"] for c in numbers] != [0, 1, 2]:
        failures.append(f"cycles {[c['cycle'] for c in numbers]}, expected [0, 1, 2]")
    for c in numbers:
        if abs(c["loop_area_from_history"] - c["loop_area"]) > 1e-9 * abs(c["loop_area"]):
            failures.append(f"cycle {c['cycle']}: loop area {c['loop_area_from_history']} "
                            f"from history.csv, {c['loop_area']} in cycles.csv")
    for name in ("fretting_loops.png", "fretting_map_step_000012.png",
                 "fretting_map_step_000042.png"):
        png = out / "figures" / name
        if not png.is_file() or png.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
            failures.append(f"{name}: missing or not a PNG")
    missing = subprocess.run([sys.executable, str(script), str(args.work / "nothing")],
                             capture_output=True, text=True)
    if missing.returncode == 0 or "missing" not in missing.stderr or "Traceback" in missing.stderr:
        failures.append(f"a missing folder: exit {missing.returncode}, {missing.stderr!r}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        shutil.rmtree(args.work, ignore_errors=True)
        print("plot_fretting: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
