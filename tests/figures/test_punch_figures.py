#!/usr/bin/python3
"""Test of scripts/punch_figures.py: its derived numbers against independent truth.

Runs the three punch cases on two small meshes (the seed mesh, whole model,
and the quarter model of the converged case files at the coarse level 8/4,
both with the full load program) into WORK, then checks what the figure
script derives from the CSV results:

1. P's local loop: the work of P's friction force over each cycle,
   -sum r_t . du_t from probes/P.csv (force and slip increments as the probe
   reports them), equals P's dissipation of the cycle, the `dissipation_cycle`
   of P's node in the map at the end of the cycle (maps/step_*.csv). It is the
   same sum of the same per-step products (docs/physics.md section 3.1,
   D_i = -r_t . du_t, the end-of-step force times the step's slip, which is
   how the script integrates the loop too): the tolerance, 1e-9 of P's
   first-loading dissipation, covers the round-off of the CSV's 17 digits,
   of the slip increments taken as differences of the accumulated slip, and
   the clamping of a stick step's round-off dissipation at 0. (The drawn
   polygon's trapezoidal area differs from it by a discretization term,
   sum 1/2 dF ds, up to ~20 % at the first loading's 5 steps: not used.)
   The radial and circumferential parts add up to it (1e-12).
2. The pressure maps integrate to the normal force: sum over the whole face of
   (r_n / area) x area equals the normal force of history.csv at the end of
   the first loading (4 x the quarter's for the quarter model; 1e-12).
3. The mirrored quarter map is the whole face: its tributary areas add up to
   the area of the polygon through its rim nodes (the face of a hex8 mesh
   is that polygon; 1e-12), and its nodal dissipations of each cycle add up
   to 4 x the quarter's cycles.csv dissipation (1e-9).
4. The global loop (platen force against P's radial slip, closed back to its
   start) of the whole model has the area bipo computes itself, cycles.csv's
   hysteresis_area_P (1e-9 of the largest: the platen force there is the
   magnitude of the top face's reaction, here its vertical component; the
   in-plane part is round-off).
5. The whole script runs on both meshes and every figure's caption names
   its mesh.

Usage: test_punch_figures.py --bipo BIPO --work WORK
"""

import argparse
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
failures = []


def check(ok, message):
    if not ok:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)


def load_script():
    spec = importlib.util.spec_from_file_location("punch_figures", ROOT / "scripts" / "punch_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def coarse_quarter_case(name, out_dir):
    """cases/punch_<X>_converged.yaml on the level 8/4, writing to out_dir."""
    text = (ROOT / "cases" / f"punch_{name}_converged.yaml").read_text()
    text, n = re.subn(r"core: 32, ring: 32, layers: 16", "core: 8, ring: 8, layers: 4", text)
    assert n == 1, "the converged case file's cylinder map changed"
    text, n = re.subn(r"(?ms)^output:.*\Z", f"output:\n  directory: {out_dir}\n  vtk: false\n", text)
    assert n == 1
    return text


def run_cases(bipo, work):
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    files = []
    for name in "ABC":
        path = work / f"quarter_{name}.yaml"
        path.write_text(coarse_quarter_case(name, work / "results" / f"punch_{name}_converged"))
        files.append(str(path))
    subprocess.run([bipo, "run", "-q", "--jobs", "2"] + files, check=True)
    for name in "ABC":
        subprocess.run([bipo, "run", "-q", "-o", str(work / "results" / f"punch_{name}"),
                        str(ROOT / "cases" / f"punch_{name}.yaml")], check=True)
    return work / "results"


def rim_polygon_area(face):
    r = np.hypot(face["x"], face["y"])
    rim = r >= r.max() * (1 - 1e-9)
    angle = np.arctan2(face["y"][rim], face["x"][rim])
    order = np.argsort(angle)
    x, y = face["x"][rim][order], face["y"][rim][order]
    return 0.5 * abs(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)), int(rim.sum())


def check_case(pf, case, label):
    numbers = pf.derived_numbers(case)
    loops = numbers["p_loops"]
    scale = loops[0]["dissipation_from_map"]
    check(scale > 0, f"{label}: P's first-loading dissipation is {scale}")
    for c in loops:
        k = c["cycle"]
        check(abs(c["work"] - c["dissipation_from_map"]) <= 1e-9 * scale,
              f"{label}, cycle {k}: work of P's friction force {c['work']:.12g} != P's dissipation "
              f"{c['dissipation_from_map']:.12g} in the maps")
        check(abs(c["radial_work"] + c["circumferential_work"] - c["work"]) <= 1e-12 * scale,
              f"{label}, cycle {k}: radial + circumferential work != work")
    if not case.quarter:  # the whole model's platen force is bipo's applied_force of P.csv
        area = case.cycles["hysteresis_area_P"]
        for c in loops:
            check(abs(c["global_loop_area"] - area[c["cycle"]]) <= 1e-9 * area.max(),
                  f"{label}, cycle {c['cycle']}: global loop area {c['global_loop_area']:.12g} != "
                  f"cycles.csv's hysteresis_area_P {area[c['cycle']]:.12g}")
    first = numbers["first_loading"]
    check(abs(first["sum_pressure_times_area"] - first["normal_force_history_whole_punch"])
          <= 1e-12 * first["normal_force_history_whole_punch"],
          f"{label}: sum of pressure x area {first['sum_pressure_times_area']:.15g} != normal force "
          f"{first['normal_force_history_whole_punch']:.15g}")
    face = case.map(0, "loading", whole_face=True)
    polygon, rim_nodes = rim_polygon_area(face)
    check(abs(face["area"].sum() - polygon) <= 1e-12 * polygon,
          f"{label}: whole-face area {face['area'].sum():.15g} != polygon through its {rim_nodes} rim "
          f"nodes {polygon:.15g}")
    check(len(np.unique(np.round(np.stack([face["x"], face["y"]], 1), 9), axis=0)) == len(face["x"]),
          f"{label}: a node appears twice on the whole face")
    whole = numbers["whole_punch_dissipation_per_cycle"]
    for k, d in whole.items():
        end = case.map(k, "loading", whole_face=True)
        total = float(end["dissipation_cycle"].sum())
        check(abs(total - d) <= 1e-9 * whole[0],
              f"{label}, cycle {k}: nodal dissipations of the whole face {total:.12g} != {d:.12g}")
    return numbers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bipo", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    results = run_cases(args.bipo, pathlib.Path(args.work))
    pf = load_script()
    for suffix, expect_quarter in (("_converged", True), ("", False)):
        cases = pf.load_mesh(results, suffix)
        for case in cases:
            label = f"case {case.name}{suffix or ' (seed)'}"
            check(case.quarter == expect_quarter, f"{label}: quarter model detected {case.quarter}")
            check_case(pf, case, label)
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "punch_figures.py"), str(results)],
                          capture_output=True, text=True)
    check(done.returncode == 0, f"punch_figures.py failed: {done.stderr}")
    md = (results / "README.md").read_text() if (results / "README.md").exists() else ""
    captions = [line for line in md.splitlines() if line and not line.startswith(("#", "!", "Made"))]
    check(len(captions) == 8, f"expected 8 captions, got {len(captions)}")
    for caption in captions:
        check("mesh" in caption, f"a caption does not name its mesh: {caption[:80]}")
    for path in re.findall(r"\]\((figures/[^)]+)\)", md):
        check((results / path).stat().st_size > 10000, f"{path} is missing or nearly empty")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("punch_figures: every derived number agrees with its independent truth")


if __name__ == "__main__":
    main()
