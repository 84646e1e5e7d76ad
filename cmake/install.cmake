# What `cmake --install` puts in a prefix and how CPack packs it as a Debian
# package (docs/install.md). Included at the end of the top-level
# CMakeLists.txt, after the targets are defined.
#
#   PREFIX/bin/bipo                    the program
#   PREFIX/LIBDIR/bipo/libbipo_petsc.so  its parallel plugin (PETSc, MPI), if built
#   PREFIX/share/bipo/cases/*.yaml     the example cases ...
#   PREFIX/share/bipo/meshes/          ... and their meshes, side by side as in
#                                      the source tree, so that a case's
#                                      relative mesh path (../meshes/...) holds
#   PREFIX/share/bipo/examples/        examples/, if the tree has one
#   PREFIX/share/bipo/python/*.py      the Python helpers meant for users
#   PREFIX/share/doc/bipo/             README.md and docs/ (with its figures)

include(GNUInstallDirs)

set(BIPO_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/bipo)

# RUNPATH of the installed program: the folders of the libraries it links
# that are outside the system's default library folders (a VTK or CHOLMOD in
# their own prefix), none for Debian's own packages, and never the build
# tree. Gmsh is not linked: it is opened by soname, or by the absolute path
# found at configure time when it is outside the default folders
# (BIPO_GMSH_LIBRARY, top-level CMakeLists.txt), so it needs no RUNPATH.
set_target_properties(bipo PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)

install(TARGETS bipo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The parallel plugin (cmake/petsc_plugin.cmake), when built: in
# PREFIX/LIBDIR/bipo/, where the installed bipo looks first (relative to its
# own folder, so that the Debian package's /usr prefix works too).
if(TARGET bipo_petsc)
  install(TARGETS bipo_petsc LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/bipo)
endif()

# The folders of example inputs, copied whole with the same relative layout
# (an examples/ folder, if the tree has one, goes beside cases/ and meshes/).
foreach(folder cases meshes examples)
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${folder})
    install(DIRECTORY ${folder} DESTINATION ${BIPO_INSTALL_DATADIR}
            FILES_MATCHING PATTERN "*.yaml" PATTERN "*.msh" PATTERN "*.geo" PATTERN "*.md")
  endif()
endforeach()

# The user-facing Python helpers; a helper not (yet) in the tree is skipped.
set(BIPO_USER_SCRIPTS punch_figures.py bipo_results.py)
foreach(script ${BIPO_USER_SCRIPTS})
  if(EXISTS ${PROJECT_SOURCE_DIR}/scripts/${script})
    install(PROGRAMS scripts/${script} DESTINATION ${BIPO_INSTALL_DATADIR}/python)
  endif()
endforeach()

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# --- Debian package (cpack -G DEB in the build folder; scripts/package.sh) ---
# Version, name and summary come from project(); the shared-library
# dependencies are computed by dpkg-shlibdeps from the installed program.
# dpkg-shlibdeps cannot see the Gmsh library that bipo opens with dlopen, so
# its package is added by name: the package that owns the library found at
# configure time (dpkg-query -S), else Debian's naming rule for the soname
# libgmsh.so.X.Y (libgmshX.Y).
set(BIPO_GMSH_PACKAGE "")
find_program(BIPO_DPKG_QUERY dpkg-query)
if(BIPO_DPKG_QUERY)
  execute_process(COMMAND ${BIPO_DPKG_QUERY} -S ${GMSH_LIBRARY_DIR}/${GMSH_SONAME}
                  OUTPUT_VARIABLE BIPO_GMSH_OWNER ERROR_QUIET RESULT_VARIABLE BIPO_GMSH_OWNER_FAILED)
  if(NOT BIPO_GMSH_OWNER_FAILED AND BIPO_GMSH_OWNER MATCHES "^([a-z0-9][a-z0-9.+-]+)(:[a-z0-9]+)?: ")
    set(BIPO_GMSH_PACKAGE ${CMAKE_MATCH_1})
  endif()
endif()
if(NOT BIPO_GMSH_PACKAGE AND GMSH_SONAME MATCHES "^libgmsh\\.so\\.([0-9]+\\.[0-9]+)$")
  set(BIPO_GMSH_PACKAGE libgmsh${CMAKE_MATCH_1})
endif()

set(CPACK_PACKAGE_NAME bipo)
set(CPACK_PACKAGE_VENDOR "bipo maintainers")
# The Maintainer field: set BIPO_PACKAGE_MAINTAINER to the person or team who
# distributes the package (the default's address is a placeholder).
set(BIPO_PACKAGE_MAINTAINER "bipo maintainers <maintainers@bipo.invalid>"
    CACHE STRING "Maintainer field of the Debian package: Name <address>")
set(CPACK_PACKAGE_CONTACT "${BIPO_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "3D finite-element solver for frictional contact on rigid planes")
set(CPACK_PACKAGE_DESCRIPTION
    "bipo solves quasi-static, small-strain, linear-elastic problems on hexahedral meshes in\n\
frictional contact with rigid planes: orthotropic Coulomb friction with a non-associated\n\
sliding rule, solved with de Saxce's bipotential method and checked at every step by\n\
the law's certificate. Cases are YAML files; results are VTK (ParaView), CSV and JSON.\n\
Ships the cyclic punch cases A, B and C, their mesh, the documentation and the Python\n\
figure script.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${BIPO_GMSH_PACKAGE}")
# The figure script needs numpy and matplotlib; bipo itself does not.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-numpy, python3-matplotlib")
set(CPACK_STRIP_FILES ON)
include(CPack)
