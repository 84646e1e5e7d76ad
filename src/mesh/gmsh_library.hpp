// Owns loading the Gmsh SDK at run time. bipo links no Gmsh library: linking
// it made every start load Gmsh and about 80 other libraries (CAD kernel, GUI
// toolkit, X11; docs/performance.md "Start-up") for the one command that
// writes .msh files. The library is opened on first use, by the exact name
// fixed when bipo was built (its soname, found by the dynamic loader's own
// search, or an absolute path when it was built against a Gmsh outside that
// search): never a path from a case file, the current folder or bipo's
// arguments. It stays loaded until the process ends. This is the only file
// of bipo that calls dlopen or dlsym; gmsh_io is the only user.
#pragma once

#include <string>

extern "C" {
#include <gmshc.h>  // the C API: plain C symbols, bound by name below
}

namespace bipo {

/// The functions of Gmsh's C API (gmshc.h) that bipo calls. Each reports a
/// failure through its last argument (`ierr` non-zero); the message is then
/// Gmsh's last error (logger_get_last_error, freed with free).
struct GmshApi {
  decltype(&::gmshFree) free;
  decltype(&::gmshInitialize) initialize;
  decltype(&::gmshFinalize) finalize;
  decltype(&::gmshWrite) write;
  decltype(&::gmshOptionSetNumber) option_set_number;
  decltype(&::gmshModelAdd) model_add;
  decltype(&::gmshModelAddDiscreteEntity) model_add_discrete_entity;
  decltype(&::gmshModelAddPhysicalGroup) model_add_physical_group;
  decltype(&::gmshModelSetPhysicalName) model_set_physical_name;
  decltype(&::gmshModelMeshAddNodes) model_mesh_add_nodes;
  decltype(&::gmshModelMeshAddElementsByType) model_mesh_add_elements_by_type;
  decltype(&::gmshLoggerGetLastError) logger_get_last_error;
};

/// The Gmsh library bipo loads: a soname ("libgmsh.so.4.8") or an absolute
/// path, fixed when bipo was built.
[[nodiscard]] const char* gmsh_library_name();

/// Gmsh's C API, loaded on the first call (thread-safe) and kept for the
/// process's lifetime. Throws SystemError naming the library, the loader's
/// reason and `purpose` (what the user asked for that needs Gmsh) when the
/// library cannot be loaded or lacks one of the functions; a later call
/// tries again.
[[nodiscard]] const GmshApi& gmsh_api(const std::string& purpose);

}  // namespace bipo
