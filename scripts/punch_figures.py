#!/usr/bin/python3
"""Figures of the cyclic punch (cases A, B, C) from bipo's CSV results, on the
converged mesh and on the seed mesh side by side.

Usage: scripts/punch_figures.py RESULTS_DIR

RESULTS_DIR must hold the folders punch_A, punch_B, punch_C (the seed mesh,
`bipo run cases/punch_<X>.yaml`) and punch_A_converged, punch_B_converged,
punch_C_converged (the quarter model on the converged graded level 32/16,
`bipo run cases/punch_<X>_converged.yaml`), each with cycles.csv,
history.csv, probes/P.csv and maps/. A mesh whose three folders are all
missing is left out (the figures then say so); a partial set is an error.

Writes PNG files into RESULTS_DIR/figures, the derived numbers into
RESULTS_DIR/figures/numbers.json, and an index, RESULTS_DIR/index.html (and
the same list as RESULTS_DIR/README.md), with a caption per figure that names
the mesh. Needs Debian's python3-numpy and python3-matplotlib (run with the
system python3). Reads CSV files only (no VTK reader).

What the figures show (docs/punch.md says why):

- Whole-punch totals: a quarter model's totals (history.csv, cycles.csv) are
  multiplied by 4; its maps are mirrored to the whole face (x -> -x,
  y -> -y; the solution is mirror symmetric), the nodes on the symmetry
  planes once, with their whole-face tributary area (twice the quarter's).
- f in traction units: f / area = |t_t|_mu - p [MPa], with the tributary
  area of the maps CSV; one colour scale for every case and both meshes.
- The local loop at P: P's friction force against P's slip. The work of P's
  friction force over a cycle, -sum r_t . du_t over its steps, is P's
  dissipation of the cycle (docs/physics.md section 3.1: D_i = -r_t . du_t); its
  radial part is the area of the plotted loop (radial force against radial
  slip), the rest is the circumferential part.
- The global loop: the platen's vertical force against P's radial slip. Its
  area is NOT P's dissipation (the platen force does no work on P's slip).
"""

import csv
import html
import json
import pathlib
import sys

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.tri as mtri
except ImportError as error:
    sys.exit(f"punch_figures: {error}: install Debian's python3-numpy and python3-matplotlib "
             "and run this script with the system python3 (/usr/bin/python3)")

CASES = {
    "A": "A: isotropic (mu = p = 0.2)",
    "B": "B: anisotropic, associated (mu = 0.30/0.15, p = mu)",
    "C": "C: anisotropic, non-associated (mu = 0.30/0.15, p = 0.05/0.20)",
}
# Folder suffix -> the mesh's name in titles and captions.
MESHES = {
    "_converged": "converged mesh (quarter model mirrored, graded O-grid 32/16)",
    "": "seed mesh (punch.msh; NOT converged: later cycles' dissipation up to ~75x too large)",
}
SHORT = {"_converged": "converged 32/16", "": "seed mesh"}
MAP_CYCLES = (1, 3, 4, 6)  # end of the unloading of these cycles (the paper's Fig. 3)
COLOURS = {"A": "tab:blue", "B": "tab:orange", "C": "tab:green"}
STATE_OPEN, STATE_STICK, STATE_SLIP = 0, 1, 2
# Map columns that are sums over the faces around a node (nodal forces,
# dissipations, tributary area): a quarter model's node on a symmetry plane
# holds its quarter's share of them.
EXTENSIVE = ("f", "r_n", "r_t1", "r_t2", "dissipation_cycle", "dissipation_accumulated", "area")


def fail(message):
    sys.exit(f"punch_figures: {message}")


def read_table(path):
    """A CSV of numbers as a dict of numpy arrays (text columns kept as strings)."""
    if not path.exists():
        fail(f"missing {path} (run the case first: bipo run cases/<case>.yaml)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail(f"{path} has no rows")
    table = {}
    for key in rows[0]:
        values = [r[key] for r in rows]
        try:
            table[key] = np.array([float(v) for v in values])
        except ValueError:
            table[key] = np.array(values)
    return table


def is_quarter(face):
    """True when the contact face is the quarter x >= 0, y >= 0 (a quarter model)."""
    scale = max(float(np.abs(face["x"]).max()), float(np.abs(face["y"]).max()), 1e-300)
    return bool(face["x"].min() >= -1e-9 * scale and face["y"].min() >= -1e-9 * scale)


def mirror_to_whole_face(face):
    """The map of a quarter model mirrored to the whole face (x -> -x, y -> -y).

    Scalars (f, r_n, state, dissipations) are invariant under the mirrors; the
    friction force and slip components along a mirrored axis change sign. A
    node on a symmetry plane appears once, with its whole-face tributary area:
    the quarter's area of such a node is the part on the quarter's side only,
    so its mirror image's is added (twice it, four times at the centre), and
    so are its nodal forces and dissipations (the quarter's node carries the
    quarter's share); tractions, force / area, are unchanged."""
    scale = max(float(np.abs(face["x"]).max()), float(np.abs(face["y"]).max()))
    on_x0 = np.abs(face["x"]) <= 1e-9 * scale
    on_y0 = np.abs(face["y"]) <= 1e-9 * scale
    odd_in_x = ("x", "r_t1", "slip_increment_t1", "accumulated_slip_x")
    odd_in_y = ("y", "r_t2", "slip_increment_t2", "accumulated_slip_y")
    parts = []
    for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
        keep = np.ones(len(face["x"]), dtype=bool)
        if sx < 0:
            keep &= ~on_x0
        if sy < 0:
            keep &= ~on_y0
        part = {}
        for key, values in face.items():
            if values.dtype.kind not in "fi":
                part[key] = values[keep]
                continue
            v = values[keep].copy()
            if sx < 0 and key in odd_in_x:
                v = -v
            if sy < 0 and key in odd_in_y:
                v = -v
            part[key] = v
        multiplicity = (1 + on_x0[keep]) * (1 + on_y0[keep])
        for key in EXTENSIVE:
            if key in part:
                part[key] = part[key] * multiplicity
        parts.append(part)
    return {key: np.concatenate([p[key] for p in parts]) for key in face}


def traction_f(face):
    """f per tributary area, |t_t|_mu - p [force/area]: f is a nodal force."""
    return face["f"] / face["area"]


class CaseResults:
    def __init__(self, folder, name, suffix):
        self.name, self.folder, self.suffix = name, folder, suffix
        for required in ("cycles.csv", "history.csv", "probes/P.csv", "maps/index.csv"):
            if not (folder / required).exists():
                partial = folder / (required + ".partial")
                why = " (only a .partial file: the run stopped early)" if partial.exists() else ""
                fail(f"missing {folder / required}{why}")
        self.cycles = read_table(folder / "cycles.csv")
        self.history = read_table(folder / "history.csv")
        self.p = read_table(folder / "probes" / "P.csv")
        self.map_index = read_table(folder / "maps" / "index.csv")
        self._maps = {}
        first = self.map(0, "loading")
        if first is None:
            fail(f"{folder}: no map at the end of the first loading")
        self.quarter = is_quarter(first)
        self.copies = 4.0 if self.quarter else 1.0  # whole punch / this model

    def map(self, cycle, segment, whole_face=False):
        """The map at the end of the cycle's last segment of that kind, or None."""
        idx = self.map_index
        hits = [i for i in range(len(idx["step"]))
                if int(idx["cycle"][i]) == cycle and idx["segment"][i] == segment]
        if not hits:
            return None
        name = str(idx["file"][hits[-1]])
        if name not in self._maps:  # read once: every figure and number uses the same maps
            self._maps[name] = read_table(self.folder / "maps" / name)
        face = self._maps[name]
        if whole_face and is_quarter(face):
            face = mirror_to_whole_face(face)
        return face

    def platen_force(self):
        """Vertical force of the platen (the boundary condition on the set
        `top`) on the whole punch, per step [N]; without such a column, the
        magnitude of the first boundary condition's reaction (P.csv)."""
        if "reaction_top_z" in self.history:
            return -self.copies * self.history["reaction_top_z"]
        return self.copies * self.p["applied_force"]


def p_node(case):
    """Mesh node index of P: the node of the first loading's map whose
    accumulated slip and normal force are P.csv's at that step (the probe
    follows that node; its reference position is not in P.csv)."""
    face = case.map(0, "loading")
    step = int(case.cycles["step_end_loading"][0])
    row = int(np.nonzero(case.p["step"] == step)[0][0])
    mismatch = (np.abs(face["accumulated_slip_x"] - case.p["accumulated_slip_x"][row])
                + np.abs(face["accumulated_slip_y"] - case.p["accumulated_slip_y"][row])
                + np.abs(face["r_n"] - case.p["normal_force"][row]) / max(float(face["r_n"].max()), 1e-300))
    best = int(np.argmin(mismatch))
    return int(face["node"][best]), np.array([face["x"][best], face["y"][best]])


def node_value(face, node, key):
    return float(face[key][np.nonzero(face["node"] == node)[0][0]])


def p_loops(case):
    """P's loops, per cycle: the work of P's friction force (radial and
    circumferential parts, bipo's rule and the trapezoidal rule of the drawn
    polygon), P's dissipation from the maps, and the global loop's area."""
    p = case.p
    slip = np.stack([p["accumulated_slip_x"], p["accumulated_slip_y"]], axis=1)
    du = np.diff(np.vstack([np.zeros(2), slip]), axis=0)
    force = np.stack([p["friction_force_x"], p["friction_force_y"]], axis=1)
    node, position = p_node(case)
    e_r = position / np.linalg.norm(position)
    e_c = np.array([-e_r[1], e_r[0]])
    platen = case.platen_force()
    s_r = np.concatenate([[0.0], np.cumsum(du @ e_r)])
    f_r = np.concatenate([[0.0], -(force @ e_r)])  # the force resisting outward slip
    s_c = np.concatenate([[0.0], np.cumsum(du @ e_c)])
    f_c = np.concatenate([[0.0], -(force @ e_c)])
    out = []
    for k in range(int(p["cycle"].max()) + 1):
        steps = np.nonzero(p["cycle"] == k)[0]
        work = -np.einsum("ij,ij->i", force[steps], du[steps])  # bipo's D_i, step by step
        radial = -(force[steps] @ e_r) * (du[steps] @ e_r)
        circ = -(force[steps] @ e_c) * (du[steps] @ e_c)
        j = np.concatenate([[steps[0]], steps + 1])  # polygon vertices (0 = the start)
        trapezoid = float(np.sum(0.5 * (f_r[j[1:]] + f_r[j[:-1]]) * np.diff(s_r[j])))
        glob, x = np.concatenate([[0.0], platen])[j], s_r[j]
        # Area of the polygon closed back to its start (shoelace), as cycles.csv's hysteresis_area_P.
        glob_area = float(0.5 * abs(np.sum(x * np.roll(glob, -1) - np.roll(x, -1) * glob)))
        end = case.map(k, "loading")
        from_map = node_value(end, node, "dissipation_cycle") if end is not None else None
        out.append({"cycle": k, "work": float(work.sum()), "radial_work": float(radial.sum()),
                    "circumferential_work": float(circ.sum()),
                    "radial_loop_area_trapezoid": trapezoid,
                    "trapezoid_bound": float(np.sum(0.5 * np.abs(np.diff(f_r[j]) * np.diff(s_r[j])))),
                    "dissipation_from_map": from_map, "global_loop_area": glob_area})
    return {"s_r": s_r, "f_r": f_r, "s_c": s_c, "f_c": f_c, "platen": np.concatenate([[0.0], platen]),
            "cycle": np.concatenate([[0], p["cycle"]]), "per_cycle": out}


def derived_numbers(case):
    """The numbers the figures show, for numbers.json and the test."""
    per_cycle = {int(c): case.copies * float(d)
                 for c, d in zip(case.cycles["cycle"], case.cycles["dissipation"])}
    first = case.map(0, "loading", whole_face=True)
    pressure_total = float(np.sum(first["r_n"] / first["area"] * first["area"]))
    step = int(case.cycles["step_end_loading"][0])
    row = int(np.nonzero(case.history["step"] == step)[0][0])
    return {"whole_punch_dissipation_per_cycle": per_cycle,
            "model": "quarter, mirrored" if case.quarter else "whole",
            "first_loading": {"step": step,
                              "sum_pressure_times_area": pressure_total,
                              "normal_force_history_whole_punch":
                                  case.copies * float(case.history["normal_force"][row]),
                              "contact_nodes_whole_face": int(len(first["x"]))},
            "maps": {f"{segment} {cycle}": zones(face) for cycle, segment in
                     [(0, "loading")] + [(c, "unloading") for c in range(1, 7)]
                     if (face := case.map(cycle, segment, whole_face=True)) is not None},
            "p_loops": p_loops(case)["per_cycle"]}


def load_mesh(results, suffix):
    folders = {name: results / f"punch_{name}{suffix}" for name in CASES}
    present = [f for f in folders.values() if f.is_dir()]
    if not present:
        return None
    if len(present) != len(folders):
        missing = [str(f) for f in folders.values() if not f.is_dir()]
        fail(f"missing {', '.join(missing)} (run the three cases: bipo run "
             f"cases/punch_{{A,B,C}}{suffix}.yaml)")
    return [CaseResults(folder, name, suffix) for name, folder in folders.items()]


def named(suffix, meshes):
    """The mesh's name with its count of contact nodes on the whole face."""
    n = len(meshes[suffix][0].map(0, "loading", whole_face=True)["x"])
    return f"{MESHES[suffix]}, {n} contact nodes on the whole face"


def f_scale(meshes):
    """One colour range of f / area for every map drawn: [low, 0], low the 1st
    percentile over all maps (the rim's singular pressure would otherwise take
    the whole scale); lower values are drawn in the lowest colour."""
    values = []
    for cases in meshes.values():
        for case in cases:
            for cycle, segment in [(0, "loading")] + [(c, "unloading") for c in MAP_CYCLES]:
                face = case.map(cycle, segment)
                if face is not None:
                    values.append(traction_f(face))
    return float(np.percentile(np.concatenate(values), 1.0))


def zones(face):
    """Stick/slip/open counts and the stick share of the face's area."""
    state, area = face["state"].astype(int), face["area"]
    centre = int(np.argmin(np.hypot(face["x"], face["y"])))
    return {"n_stick": int((state == STATE_STICK).sum()), "n_slip": int((state == STATE_SLIP).sum()),
            "n_open": int((state == STATE_OPEN).sum()),
            "stick_area_fraction": float(area[state == STATE_STICK].sum() / area.sum()),
            "centre_sticks": bool(state[centre] == STATE_STICK),
            "min_f_traction": float(traction_f(face).min())}


def draw_face(ax, face, low, title):
    ax.set_aspect("equal")
    ax.set_xticks([-10, 0, 10])
    ax.set_yticks([-10, 0, 10])
    if face is None:
        ax.set_title(f"{title}: not computed", fontsize=9)
        ax.set_axis_off()
        return None
    x, y, state = face["x"], face["y"], face["state"].astype(int)
    tf = traction_f(face)
    tri = mtri.Triangulation(x, y)
    mappable = ax.tripcolor(tri, np.clip(tf, low, 0.0), shading="gouraud", cmap="viridis",
                            vmin=low, vmax=0.0)
    slip = state == STATE_SLIP
    ax.plot(x[slip], y[slip], ".", ms=0.7 if len(x) > 2000 else 2.6, color="red")
    open_ = state == STATE_OPEN
    if open_.any():
        ax.plot(x[open_], y[open_], "s", ms=2.5, mfc="0.6", mec="0.3")
    z = zones(face)
    ax.set_title(f"{title}\nstick {100 * z['stick_area_fraction']:.0f} % of the area; "
                 f"{z['n_open']} open nodes", fontsize=9)
    return mappable


def figure_f_maps(name, meshes, low, out):
    rows = [s for s in MESHES if s in meshes]
    columns = [(0, "loading", "end of first loading")] + \
              [(c, "unloading", f"end of unloading, cycle {c}") for c in MAP_CYCLES]
    fig, axes = plt.subplots(len(rows), len(columns), figsize=(19, 4.4 * len(rows) + 0.6),
                             constrained_layout=True, squeeze=False)
    mappable = None
    for r, suffix in enumerate(rows):
        case = next(c for c in meshes[suffix] if c.name == name)
        for ax, (cycle, segment, title) in zip(axes[r], columns):
            m = draw_face(ax, case.map(cycle, segment, whole_face=True), low, title)
            mappable = m or mappable
        axes[r, 0].set_ylabel(f"{SHORT[suffix]}\ny [mm]  (t1 = x, t2 = y)")
    for ax in axes[-1]:
        ax.set_xlabel("x [mm]")
    bar = fig.colorbar(mappable, ax=axes, shrink=0.8, pad=0.01, extend="min")
    bar.set_label("f / area = |t_t|_mu - p  [MPa]  (< 0 stick; 0 slip)")
    meshes_named = "; ".join(f"row {i + 1}: {named(s, meshes)}" for i, s in enumerate(rows))
    fig.suptitle(f"Case {CASES[name]}: f per tributary area on the contact face (red dots: "
                 f"slipping nodes; grey squares: open)\n{meshes_named}", fontsize=10)
    path = out / f"punch_{name}_f_maps.png"
    fig.savefig(path, dpi=60)
    plt.close(fig)
    return path, (f"Case {name}: f / area (|t_t|_mu - p, MPa) on the whole contact face at the end "
                  f"of the first loading and of the unloadings of cycles 1, 3, 4 and 6; "
                  f"{meshes_named}. Quarter-model maps mirrored to the whole face. One colour "
                  f"scale for every case and mesh (down to {low:.0f} MPa, the 1st percentile; "
                  f"the singular rim goes lower). Slip nodes red, open grey.")


def draw_loops(ax_radial, ax_circ, ax_global, loops):
    """P's local loops (radial and circumferential parts of its friction
    force against the same part of its slip) and the global loop, cycles 1-6."""
    cmap = plt.get_cmap("tab10")
    cyc = loops["cycle"]
    series = ((ax_radial, 1e3 * loops["s_r"], loops["f_r"]),
              (ax_circ, 1e3 * loops["s_c"], loops["f_c"]),
              (ax_global, 1e3 * loops["s_r"], 1e-3 * loops["platen"]))
    for k in range(1, int(cyc.max()) + 1):
        idx = np.nonzero(cyc == k)[0]
        idx = np.concatenate([[idx[0] - 1], idx])
        for ax, x, y in series:
            ax.plot(x[idx], y[idx], "-o", ms=2, color=cmap(k - 1), label=f"cycle {k}")
    per = loops["per_cycle"]
    c1, cl = per[1], per[-1]
    ax_radial.set_title(f"LOCAL, radial: P's friction force vs P's slip\nwork: cycle 1 "
                        f"{c1['radial_work']:.3g}, cycle {cl['cycle']} {cl['radial_work']:.2g} N mm",
                        fontsize=9)
    ax_radial.set_xlabel("radial slip of P [µm]")
    ax_radial.set_ylabel("-r_t . e_r of P [N]")
    ax_circ.set_title(f"LOCAL, circumferential: work cycle 1 {c1['circumferential_work']:.2g}, "
                      f"cycle {cl['cycle']} {cl['circumferential_work']:.2g} N mm\nradial + circ. = "
                      f"P's dissipation: {c1['work']:.3g}, {cl['work']:.2g} N mm", fontsize=9)
    ax_circ.set_xlabel("circumferential slip of P [µm]")
    ax_circ.set_ylabel("-r_t . e_theta of P [N]")
    ax_global.set_title(f"GLOBAL: platen force vs radial slip of P\narea (cycle 1 "
                        f"{c1['global_loop_area']:.3g} N mm) is NOT P's dissipation", fontsize=9)
    ax_global.set_xlabel("radial slip of P [µm]")
    ax_global.set_ylabel("platen force, whole punch [kN]")
    ax_radial.legend(fontsize=7, ncol=2)


def figure_p(name, meshes, loops, out):
    rows = [s for s in MESHES if s in meshes]
    fig, axes = plt.subplots(len(rows), 5, figsize=(23, 4.6 * len(rows) + 0.9),
                             constrained_layout=True, squeeze=False)
    for r, suffix in enumerate(rows):
        case = next(c for c in meshes[suffix] if c.name == name)
        lp = loops[(suffix, name)]
        draw_loops(axes[r, 0], axes[r, 1], axes[r, 2], lp)
        p = case.p
        ax = axes[r, 3]
        ux, uy = 1e3 * p["ux"], 1e3 * p["uy"]
        ax.plot(np.concatenate([[0.0], ux]), np.concatenate([[0.0], uy]), "-", color="0.6", lw=0.8)
        sc = ax.scatter(ux, uy, c=p["cycle"], cmap="plasma", s=10, zorder=3)
        fig.colorbar(sc, ax=ax, label="cycle")
        ax.set_xlabel("u_x of P [µm]")
        ax.set_ylabel("u_y of P [µm]")
        ax.set_title("trajectory of P in the plane (start at 0)", fontsize=9)
        ax = axes[r, 4]
        ax.plot(p["step"], 1e3 * p["radial_slip"], "-o", ms=2, label="radial (accumulated)")
        sticks = p["state"] != STATE_SLIP
        ax.plot(p["step"][sticks], 1e3 * p["radial_slip"][sticks], "s", mfc="none", mec="k",
                ms=4, label="P sticks")
        ax.set_xlabel("increment")
        ax.set_ylabel("slip of P [µm]")
        ax.set_title("slip of P over the history", fontsize=9)
        ax.legend(fontsize=8)
        axes[r, 0].annotate(SHORT[suffix], (0.02, 0.02), xycoords="axes fraction", fontsize=10,
                            weight="bold")
    meshes_named = "; ".join(f"row {i + 1}: {named(s, meshes)}" for i, s in enumerate(rows))
    fig.suptitle(f"Case {CASES[name]}: point P (mid-radius, 45 degrees)\n{meshes_named}", fontsize=10)
    path = out / f"punch_{name}_P.png"
    fig.savefig(path, dpi=60)
    plt.close(fig)
    return path, (f"Case {name}, point P; {meshes_named}. First two panels: the local loops, P's "
                  f"friction force against P's slip, radial and circumferential parts (the force "
                  f"resisting the slip): the work of the two over a cycle is P's dissipation of the "
                  f"cycle. Third: the global loop, the platen force against P's radial slip: its "
                  f"area is not P's dissipation (the platen's force does no work on P's slip). Then "
                  f"P's trajectory and its radial slip over the history.")


def figure_dissipation(meshes, out):
    fig, axes = plt.subplots(1, 3, figsize=(18, 4.8), constrained_layout=True)
    width = 0.27
    for ax, suffix in zip(axes[:2], MESHES):
        ax.set_title(f"{SHORT[suffix]}: dissipation per cycle" if suffix in meshes
                     else f"{SHORT[suffix]}: not computed", fontsize=10)
        for j, case in enumerate(meshes.get(suffix, [])):
            c = case.cycles["cycle"]
            ax.bar(c + (j - 1) * width, case.copies * case.cycles["dissipation"], width,
                   color=COLOURS[case.name], label=CASES[case.name])
        ax.set_xlabel("cycle (0: first loading)")
        ax.set_ylabel("dissipation of the cycle, whole punch [N mm]")
        if suffix in meshes:
            ax.legend(fontsize=7)
    ax = axes[2]
    for suffix, style in (("_converged", "-o"), ("", "--s")):
        for case in meshes.get(suffix, []):
            c, d = case.cycles["cycle"], case.copies * case.cycles["dissipation"]
            ax.semilogy(c[1:], d[1:], style, color=COLOURS[case.name],
                        label=f"{case.name}, {SHORT[suffix]}")
    ratios = []
    for suffix in MESHES:
        if suffix in meshes:
            d = {c.name: c.copies * c.cycles["dissipation"][-1] for c in meshes[suffix]}
            ratios.append(f"{SHORT[suffix]}: C/A = {d['C'] / d['A']:.2g}, B/A = {d['B'] / d['A']:.2g}")
    ax.set_title("cycles 1-6, log scale (solid: converged; dashed: seed)\nlast cycle: "
                 + "; ".join(ratios), fontsize=9)
    ax.set_xlabel("cycle")
    ax.set_ylabel("[N mm]")
    ax.legend(fontsize=7, ncol=2)
    fig.suptitle("Frictional dissipation per cycle, whole punch: converged mesh (quarter model, "
                 "graded 32/16, x 4) and seed mesh (not converged)", fontsize=11)
    path = out / "punch_dissipation.png"
    fig.savefig(path, dpi=70)
    plt.close(fig)
    return path, ("Dissipation per cycle of the whole punch for A, B and C: left, the converged mesh "
                  "(quarter model on the graded level 32/16, four times the quarter's); middle, the "
                  "seed mesh, whose later cycles are far from converged (cycle 6 of A: 20.9 N mm "
                  "against 0.28); right, cycles 1-6 of both on a log scale with the last cycle's "
                  "ratios C/A and B/A.")


def figure_hysteresis(meshes, loops, out):
    rows = [(s, kind) for s in MESHES if s in meshes for kind in ("local", "global")]
    fig, axes = plt.subplots(len(rows), 3, figsize=(15, 3.6 * len(rows) + 0.6),
                             constrained_layout=True, squeeze=False)
    for r, (suffix, kind) in enumerate(rows):
        for ax, case in zip(axes[r], meshes[suffix]):
            lp = loops[(suffix, case.name)]
            s = 1e3 * lp["s_r"]
            y = lp["f_r"] if kind == "local" else 1e-3 * lp["platen"]
            ax.plot(s, y, "-", color=COLOURS[case.name], lw=0.8)
            ax.plot(s, y, "o", color=COLOURS[case.name], ms=1.5)
            if kind == "local":
                total = sum(c["work"] for c in lp["per_cycle"])
                ax.set_title(f"{case.name}, {SHORT[suffix]}: LOCAL, P's friction force; "
                             f"P's dissipation over the history {total:.3g} N mm", fontsize=8)
                ax.set_ylabel("-r_t . e_r of P [N]")
            else:
                ax.set_title(f"{case.name}, {SHORT[suffix]}: GLOBAL, platen force "
                             f"(area is not P's dissipation)", fontsize=8)
                ax.set_ylabel("platen force [kN]")
            ax.set_xlabel("radial slip of P [µm]")
    fig.suptitle("Force vs radial slip of P over the whole history, A, B, C: local (P's friction "
                 "force) and global (platen force), converged and seed mesh", fontsize=11)
    path = out / "punch_hysteresis_ABC.png"
    fig.savefig(path, dpi=60)
    plt.close(fig)
    meshes_named = " and ".join(named(s, meshes) for s in MESHES if s in meshes)
    return path, (f"Force vs radial slip of P, whole history, A, B, C, on the {meshes_named}, each "
                  f"mesh in two rows: the local loop (P's friction force, radial part; the work of "
                  f"the friction force over a cycle is P's dissipation) and the global one (platen "
                  f"force; its area is not P's dissipation).")


def write_index(results, entries):
    rows = []
    md = ["# Cyclic punch: figures", "",
          "Made by `scripts/punch_figures.py` from the CSV results in this folder; "
          "the numbers behind them: `figures/numbers.json`.", ""]
    for path, caption in entries:
        rel = path.relative_to(results).as_posix()
        rows.append(f'<figure><img src="{html.escape(rel)}" style="max-width:100%">'
                    f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        md += [f"![{path.stem}]({rel})", "", caption, ""]
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bipo: cyclic punch</title>"
            "<style>body{font-family:sans-serif;max-width:1400px;margin:auto}"
            "figure{margin:2em 0}figcaption{font-size:1.05em}</style></head><body>\n"
            "<h1>Cyclic punch, cases A, B and C</h1>\n" + "\n".join(rows) + "\n</body></html>\n")
    (results / "index.html").write_text(page)
    (results / "README.md").write_text("\n".join(md))


def main(argv):
    if len(argv) != 2:
        fail("usage: punch_figures.py RESULTS_DIR (the folder holding punch_{A,B,C} and "
             "punch_{A,B,C}_converged)")
    results = pathlib.Path(argv[1])
    if not results.is_dir():
        fail(f"results folder {results} does not exist")
    meshes = {s: c for s in MESHES if (c := load_mesh(results, s)) is not None}
    if not meshes:
        fail(f"{results} holds neither punch_A, punch_B, punch_C nor their _converged runs")
    out = results / "figures"
    out.mkdir(exist_ok=True)
    loops = {(s, c.name): p_loops(c) for s, cases in meshes.items() for c in cases}
    numbers = {SHORT[s]: {c.name: derived_numbers(c) for c in cases} for s, cases in meshes.items()}
    (out / "numbers.json").write_text(json.dumps(numbers, indent=1) + "\n")
    low = f_scale(meshes)
    entries = [figure_dissipation(meshes, out)]
    for name in CASES:
        entries.append(figure_f_maps(name, meshes, low, out))
        entries.append(figure_p(name, meshes, loops, out))
    entries.append(figure_hysteresis(meshes, loops, out))
    write_index(results, entries)
    print(f"punch_figures: {len(entries)} figures in {out}; index: {results / 'index.html'}")


if __name__ == "__main__":
    main(sys.argv)
