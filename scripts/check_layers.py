#!/usr/bin/env python3
"""Checks that no #include of bipo's own headers goes up the pipeline.

The layers of src/ (docs/architecture.md, "The folders"), each allowed to
include itself and the layers listed for it:

    core         -
    model        core
    mesh         core, model
    fem          core, model, mesh
    contact/law  core                (the per-node law: Eigen and errors only)
    contact      core, contact/law
    parallel     core, model, mesh, fem, and solver/linear_solver.hpp only (the interface
                 its PETSc backend implements; src/parallel/plugin/ is the plugin)
    solver       core, model, mesh, fem, contact, contact/law, parallel
    io           everything above except app
    app          everything

apps/ may include anything. Exits non-zero listing every include that breaks
a rule; changes nothing.

    scripts/check_layers.py
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BELOW = {
    "core": set(),
    "model": {"core"},
    "mesh": {"core", "model"},
    "fem": {"core", "model", "mesh"},
    "contact/law": {"core"},
    "contact": {"core", "contact/law"},
    "parallel": {"core", "model", "mesh", "fem"},
    "solver": {"core", "model", "mesh", "fem", "contact", "contact/law", "parallel"},
    "io": {"core", "model", "mesh", "fem", "contact", "contact/law", "solver", "parallel"},
    "app": {"core", "model", "mesh", "fem", "contact", "contact/law", "solver", "parallel", "io"},
}
# Single headers a layer may include beyond its list.
ALSO = {"parallel": {"solver/linear_solver.hpp"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(relative: str) -> str | None:
    """The layer of a path relative to src/ ("contact/law/cone.hpp" -> "contact/law")."""
    parts = relative.split("/")
    if len(parts) < 2:
        return None  # a generated or top-level header (version.hpp)
    if parts[0] == "contact" and parts[1] == "law" and len(parts) > 2:
        return "contact/law"
    return parts[0]


def main() -> int:
    src = ROOT / "src"
    problems = []
    files = sorted(p for p in src.rglob("*") if p.suffix in (".hpp", ".cpp"))
    for path in files:
        layer = layer_of(path.relative_to(src).as_posix())
        if layer not in BELOW:
            problems.append(f"{path.relative_to(ROOT)}: in no known layer (add it to {__file__})")
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = layer_of(match.group(1))
            if target is None or target == layer or target in BELOW[layer] or \
                    match.group(1) in ALSO.get(layer, set()):
                continue
            problems.append(f"{path.relative_to(ROOT)}:{number}: {layer}/ includes "
                            f"{match.group(1)}, which is above it")
    if problems:
        print(f"check_layers.py: {len(problems)} include(s) go up the pipeline:")
        print("\n".join("  " + p for p in problems))
        return 1
    print(f"check_layers.py: {len(files)} files, every include goes down the pipeline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
