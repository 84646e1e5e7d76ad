#!/usr/bin/env bash
# Installs the Debian 12 packages that bipo's build, tests and figures need,
# and only those that are missing. Idempotent: when everything is installed
# it runs no apt-get at all and returns at once.
#
#   scripts/setup.sh            # as root (or with sudo available)
#   scripts/setup.sh --list     # print the package list and exit
#   scripts/setup.sh --fuzz     # the packages of the fuzz preset instead
#                               # (clang and its fuzzer runtime: scripts/fuzz.sh)
set -euo pipefail

packages=(
  # build
  cmake g++ make pkg-config
  # libraries (CMakeLists.txt: Eigen, CHOLMOD, Gmsh SDK, VTK, yaml-cpp,
  # nlohmann-json, CLI11; OpenMP comes with g++)
  libeigen3-dev libsuitesparse-dev libgmsh-dev libvtk9-dev libyaml-cpp-dev
  nlohmann-json3-dev libcli11-dev
  # optimized BLAS/LAPACK: becomes the system libblas.so.3/liblapack.so.3, used
  # by CHOLMOD's supernodal kernels and the contact solver's dense LU (the
  # reference BLAS that libsuitesparse-dev pulls in is several times slower)
  libopenblas-dev
  # the parallel plugin (cmake/petsc_plugin.cmake): PETSc with MUMPS and
  # hypre, and Open MPI with mpirun; without it bipo builds and runs serially
  libpetsc-real-dev
  # tests and benchmarks
  libgtest-dev libbenchmark-dev
  # figures and scripts
  python3 python3-numpy python3-matplotlib
  # reading results in Python (the VTU files' test reads them with meshio) and
  # meshing Gmsh geometries (the command and its Python module: the docs'
  # Example 2 and the tetrahedral cases)
  python3-meshio gmsh python3-gmsh
  # formatting check (scripts/check_format.sh)
  clang-format
  # the Debian package (scripts/package.sh): dpkg-shlibdeps computes its
  # library dependencies
  dpkg-dev
)

if [[ "${1:-}" == "--fuzz" ]]; then
  # clang with libFuzzer and the sanitizer runtimes, and clang's OpenMP
  packages=(clang libclang-rt-14-dev libomp-dev)
  shift
fi

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup.sh: dpkg-query not found: this script is for Debian 12 (bookworm)." >&2
  echo "Install the equivalents of: ${packages[*]}" >&2
  exit 1
fi

# One dpkg-query for all: it prints "<package> <status>" for the packages it
# knows (unknown ones only give a message on stderr).
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null |
  awk '$2 == "install" && $3 == "ok" && $4 == "installed" {print $1}' || true)
missing=()
for p in "${packages[@]}"; do
  grep -qxF -- "$p" <<<"$installed" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup.sh: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "setup.sh: installing ${#missing[@]} missing package(s): ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "setup.sh: not root and no sudo: install them as root, then run this again." >&2
  exit 1
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
echo "setup.sh: done"
