#!/usr/bin/env python3
"""Scale study of issue 13: the whole punch cylinder against a roller run.

For each size N (--sizes, default 16 24 32 40) the script writes, in a
temporary folder, case files on the generated cylinder of the punch (radius
and height 10, core = ring = N, layers = N/2, uniform) with the program
"first loading + one cycle": to 1.0 in 5 increments, to 0.5 in 10, to 1.0
in 5 (20 increments), the top pushed as in the punch cases, no VTK output and
no probes:

- case A and case C of the punch (--cases, default A C): the friction, its
  direction, the material and the top condition are read from
  cases/punch_A.yaml and cases/punch_C.yaml (one flow-style line each);
- the ROLLER run: the same mesh, material, top condition and program with
  the bottom face on rollers (displacement z = 0 only, x and y free) instead
  of contact: one factorization and one solve per increment, the bar that
  issue 13 measures the contact solver against.

Each run is `bipo run -q` as a child process. Recorded per run: unknowns
(dofs.free) and contact nodes, wall time of the whole process, peak memory
(the child's ru_maxrss from wait4; summary.json's peak_memory_mib is kept in
the JSON), set-up time (assembly + factorization + delassus of summary.json),
contact time per increment (seconds.contact_sweeps / increments), Newton
steps (total, and the largest per increment: the steps of a cut increment's
pieces summed, from history.csv), Gauss-Seidel sweeps, cuts (rows of
history.csv beyond one per increment: each bisection adds one step), and the
ratios of wall time and peak memory to the roller run of the same N.

Runs are repeated --reps times (default 3 below N = 24, 1 from 24 up),
interleaved (roller, A, C, roller, A, C, ...), and medians are reported. A
Markdown table goes to standard output, then the growth exponents of wall
time and peak memory against the number of contact nodes m (least squares
on log-log over the sizes that completed), per case and for the roller runs.

Limits, per run: --time-limit (seconds; the child is killed and the run
reported as "timeout") and --memory-limit (default 20G; the child is killed
as soon as its resident memory passes it and the run is reported as "out of
memory"). The address space is also limited, to the memory limit plus
2 GiB, as a backstop: when malloc fails inside OpenBLAS, the library retries
forever instead of failing, so a run that stalls at that limit is reported
as "out of memory" when the time limit kills it. A size at which a run did
not complete is the last one tried for that run.

    scripts/scale_study.py [--bipo build/release/bipo] [--sizes 16 24 32 40]
                           [--cases A C] [--reps R] [--time-limit S]
                           [--memory-limit 20G] [--contact-solver auto|dense|sparse]
                           [--sparse-preconditioner auto|own_factor|stiffness_factor]
                           [--json FILE] [--check] [--wall-target 3] [--memory-target 1.5]

--contact-solver writes `solver.contact_solver` into the contact cases
(never into the roller case); without it the key is not written, and bipo
uses its default; --sparse-preconditioner writes
`solver.sparse_preconditioner` likewise. --check exits with status 1, saying which, when a run did
not complete or a ratio is above its target (issue 13: wall time within 3x,
peak memory within 1.5x of the roller run); the ctest check labelled `scale`
runs it at N = 24.
"""
import argparse
import csv
import json
import math
import os
import re
import resource
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RADIUS = 10
HEIGHT = 10
PROGRAM = """load_program:
  - {to: 1.0, increments: 5}
  - {to: 0.5, increments: 10}
  - {to: 1.0, increments: 5}
"""
INCREMENTS = 20
ROLLER = "roller"
ADDRESS_SPACE_HEADROOM = 2 << 30  # reserved but untouched: thread arenas, stacks, libraries
POLL_SECONDS = 0.05
GIB = float(1 << 30)
MIB = float(1 << 20)


def fail(message):
    sys.exit(f"scale_study.py: {message}")


def parse_bytes(text):
    match = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"expected a size such as 20G or 512M, got {text!r}")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[match[2].upper()]
    return int(float(match[1]) * scale)


# ---------------------------------------------------------------- case files


def punch_line(case, key):
    """The one flow-style line `key: ...` of cases/punch_<case>.yaml, comment cut off."""
    path = os.path.join(ROOT, "cases", f"punch_{case}.yaml")
    with open(path, encoding="utf-8") as f:
        lines = [line.split("#")[0].strip() for line in f]
    found = [line for line in lines if re.match(rf"(- )?\{{?\s*{key}\b", line) or
             line.startswith(f"{key}:")]
    if len(found) != 1:
        fail(f"{path}: expected one line with '{key}', found {len(found)}")
    return found[0]


def common_keys(case):
    """Material and top condition as in the punch case (the same in A and C)."""
    material = punch_line(case, "material")
    top = punch_line(case, "set: top")
    return material, top


def mesh_block(n):
    return (f"mesh:\n  cylinder: {{radius: {RADIUS}, height: {HEIGHT}, core: {n}, ring: {n}, "
            f"layers: {max(1, n // 2)}}}\n")


def write_case(folder, n, run, solver_keys):
    """Write the case file of `run` (A, C or roller) at size n; return its path."""
    source = "A" if run == ROLLER else run
    material, top = common_keys(source)
    text = (f'title: "scale study, {run}, N = {n}"\n' + mesh_block(n) + material + "\n" +
            "boundary_conditions:\n  " + top + "\n")
    if run == ROLLER:
        text += "  - {set: bottom, displacement: {z: 0}}\n" + PROGRAM
    else:
        text += PROGRAM + (
            "contact:\n  - name: plane\n    set: bottom\n"
            "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
            f"    {punch_line(run, 'direction')}\n    {punch_line(run, 'friction')}\n")
        if solver_keys:
            text += "solver: {" + ", ".join(f"{k}: {v}" for k, v in solver_keys.items()) + "}\n"
    text += "output: {vtk: false}\n"
    path = os.path.join(folder, f"{run}_{n}.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def contact_nodes_of(n):
    """Nodes of the bottom face of the cylinder (docs/case-file.md, `cylinder`)."""
    return (n + 1) ** 2 + 4 * n * n


# ---------------------------------------------------------------- one run


def proc_status(pid):
    """VmRSS and VmSize of a live process in bytes (0, 0 once it is gone)."""
    values = {"VmRSS": 0, "VmSize": 0}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":")[0]
                if key in values:
                    values[key] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return values["VmRSS"], values["VmSize"]


def limit_address_space(limit):
    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return preexec


def watch_child(proc, time_limit, memory_limit, address_limit):
    """Wait for the child, killing it at a limit; return why it was killed, or None."""
    pidfd = os.pidfd_open(proc.pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    start = time.perf_counter()
    killed, largest_size = None, 0
    try:
        while not poller.poll(POLL_SECONDS * 1000):
            rss, size = proc_status(proc.pid)
            largest_size = max(largest_size, size)
            if memory_limit and rss > memory_limit:
                killed = "out of memory"
            elif time_limit and time.perf_counter() - start > time_limit:
                near_limit = address_limit and largest_size > address_limit - (256 << 20)
                killed = "out of memory" if near_limit else "timeout"
            if killed:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                poller.poll()
                break
    finally:
        os.close(pidfd)
    return killed


def failure_status(returncode, stderr):
    if re.search(r"bad_alloc|out of memory|cannot allocate|CHOLMOD factorization failed",
                 stderr, re.IGNORECASE):
        return "out of memory"
    if returncode < 0:
        return f"killed by signal {-returncode}"
    return f"failed (exit {returncode})"


def run_bipo(bipo, case_path, out, limits):
    """Run `bipo run -q` on one case. Returns the raw measurements of the process."""
    time_limit, memory_limit = limits
    address_limit = memory_limit + ADDRESS_SPACE_HEADROOM if memory_limit else 0
    stderr_path = out + ".stderr"
    with open(stderr_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([bipo, "run", "-q", "-o", out, case_path],
                                stdout=subprocess.DEVNULL, stderr=err,
                                preexec_fn=limit_address_space(address_limit) if address_limit
                                else None)
        killed = watch_child(proc, time_limit, memory_limit, address_limit)
        _, wait_status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(wait_status)
    with open(stderr_path, encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    if killed:
        status = killed
    elif proc.returncode != 0:
        status = failure_status(proc.returncode, stderr)
    else:
        status = "ok"
    return {"status": status, "exit_code": proc.returncode, "wall_s": wall,
            "maxrss_mib": usage.ru_maxrss / 1024.0, "cpu_s": usage.ru_utime + usage.ru_stime,
            "stderr": stderr.strip()[-2000:]}


def history_figures(path):
    """Newton steps, sweeps and cuts from history.csv (docs/outputs.md)."""
    newton_per_increment = {}
    steps = 0
    sweeps = 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            increment = math.ceil(float(row["position"]))
            newton_per_increment[increment] = (newton_per_increment.get(increment, 0) +
                                               int(row["newton_iterations"]))
            sweeps += int(row["sweeps"])
            steps += 1
    return {"steps": steps, "increments_done": len(newton_per_increment),
            "cuts": steps - len(newton_per_increment),
            "newton_total": sum(newton_per_increment.values()),
            "newton_max_per_increment": max(newton_per_increment.values(), default=0),
            "sweeps_total": sweeps}


def summary_figures(out):
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        s = json.load(f)
    seconds = s["seconds"]
    increments = max(1.0, float(s["last_position"]))
    return {"unknowns": s["dofs"]["free"], "contact_nodes": s["mesh"]["contact_nodes"],
            "factor_nonzeros": s["linear_solver"]["factor_nonzeros"],
            "summary_status": s["status"], "summary_peak_mib": s["peak_memory_mib"],
            "setup_s": seconds["assembly"] + seconds["factorization"] + seconds["delassus"],
            "contact_s_per_increment": seconds["contact_sweeps"] / increments,
            "linear_s_per_increment": seconds["linear_solves"] / increments,
            "bipo_total_s": seconds["total"], "seconds": seconds,
            # Which contact path ran, why, and for the sparse one its linear
            # work (factorizations, GMRES iterations).
            "contact_solver": s.get("contact_solver", {})}


def measure(bipo, case_path, out, limits):
    record = run_bipo(bipo, case_path, out, limits)
    if record["status"] != "ok":
        try:  # the sizes, when the run got as far as writing its first summary
            with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
                record["unknowns"] = json.load(f)["dofs"]["free"]
        except (OSError, ValueError, KeyError):
            pass
    else:
        record.update(summary_figures(out))
        record.update(history_figures(os.path.join(out, "history.csv")))
        if record["summary_status"] != "completed" or record["increments_done"] != INCREMENTS:
            record["status"] = f"incomplete ({record['summary_status']})"
    return record


# ---------------------------------------------------------------- the study


def median_record(reps):
    """Medians of the numeric fields over the repetitions; the first failure wins."""
    failed = [r for r in reps if r["status"] != "ok"]
    if failed:
        return dict(failed[0], reps=len(reps))
    merged = dict(reps[0], reps=len(reps))
    for key, value in reps[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            merged[key] = statistics.median(r[key] for r in reps)
    return merged


def run_study(args, folder):
    runs = [ROLLER] + args.cases
    stopped = {}  # run -> the size at which it did not complete
    results = []
    for n in args.sizes:
        reps = args.reps or (3 if n < 24 else 1)
        keys = {k: v for k, v in (("contact_solver", args.contact_solver),
                                  ("sparse_preconditioner", args.sparse_preconditioner)) if v}
        paths = {run: write_case(folder, n, run, keys) for run in runs}
        raw = {run: [] for run in runs}
        for rep in range(reps):
            for run in runs:
                if run in stopped:
                    continue
                out = os.path.join(folder, f"out_{run}_{n}_{rep}")
                record = measure(args.bipo, paths[run], out, (args.time_limit, args.memory_limit))
                raw[run].append(record)
                print(f"  N = {n}, {run}, run {rep + 1}/{reps}: {record['status']}, "
                      f"{record['wall_s']:.2f} s, {record['maxrss_mib']:.0f} MiB", file=sys.stderr)
                if record["status"] != "ok":
                    stopped[run] = n
                    if record["stderr"]:
                        print(f"    bipo said: {record['stderr'].splitlines()[-1]}", file=sys.stderr)
        for run in runs:
            if raw[run]:
                results.append({"n": n, "run": run, "m": contact_nodes_of(n),
                                "median": median_record(raw[run]), "raw": raw[run]})
        add_ratios(results, n)
    return results


def add_ratios(results, n):
    rows = {r["run"]: r for r in results if r["n"] == n}
    roller = rows.get(ROLLER)
    for run, row in rows.items():
        if run == ROLLER or not roller or roller["median"]["status"] != "ok" \
                or row["median"]["status"] != "ok":
            continue
        row["ratio_wall"] = row["median"]["wall_s"] / roller["median"]["wall_s"]
        row["ratio_memory"] = row["median"]["maxrss_mib"] / roller["median"]["maxrss_mib"]


def growth_exponent(points):
    """Least-squares slope of log(y) against log(m); None below two sizes."""
    if len(points) < 2:
        return None
    xs = [math.log(m) for m, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else None


def exponents(results, runs):
    fitted = {}
    for run in runs:
        done = [r for r in results if r["run"] == run and r["median"]["status"] == "ok"]
        fitted[run] = {
            "sizes": [r["n"] for r in done],
            "wall": growth_exponent([(r["m"], r["median"]["wall_s"]) for r in done]),
            "memory": growth_exponent([(r["m"], r["median"]["maxrss_mib"]) for r in done])}
    return fitted


# ---------------------------------------------------------------- reporting


def memory_text(mib):
    return f"{mib / 1024:.2f} GiB" if mib >= 1024 else f"{mib:.0f} MiB"


def table_row(row):
    r = row["median"]
    unknowns = f"{r['unknowns']:.0f}" if "unknowns" in r else ""
    head = f"| {row['n']} | {unknowns} | {row['m']} | {row['run']} |"
    if r["status"] != "ok":
        return head + f" {r['status']} after {r['wall_s']:.1f} s | " \
            f"{memory_text(r['maxrss_mib'])} | | | | | | |"
    ratio = (f" {row['ratio_wall']:.2f} | {row['ratio_memory']:.2f} |" if "ratio_wall" in row
             else " | |")
    newton = f"{r['newton_total']:.0f} / {r['newton_max_per_increment']:.0f}"
    if r["sweeps_total"]:
        newton += f" (+{r['sweeps_total']:.0f} sweeps)"
    return (head + f" {r['wall_s']:.2f} s | {memory_text(r['maxrss_mib'])} | "
            f"{r['setup_s']:.2f} s | {r['contact_s_per_increment']:.3f} | {newton} | "
            f"{r['cuts']:.0f} |" + ratio)


def print_report(results, fitted, reps_note):
    print("| N | unknowns | contact nodes m | run | wall | peak memory | set-up | "
          "contact s / increment | Newton steps (total / max per increment) | cuts | "
          "ratio wall | ratio memory |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in results:
        print(table_row(row))
    print(f"\n{reps_note}")
    print("\nGrowth exponents against the contact nodes m (least squares on log-log):\n")
    print("| run | sizes | wall ~ m^a | peak memory ~ m^b |")
    print("|---|---|---|---|")
    for run, fit in fitted.items():
        def text(value):
            return f"{value:.2f}" if value is not None else "n/a"
        sizes = " ".join(str(n) for n in fit["sizes"]) or "none"
        print(f"| {run} | {sizes} | {text(fit['wall'])} | {text(fit['memory'])} |")


def check_targets(results, wall_target, memory_target):
    """Messages for every run that did not complete or misses a ratio target."""
    problems = []
    for row in results:
        r = row["median"]
        where = f"N = {row['n']}, {row['run']}"
        if r["status"] != "ok":
            problems.append(f"{where}: the run did not complete ({r['status']})")
            continue
        if row["run"] == ROLLER or "ratio_wall" not in row:
            continue
        if row["ratio_wall"] > wall_target:
            problems.append(f"{where}: wall time {r['wall_s']:.1f} s is {row['ratio_wall']:.2f}x "
                            f"the roller run's (target {wall_target}x)")
        if row["ratio_memory"] > memory_target:
            problems.append(f"{where}: peak memory {memory_text(r['maxrss_mib'])} is "
                            f"{row['ratio_memory']:.2f}x the roller run's (target {memory_target}x)")
    return problems


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bipo", default=os.path.join(ROOT, "build", "release", "bipo"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 24, 32, 40])
    parser.add_argument("--cases", nargs="+", default=["A", "C"], choices=["A", "B", "C"])
    parser.add_argument("--reps", type=int, default=0,
                        help="runs of each (default: 3 below N = 24, 1 from 24 up)")
    parser.add_argument("--time-limit", type=float, default=0, help="seconds per run (0: none)")
    parser.add_argument("--memory-limit", type=parse_bytes, default=parse_bytes("20G"),
                        help="resident memory per run, e.g. 20G (0: none)")
    parser.add_argument("--contact-solver", choices=["auto", "dense", "sparse"])
    parser.add_argument("--sparse-preconditioner", choices=["auto", "own_factor", "stiffness_factor"])
    parser.add_argument("--json", help="write every raw measurement to this file")
    parser.add_argument("--check", action="store_true", help="exit 1 if a ratio misses its target")
    parser.add_argument("--wall-target", type=float, default=3.0)
    parser.add_argument("--memory-target", type=float, default=1.5)
    args = parser.parse_args()
    if not os.access(args.bipo, os.X_OK):
        fail(f"{args.bipo} is not an executable (build bipo first)")
    if any(n < 1 for n in args.sizes):
        fail("--sizes: every size must be at least 1")
    args.bipo = os.path.abspath(args.bipo)
    return args


def main():
    args = parse_args()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bipo-scale-") as folder:
        results = run_study(args, folder)
    load_end = os.getloadavg()
    fitted = exponents(results, [ROLLER] + args.cases)
    solver = args.contact_solver or "not written (bipo's default)"
    print(f"bipo scale study: {args.bipo}; solver.contact_solver: {solver}; "
          f"solver.sparse_preconditioner: {args.sparse_preconditioner or 'not written'}; "
          f"load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end\n")
    print_report(results, fitted, "Medians of " + ", ".join(
        f"N = {n}: {args.reps or (3 if n < 24 else 1)}" for n in args.sizes) +
        " interleaved run(s); peak memory is the child's ru_maxrss (wait4); ratios are to the "
        "roller run of the same N.")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"bipo": args.bipo, "contact_solver": args.contact_solver,
                       "sparse_preconditioner": args.sparse_preconditioner,
                       "load_average": {"start": load_start, "end": load_end},
                       "increments": INCREMENTS, "results": results, "exponents": fitted},
                      f, indent=1)
    if args.check:
        problems = check_targets(results, args.wall_target, args.memory_target)
        if problems:
            print("\nscale check FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
            sys.exit(1)
        print("\nscale check passed: every ratio within its target")


if __name__ == "__main__":
    main()
