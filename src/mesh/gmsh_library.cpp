#include "mesh/gmsh_library.hpp"

#include <dlfcn.h>

#include "core/errors.hpp"

#ifndef BIPO_GMSH_LIBRARY
#error "BIPO_GMSH_LIBRARY (the Gmsh library's soname or absolute path) comes from CMakeLists.txt"
#endif

namespace bipo {

namespace {

[[noreturn]] void fail(const std::string& purpose, const char* reason) {
  throw SystemError(purpose + " needs the Gmsh library " + BIPO_GMSH_LIBRARY +
                    ", which could not be loaded: " + (reason != nullptr ? reason : "no reason"));
}

template <class Function>
void bind(void* library, const char* symbol, Function& function, const std::string& purpose) {
  dlerror();  // a null symbol is an error only if dlerror says so afterwards
  void* address = dlsym(library, symbol);
  const char* error = dlerror();
  if (address == nullptr || error != nullptr) fail(purpose, error);
  function = reinterpret_cast<Function>(address);
}

// A failure leaves the library open: unloading Gmsh would run its static
// destructors for nothing, and a retry gets the same handle back.
GmshApi load(const std::string& purpose) {
  // RTLD_LOCAL: Gmsh's symbols (and those of its dependencies) stay out of
  // the global scope, so they never replace what bipo's own libraries bind.
  void* library = dlopen(BIPO_GMSH_LIBRARY, RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) fail(purpose, dlerror());
  GmshApi api{};
  bind(library, "gmshFree", api.free, purpose);
  bind(library, "gmshInitialize", api.initialize, purpose);
  bind(library, "gmshFinalize", api.finalize, purpose);
  bind(library, "gmshWrite", api.write, purpose);
  bind(library, "gmshOptionSetNumber", api.option_set_number, purpose);
  bind(library, "gmshModelAdd", api.model_add, purpose);
  bind(library, "gmshModelAddDiscreteEntity", api.model_add_discrete_entity, purpose);
  bind(library, "gmshModelAddPhysicalGroup", api.model_add_physical_group, purpose);
  bind(library, "gmshModelSetPhysicalName", api.model_set_physical_name, purpose);
  bind(library, "gmshModelMeshAddNodes", api.model_mesh_add_nodes, purpose);
  bind(library, "gmshModelMeshAddElementsByType", api.model_mesh_add_elements_by_type, purpose);
  bind(library, "gmshLoggerGetLastError", api.logger_get_last_error, purpose);
  return api;
}

}  // namespace

const char* gmsh_library_name() {
  return BIPO_GMSH_LIBRARY;
}

const GmshApi& gmsh_api(const std::string& purpose) {
  // A throwing initializer leaves the static uninitialized: the next call
  // tries again (and C++ serializes the attempts).
  static const GmshApi api = load(purpose);
  return api;
}

}  // namespace bipo
