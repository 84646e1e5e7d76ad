#!/usr/bin/env python3
"""The install, checked as a user would use it (ctest Install.*).

Installs the build tree into a fresh prefix with `cmake --install`, then,
from a working directory outside the prefix and the source tree:

- `PREFIX/bin/bipo --version` must print the project's version (given by
  CMake from project(VERSION));
- the layout of docs/install.md must be there (program, cases, their mesh,
  docs, Python helper), and the program must carry no RUNPATH into the
  build or source tree;
- `PREFIX/bin/bipo run PREFIX/share/bipo/cases/punch_A.yaml -o DIR` must
  succeed, find the case's mesh through the installed relative path, write
  the documented result files, write nothing into the prefix, and give the
  dissipation of every cycle of the stored reference
  tests/regression/data/punch_A.csv (1e-6 relative, the regression test's
  tolerance);
- `PREFIX/bin/bipo mesh cylinder` must write a .msh file (this loads the
  Gmsh library at run time) with the node and element counts of the O-grid:
  (core+1)^2 + 4 core ring nodes and core^2 + 4 core ring hexahedra per layer.

Usage: check_install.py --cmake CMAKE --build-dir DIR --source-dir DIR
                        --version X.Y.Z --reference CSV --work DIR
"""

import argparse
import csv
import json
import os
import pathlib
import shutil
import subprocess
import sys

RESULT_FILES = ("summary.json", "history.csv", "cycles.csv", "probes/P.csv", "bipo.pvd",
                "contact.pvd", "maps/index.csv")
LAYOUT = ("bin/bipo", "share/bipo/cases/punch_A.yaml", "share/bipo/meshes/punch.msh",
          "share/bipo/python/punch_figures.py", "share/doc/bipo/README.md",
          "share/doc/bipo/docs/physics.md", "share/doc/bipo/docs/install.md",
          "share/doc/bipo/docs/case-file.md")


def fail(message):
    sys.exit(f"check_install: FAIL: {message}")


def run(command, cwd):
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(map(str, command))} exited with {result.returncode}\n"
             f"{result.stdout}{result.stderr}")
    return result.stdout


def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def check_runpath(bipo, forbidden):
    readelf = shutil.which("readelf")
    if readelf is None:
        print("check_install: readelf not found, RUNPATH not checked")
        return
    dynamic = run([readelf, "-d", bipo], cwd=bipo.parent)
    for line in dynamic.splitlines():
        if "RPATH" in line or "RUNPATH" in line:
            for folder in forbidden:
                if str(folder) in line:
                    fail(f"the installed bipo's {line.strip()} points into {folder}")


def reference_dissipation(path):
    values = {}
    with open(path, newline="") as file:
        for row in csv.reader(line for line in file if not line.startswith("#")):
            if len(row) == 2 and row[0].startswith("cycle") and row[0].endswith(".dissipation"):
                values[int(row[0][len("cycle"):-len(".dissipation")])] = float(row[1])
    if not values:
        fail(f"no cycleK.dissipation in {path}")
    return values


def check_run(prefix, elsewhere, reference):
    out = elsewhere / "punch_A"
    before = files_under(prefix)
    run([prefix / "bin/bipo", "run", "-q", prefix / "share/bipo/cases/punch_A.yaml", "-o", out],
        cwd=elsewhere)
    if files_under(prefix) != before:
        fail("the run wrote into the install prefix")
    for name in RESULT_FILES:
        if not (out / name).is_file():
            fail(f"the run did not write {name}")
    summary = json.loads((out / "summary.json").read_text())
    if summary.get("status") != "completed" or summary.get("steps_converged") != 95:
        fail(f"summary.json: status {summary.get('status')}, "
             f"steps_converged {summary.get('steps_converged')} (expected completed, 95)")
    expected = reference_dissipation(reference)
    with open(out / "cycles.csv", newline="") as file:
        got = {int(row["cycle"]): float(row["dissipation"]) for row in csv.DictReader(file)}
    if sorted(got) != sorted(expected):
        fail(f"cycles.csv has cycles {sorted(got)}, the reference {sorted(expected)}")
    for cycle, value in expected.items():
        if abs(got[cycle] - value) > 1e-6 * abs(value):
            fail(f"cycle {cycle}: dissipation {got[cycle]!r}, reference {value!r}")
    print(f"check_install: installed punch_A ran from {elsewhere}: "
          f"{len(expected)} cycle dissipations match the reference")


def msh_counts(path):
    """Numbers of nodes and of 8-node hexahedra (Gmsh type 5) of a Gmsh 4.1
    ASCII file (its face elements of the named sets are not counted)."""
    lines = path.read_text().splitlines()
    if lines[:2] != ["$MeshFormat", "4.1 0 8"]:
        fail(f"{path} does not start as a Gmsh 4.1 ASCII file: {lines[:2]}")
    nodes = int(lines[lines.index("$Nodes") + 1].split()[1])
    at = lines.index("$Elements") + 1
    blocks = int(lines[at].split()[0])
    at += 1
    hexahedra = 0
    for _ in range(blocks):
        _, _, element_type, count = map(int, lines[at].split())
        if element_type == 5:
            hexahedra += count
        at += 1 + count
    return nodes, hexahedra


def check_mesh_writer(prefix, elsewhere):
    core, ring, layers = 2, 3, 2
    path = elsewhere / "small.msh"
    run([prefix / "bin/bipo", "mesh", "cylinder", "--output", path, "--core", str(core),
         "--ring", str(ring), "--layers", str(layers)], cwd=elsewhere)
    per_layer_nodes = (core + 1) ** 2 + 4 * core * ring
    per_layer_elements = core**2 + 4 * core * ring
    expected = (per_layer_nodes * (layers + 1), per_layer_elements * layers)
    got = msh_counts(path)
    if got != expected:
        fail(f"bipo mesh cylinder wrote (nodes, elements) = {got}, expected {expected}")
    print(f"check_install: the installed bipo wrote a .msh file through Gmsh: {got}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--build-dir", required=True, type=pathlib.Path)
    parser.add_argument("--source-dir", required=True, type=pathlib.Path)
    parser.add_argument("--version", required=True)
    parser.add_argument("--reference", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    args = parser.parse_args()

    work = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    prefix, elsewhere = work / "prefix", work / "elsewhere"
    elsewhere.mkdir(parents=True)
    run([args.cmake, "--install", args.build_dir.resolve(), "--prefix", prefix], cwd=work)
    for name in LAYOUT:
        if not (prefix / name).is_file():
            fail(f"{name} is not installed")
    bipo = prefix / "bin/bipo"
    if not os.access(bipo, os.X_OK):
        fail(f"{bipo} is not executable")
    check_runpath(bipo, [args.build_dir.resolve(), args.source_dir.resolve()])

    version = run([bipo, "--version"], cwd=elsewhere).strip()
    if version != f"bipo {args.version}":
        fail(f"bipo --version printed '{version}', the project's version is {args.version}")
    print(f"check_install: {version}")

    check_run(prefix, elsewhere, args.reference)
    check_mesh_writer(prefix, elsewhere)
    shutil.rmtree(work)
    print("check_install: OK")


if __name__ == "__main__":
    main()
