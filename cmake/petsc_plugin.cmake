# The parallel plugin libbipo_petsc.so (issue 14; docs/install.md): MPI and
# the PETSc linear solver, opened by bipo at run time (src/parallel/
# parallel_runtime.cpp) only when a run asks for PETSc or mpirun starts it.
# bipo itself never links PETSc or MPI. Built when PETSc (pkg-config PETSc)
# and MPI are found, unless BIPO_WITH_PETSC is OFF; without them bipo builds
# as before and says, when a run asks for PETSc, that it was built without.
# Included by the top-level CMakeLists.txt after bipo_core is defined.

option(BIPO_WITH_PETSC "Build the PETSc/MPI plugin when PETSc and MPI are found" ON)
include(GNUInstallDirs)

set(BIPO_PETSC_PLUGIN_BUILD_PATH "")
if(BIPO_WITH_PETSC)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(PETSC QUIET IMPORTED_TARGET PETSc)
  endif()
  # The C API, found through the C++ compiler (bipo enables C++ only).
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI QUIET COMPONENTS CXX)
  if(PETSC_FOUND AND MPI_CXX_FOUND)
    # The plugin compiles the LinearSolver base class in: it implements
    # that interface and, opened RTLD_LOCAL, cannot bind bipo's copy.
    add_library(bipo_petsc MODULE ${BIPO_PETSC_PLUGIN_SOURCES}
                ${PROJECT_SOURCE_DIR}/src/solver/linear_solver.cpp)
    target_include_directories(bipo_petsc PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_compile_options(bipo_petsc PRIVATE ${BIPO_WARNINGS})
    target_link_libraries(bipo_petsc PRIVATE PkgConfig::PETSC MPI::MPI_CXX Eigen3::Eigen
                                             ${CMAKE_DL_LIBS})
    # One exported symbol (bipo_parallel_plugin_api); no library prefix
    # games: the file is libbipo_petsc.so in the build and install trees.
    set_target_properties(bipo_petsc PROPERTIES CXX_VISIBILITY_PRESET hidden
                          VISIBILITY_INLINES_HIDDEN ON INSTALL_RPATH_USE_LINK_PATH TRUE)
    set(BIPO_PETSC_PLUGIN_BUILD_PATH $<TARGET_FILE:bipo_petsc>)
    add_dependencies(bipo bipo_petsc)
    message(STATUS "PETSc ${PETSC_VERSION} and MPI found: building the parallel plugin libbipo_petsc.so")
  else()
    message(STATUS "PETSc (pkg-config PETSc) or MPI not found: bipo is built without its parallel "
                   "plugin (solver.linear: petsc and mpirun runs need it; docs/install.md)")
  endif()
endif()

# Where bipo looks for the plugin: PREFIX/LIBDIR/bipo/ relative to
# PREFIX/BINDIR/bipo when installed, else the build tree's file.
file(RELATIVE_PATH BIPO_PETSC_PLUGIN_INSTALL_PATH /prefix/${CMAKE_INSTALL_BINDIR}
     /prefix/${CMAKE_INSTALL_LIBDIR}/bipo/libbipo_petsc.so)
set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/parallel/parallel_runtime.cpp APPEND PROPERTY
             COMPILE_DEFINITIONS BIPO_PETSC_PLUGIN_BUILD_PATH="${BIPO_PETSC_PLUGIN_BUILD_PATH}"
                                 BIPO_PETSC_PLUGIN_INSTALL_PATH="${BIPO_PETSC_PLUGIN_INSTALL_PATH}")
