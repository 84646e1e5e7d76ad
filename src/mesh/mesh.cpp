#include "mesh/mesh.hpp"

#include "core/errors.hpp"

namespace bipo {

const std::vector<int>& Mesh::node_set(const std::string& name) const {
  const auto it = node_sets.find(name);
  if (it != node_sets.end()) return it->second;
  std::string names;
  for (const auto& [key, value] : node_sets) names += (names.empty() ? "" : ", ") + key;
  throw InputError("unknown node set '" + name +
                   "'; the mesh has: " + (names.empty() ? std::string("(none)") : names));
}

}  // namespace bipo
