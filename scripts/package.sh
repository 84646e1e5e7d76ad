#!/usr/bin/env bash
# Builds bipo's Debian package (docs/install.md, "Debian package"): installs
# what is missing (scripts/setup.sh), configures a Release build without the
# tests and benchmarks in build/package, builds the program and runs CPack's
# DEB generator. Prints the package's path, its control fields and contents.
#
#   scripts/package.sh                                 # build/package/bipo_<version>_<arch>.deb
#   scripts/package.sh -DBIPO_PACKAGE_MAINTAINER="Name <address>"   # extra arguments go to cmake
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cmake -S . -B build/package -DCMAKE_BUILD_TYPE=Release -DBIPO_BUILD_TESTS=OFF \
  -DBIPO_BUILD_BENCH=OFF "$@"
cmake --build build/package --parallel 2
rm -f build/package/bipo_*.deb
(cd build/package && cpack -G DEB)
deb=$(ls build/package/bipo_*.deb)
dpkg-deb --info "$deb"
dpkg-deb --contents "$deb"
echo "package.sh: wrote $deb (install: apt install ./$deb; remove: apt remove bipo)"
