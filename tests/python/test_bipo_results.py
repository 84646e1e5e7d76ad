#!/usr/bin/env python3
"""scripts/bipo_results.py on a small real run and a sweep (ctest
Python.BipoResults*, a few seconds).

The loaded arrays are checked against identities that hold between files
that bipo writes independently of each other, and against physics:
- the sum over the contact nodes of a map's r_n is history's normal_force at
  that step;
- a cycle's dissipation in cycles.csv is the sum over the nodes of
  dissipation_cycle in the map at the cycle's last segment end, and the
  cycles add up to summary.json's dissipation_total and to history's
  accumulated_dissipation;
- the probe P's normal force is the r_n of the map row nearest its point;
- a frictionless value of a sweep dissipates exactly nothing;
- a sweep's value gives the same history as the case run alone with --set,
  and its index holds each folder's headline numbers.

    test_bipo_results.py --bipo BIPO --work FOLDER
"""

import argparse
import pathlib
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
import bipo_results  # noqa: E402

CASE = """\
mesh: {cylinder: {core: 2, ring: 2, layers: 2}}
material: {young: 1000, poisson: 0.3}
load_program:
  - {to: 1.0, increments: 2}
  - repeat: 2
    segments:
      - {to: 0.5, increments: 2}
      - {to: 1.0, increments: 2}
boundary_conditions:
  - {set: top, displacement: {x: 0, y: 0, z: -0.01}}
contact:
  - set: bottom
    plane: {point: [0, 0, 0], normal: [0, 0, 1]}
    friction: {mu: 0.2}
probes:
  - {name: P, point: [0.5, 0.5, 0], point_p: true}
"""

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def close(a, b, rel, what):
    check(abs(a - b) <= rel * max(abs(a), abs(b), 1e-300), f"{what}: {a!r} != {b!r}")


def bipo(exe, work, *arguments):
    run = subprocess.run([exe, "run", "--quiet", *arguments], cwd=work, capture_output=True,
                         text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"bipo {' '.join(arguments)} failed ({run.returncode}): {run.stderr}")


def check_run(r, label):
    """The identities between the files of one results folder."""
    check(r.summary["status"] == "completed", f"{label}: status {r.summary['status']}")
    check(len(r.history) == r.summary["steps_converged"], f"{label}: history rows")
    check(len(r.maps) == 5, f"{label}: {len(r.maps)} maps, expected 5 segment ends")
    for m in r.maps:
        close(m.data["r_n"].sum(), r.history_at(m.step)["normal_force"], 1e-12,
              f"{label}: step {m.step}: sum of map r_n vs history normal_force")
    for row in r.cycles:
        cycle = int(row["cycle"])
        last = max((m for m in r.maps if m.cycle == cycle), key=lambda m: m.step)
        close(last.data["dissipation_cycle"].sum(), row["dissipation"], 1e-10,
              f"{label}: cycle {cycle}: cycles.csv dissipation vs sum of the map's")
    close(r.cycles["dissipation"].sum(), r.summary["dissipation_total"], 1e-12,
          f"{label}: cycles vs summary dissipation_total")
    close(r.history["accumulated_dissipation"][-1], r.summary["dissipation_total"], 1e-12,
          f"{label}: history vs summary dissipation")
    probe = r.probes["P"]
    for m in r.maps:
        d = np.hypot(m.data["x"] - 0.5, m.data["y"] - 0.5)
        node_rn = m.data["r_n"][np.argmin(d)]
        close(probe[probe["step"] == m.step]["normal_force"][0], node_rn, 0.0,
              f"{label}: step {m.step}: probe P normal_force vs its map row")


def without_seconds(history):
    names = [n for n in history.dtype.names if n != "seconds"]
    return history[names]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bipo", required=True)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    args = parser.parse_args()
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "case.yaml").write_text(CASE, encoding="utf-8")

    bipo(args.bipo, work, "case.yaml", "-o", "alone", "--set", "contact[0].friction.mu=0.3")
    alone = bipo_results.load(work / "alone")
    check(alone.summary["overrides"] == ["contact[0].friction.mu=0.3"], "overrides in summary")
    check_run(alone, "alone")
    check(alone.summary["dissipation_total"] > 0, "the frictional run dissipates")
    check(int(alone.cycles["cycle"].max()) == 2, "cycles 0, 1, 2")

    bipo(args.bipo, work, "case.yaml", "-o", "sweep", "--sweep", "contact[0].friction.mu=0,0.3")
    sweep = bipo_results.load_sweep(work / "sweep")
    index = sweep.index
    check(list(index["value"]) == ["0", "0.3"], f"index values {list(index['value'])}")
    check(list(index["folder"]) == ["000_0", "001_0.3"], f"index folders {list(index['folder'])}")
    check(list(index["status"]) == ["completed", "completed"], "sweep statuses")
    check(list(index["setup_shared"]) == ["false", "true"], "the second value shares the set-up")
    for i, r in enumerate(sweep.results):
        check_run(r, f"sweep value {index['value'][i]}")
        close(index["normal_force_end"][i], r.history["normal_force"][-1], 0.0,
              f"index normal_force_end of value {i}")
        for row in r.cycles:
            column = f"dissipation_cycle_{int(row['cycle'])}"
            close(index[column][i], row["dissipation"], 0.0, f"index {column} of value {i}")
    frictionless = sweep.results[0]
    check(frictionless.summary["dissipation_total"] == 0.0, "mu = 0 dissipates nothing")
    check(np.all(frictionless.history["dissipation"] == 0.0), "mu = 0: no step dissipates")
    check(np.array_equal(without_seconds(sweep.results[1].history), without_seconds(alone.history)),
          "the sweep's mu = 0.3 gives the history of the run alone with --set")
    check(sweep.results[1].summary["overrides"] == ["contact[0].friction.mu=0.3"],
          "the swept value is listed in the summary")

    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    shutil.rmtree(work, ignore_errors=True)
    print("all checks passed")


if __name__ == "__main__":
    main()
