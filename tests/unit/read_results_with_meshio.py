#!/usr/bin/python3
"""Reads a bipo results folder with meshio, an independent VTU reader, and
checks it against the folder's CSV files (docs/outputs.md).

For every map of maps/index.csv (a segment end), the .vtu files of the same
step must hold:
  - as field data, the step's position, load factor, cycle and step number
    of the index (and TimeValue = position, segment_end = 1, segment_kind
    +1 for a loading, -1 for an unloading segment);
  - on vtk/contact_NNNNNN.vtu, point data equal to the map's columns
    (exactly: both are the same doubles, the CSV in shortest round-trip
    form), contact_state as 32-bit integers, the pressure and tangential
    traction equal to the map's force per area, contact_state_face equal to
    the state of each face's nodes when they agree and 3 otherwise;
  - the same values on vtk/bipo_NNNNNN.vtu at the map's mesh nodes;
  - sum(pressure * area) equal to history.csv's normal_force of the step,
    and sum(area) equal to the area of the contact quads computed here.

    read_results_with_meshio.py RESULTS_FOLDER

Exits 0 when everything holds, 1 with the reasons otherwise (and when
meshio is missing: scripts/setup.sh installs it).
"""
import csv
import math
import pathlib
import sys

try:
    import meshio
    import numpy as np
except ImportError as error:
    print(f"cannot import {error.name}: run scripts/setup.sh (it installs python3-meshio "
          "and python3-numpy), then run this test again", file=sys.stderr)
    sys.exit(1)

FAILURES = []


def check(condition, what):
    if not condition:
        FAILURES.append(what)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def column(table, name):
    return np.array([float(r[name]) for r in table])


def exactly(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    check(a.shape == b.shape and np.array_equal(a, b),
          f"{what}: differ (max |a - b| = "
          f"{np.max(np.abs(a - b)) if a.shape == b.shape else 'shapes ' + str((a.shape, b.shape))})")


def close(a, b, what, rel=1e-12):
    check(math.isclose(a, b, rel_tol=rel, abs_tol=1e-300), f"{what}: {a} != {b}")


def check_field_data(mesh, index_row, map_number, what):
    fd = {k: v.ravel() for k, v in mesh.field_data.items()}
    # Every segment end has a map, in order: the k-th map ends segment k,
    # and a segment ends on a whole increment.
    expected = {"segment": map_number, "increment": round(float(index_row["position"])),
                "TimeValue": float(index_row["position"]),
                "position": float(index_row["position"]),
                "load_factor": float(index_row["load_factor"]),
                "cycle": int(index_row["cycle"]), "step": int(index_row["step"]),
                "segment_end": 1,
                "segment_kind": {"loading": 1, "unloading": -1, "hold": 0}[index_row["segment"]]}
    for name, value in expected.items():
        check(name in fd and fd[name].size == 1 and fd[name][0] == value,
              f"{what}: field data {name} = {fd.get(name)}, expected {value}")
    for name in ("cycle", "step", "increment", "segment", "segment_kind", "segment_end"):
        check(name in fd and fd[name].dtype == np.int32, f"{what}: field data {name} not Int32")


def quad_areas(points, quads):
    d1 = points[quads[:, 2]] - points[quads[:, 0]]
    d2 = points[quads[:, 3]] - points[quads[:, 1]]
    return 0.5 * np.linalg.norm(np.cross(d1, d2), axis=1)


def check_contact_face(mesh, m, history_row, what):
    pd = mesh.point_data
    exactly(mesh.points, np.column_stack([column(m, c) for c in "xyz"]), what + " points")
    for field, col in [("contact_rn", "r_n"), ("contact_f", "f"), ("contact_gap", "gap"),
                       ("contact_state", "state"), ("contact_area", "area"),
                       ("contact_pressure", "pressure"),
                       ("accumulated_slip_length", "accumulated_slip_length"),
                       ("dissipation_cycle", "dissipation_cycle"),
                       ("dissipation_accumulated", "dissipation_accumulated")]:
        exactly(pd[field], column(m, col), f"{what} {field} vs map {col}")
    exactly(pd["accumulated_slip"],
            np.column_stack([column(m, "accumulated_slip_" + c) for c in "xyz"]),
            what + " accumulated_slip")
    check(pd["contact_state"].dtype == np.int32, f"{what}: contact_state is not Int32")
    area = column(m, "area")
    exactly(column(m, "pressure"), np.where(area > 0, column(m, "r_n") / area, 0.0),
            what + " map pressure vs r_n / area")
    for c in ("t1", "t2"):
        exactly(column(m, "traction_" + c), np.where(area > 0, column(m, "r_" + c) / area, 0.0),
                f"{what} map traction_{c} vs r_{c} / area")
    # contact_traction_t and contact_rt are global, the map's local: compare
    # lengths, to round-off.
    for field, t1, t2, scale in [("contact_traction_t", "traction_t1", "traction_t2", 1.0),
                                 ("contact_rt", "r_t1", "r_t2", 1.0),
                                 ("contact_traction_t", "r_t1", "r_t2", area)]:
        expected = np.hypot(column(m, t1), column(m, t2))
        got = np.linalg.norm(pd[field], axis=1) * scale
        check(np.allclose(got, expected, rtol=1e-12, atol=1e-12 * max(1.0, expected.max())),
              f"{what}: |{field}| (x area if r_t) != |({t1}, {t2})| of the map")

    quads = mesh.cells_dict["quad"]
    states = pd["contact_state"][quads]
    expected = np.where((states == states[:, :1]).all(axis=1), states[:, 0], 3)
    face = mesh.cell_data_dict["contact_state_face"]["quad"]
    check(face.dtype == np.int32, what + ": contact_state_face is not Int32")
    exactly(face, expected, what + " contact_state_face")
    close(float(np.sum(pd["contact_pressure"] * area)), float(history_row["normal_force"]),
          what + ": sum(pressure * area) vs history normal_force")
    close(float(np.sum(area)), float(np.sum(quad_areas(mesh.points, quads))),
          what + ": sum of tributary areas vs area of the quads")


def check_volume(mesh, m, what):
    nodes = np.array([int(r["node"]) for r in m])
    pd = mesh.point_data
    for field, col in [("contact_rn", "r_n"), ("contact_pressure", "pressure"),
                       ("contact_state", "state"), ("contact_area", "area")]:
        exactly(pd[field][nodes], column(m, col), f"{what} {field} vs map {col}")
    others = np.setdiff1d(np.arange(len(mesh.points)), nodes)
    check(np.all(pd["contact_state"][others] == -1), what + ": state away from contact != -1")
    check(pd["contact_state"].dtype == np.int32, what + ": contact_state is not Int32")
    for name, values in pd.items():
        if name.startswith("set_"):
            check(values.dtype == np.uint8, f"{what}: {name} is not UInt8")


def main(folder):
    index = rows(folder / "maps" / "index.csv")
    history = {int(r["step"]): r for r in rows(folder / "history.csv")}
    check(len(index) > 0, "maps/index.csv lists no map")
    for map_number, row in enumerate(index, start=1):
        step = int(row["step"])
        m = rows(folder / "maps" / row["file"])
        for kind in ("contact", "bipo"):
            vtu = folder / "vtk" / f"{kind}_{step:06d}.vtu"
            mesh = meshio.read(vtu)
            check_field_data(mesh, row, map_number, vtu.name)
            if kind == "contact":
                check_contact_face(mesh, m, history[step], vtu.name)
            else:
                check_volume(mesh, m, vtu.name)
    for failure in FAILURES:
        print(failure, file=sys.stderr)
    if not FAILURES:
        print(f"meshio read {2 * len(index)} .vtu files of {folder}: they agree with the CSV maps")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(pathlib.Path(sys.argv[1])))
