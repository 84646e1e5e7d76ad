#!/usr/bin/env python3
"""Load the results of a bipo run (or of a sweep) into numpy arrays.

numpy only (Debian's python3-numpy). Every CSV file of a results folder
(docs/outputs.md) becomes a numpy structured array whose field names are the
file's column names, exactly as written (``history["normal_force"]``,
``history["reaction_top_z"]``); numeric columns are float64, the others
(``segment``, ``file``, a sweep's ``value``...) strings. Columns added by
later versions of bipo simply appear as more fields.

    import sys; sys.path.insert(0, "scripts")   # or copy this file next to yours
    import bipo_results

    r = bipo_results.load("results/punch_A")
    r.summary["status"]                       # summary.json as a dict
    r.history["normal_force"][-1]             # history.csv
    r.cycles["dissipation"]                   # cycles.csv, one row per cycle
    r.probes["P"]["radial_slip"]              # probes/P.csv
    m = r.maps[-1]                            # maps/, in step order
    m.step, m.segment, m.data["r_n"].sum()    # one contact map

    s = bipo_results.load_sweep("results/punch_A_mu")   # bipo run --sweep
    s.index["value"], s.index["normal_force_end"]        # index.csv
    s.results[0].history                                 # each value's folder

Run as a script, it prints a short description of a folder:

    /usr/bin/python3 scripts/bipo_results.py results/punch_A
"""

from __future__ import annotations

import csv
import json
import pathlib
import re
import sys
from dataclasses import dataclass, field

import numpy as np

__all__ = ["read_csv", "load", "load_sweep", "Results", "ContactMap", "Sweep"]

# Columns that are text whatever they hold (a sweep's value "0.1" stays the
# text given on the command line; a folder "000_0" is not the number 0).
TEXT_COLUMNS = {"key", "value", "folder", "status", "setup_shared", "segment", "file"}
# The numbers bipo writes (C++ to_chars, JSON), nothing looser: Python's
# float() would also take "1_000" or " 1".
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|nan)$")


def read_csv(path) -> np.ndarray:
    """A CSV file of bipo as a structured array, one field per column.

    A column whose every value is a decimal number is float64 (an empty
    value is NaN); any other column, and the text columns of TEXT_COLUMNS,
    are string columns. A file with a header and no
    rows gives an array of length 0 with the header's fields.
    """
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: empty file, expected a CSV header")
        rows = [row for row in reader if row]
    columns = []
    for k, name in enumerate(header):
        texts = [row[k] if k < len(row) else "" for row in rows]
        if name not in TEXT_COLUMNS and all(t == "" or NUMBER.match(t) for t in texts):
            values = np.array([float(t) if t != "" else np.nan for t in texts], dtype=np.float64)
        else:
            width = max([1] + [len(t) for t in texts])
            values = np.array(texts, dtype=f"<U{width}")
        columns.append((name, values))
    dtype = [(name, values.dtype) for name, values in columns]
    table = np.empty(len(rows), dtype=dtype)
    for name, values in columns:
        table[name] = values
    return table


@dataclass
class ContactMap:
    """One map of maps/: the contact face at the end of a load segment."""

    step: int
    position: float
    load_factor: float
    cycle: int
    segment: str  # loading, unloading or hold
    file: pathlib.Path
    data: np.ndarray  # one row per contact node (columns of docs/outputs.md)


@dataclass
class Results:
    """The results folder of one run (docs/outputs.md)."""

    folder: pathlib.Path
    summary: dict
    history: np.ndarray
    cycles: np.ndarray | None
    probes: dict = field(default_factory=dict)  # name -> structured array
    maps: list = field(default_factory=list)  # ContactMap, in step order

    def map_at(self, step: int) -> ContactMap:
        """The map written at converged step `step` (KeyError if none)."""
        for m in self.maps:
            if m.step == step:
                return m
        raise KeyError(f"{self.folder}: no map at step {step}")

    def history_at(self, step: int) -> np.void:
        """The row of history.csv of converged step `step`."""
        rows = self.history[self.history["step"] == step]
        if len(rows) != 1:
            raise KeyError(f"{self.folder}: no history row for step {step}")
        return rows[0]


def _history_file(folder: pathlib.Path, name: str) -> pathlib.Path | None:
    """`name`, or `name`.partial for a run that stopped (docs/outputs.md)."""
    for candidate in (folder / name, folder / (name + ".partial")):
        if candidate.is_file():
            return candidate
    return None


def load(folder) -> Results:
    """Everything a run wrote to `folder` but the VTK files (read those with
    meshio or ParaView). A history that ended early (`history.csv.partial`)
    is read too: check ``summary["status"]``."""
    folder = pathlib.Path(folder)
    with open(folder / "summary.json", encoding="utf-8") as f:
        summary = json.load(f)
    history_file = _history_file(folder, "history.csv")
    if history_file is None:
        raise FileNotFoundError(f"{folder}: no history.csv (nor history.csv.partial)")
    cycles_file = folder / "cycles.csv"
    results = Results(
        folder=folder,
        summary=summary,
        history=read_csv(history_file),
        cycles=read_csv(cycles_file) if cycles_file.is_file() else None,
    )
    probes = folder / "probes"
    if probes.is_dir():
        names = {p.name.removesuffix(".partial").removesuffix(".csv") for p in probes.iterdir()}
        for name in sorted(names):
            probe_file = _history_file(probes, name + ".csv")
            if probe_file is not None:
                results.probes[name] = read_csv(probe_file)
    index = folder / "maps" / "index.csv"
    if index.is_file():
        for row in read_csv(index):
            file = folder / "maps" / str(row["file"])
            results.maps.append(
                ContactMap(
                    step=int(row["step"]),
                    position=float(row["position"]),
                    load_factor=float(row["load_factor"]),
                    cycle=int(row["cycle"]),
                    segment=str(row["segment"]),
                    file=file,
                    data=read_csv(file),
                )
            )
        results.maps.sort(key=lambda m: m.step)
    return results


@dataclass
class Sweep:
    """The folder of `bipo run CASE --sweep KEY=V1,V2,...`."""

    folder: pathlib.Path
    index: np.ndarray  # index.csv: key, value, folder, status, headline numbers
    results: list  # Results of each value with a summary, in the index's order (None if absent)


def load_sweep(folder) -> Sweep:
    """A sweep's index.csv and the results of each of its values."""
    folder = pathlib.Path(folder)
    index = read_csv(folder / "index.csv")
    results = []
    for name in index["folder"]:
        sub = folder / str(name)
        results.append(load(sub) if (sub / "summary.json").is_file() else None)
    return Sweep(folder=folder, index=index, results=results)


def _describe(folder: pathlib.Path) -> None:
    if (folder / "index.csv").is_file() and not (folder / "summary.json").is_file():
        s = load_sweep(folder)
        print(f"sweep of {s.index['key'][0]} over {len(s.index)} values")
        for row in s.index:
            print(f"  {row['value']}: {row['folder']} {row['status']}, "
                  f"normal force at the end {row['normal_force_end']}")
        return
    r = load(folder)
    print(f"{folder}: {r.summary.get('status')}, {len(r.history)} steps, "
          f"{len(r.maps)} maps, probes {sorted(r.probes)}")
    print(f"  history columns: {', '.join(r.history.dtype.names)}")
    if r.cycles is not None:
        for row in r.cycles:
            print(f"  cycle {int(row['cycle'])}: dissipation {row['dissipation']}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bipo_results.py RESULTS_FOLDER")
    _describe(pathlib.Path(sys.argv[1]))
