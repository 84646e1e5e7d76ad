#include "mesh/mesh.hpp"

#include "core/errors.hpp"

namespace bipo {

ElementKind Mesh::element_kind(int e) const {
  if (e < n_hexes()) return ElementKind::hexahedron;
  if (e < n_hexes() + n_wedges()) return ElementKind::wedge;
  return ElementKind::tetrahedron;
}

std::span<const int> Mesh::element_nodes(int e) const {
  if (e < n_hexes()) return hexes[static_cast<std::size_t>(e)];
  e -= n_hexes();
  if (e < n_wedges()) return wedges[static_cast<std::size_t>(e)];
  return tets[static_cast<std::size_t>(e - n_wedges())];
}

std::size_t Mesh::element_tag(int e) const {
  const auto tag = [](const std::vector<std::size_t>& tags, int local, std::size_t count) {
    return tags.size() == count ? tags[static_cast<std::size_t>(local)]
                                : static_cast<std::size_t>(local) + 1;
  };
  if (e < n_hexes()) return tag(hex_tags, e, hexes.size());
  e -= n_hexes();
  if (e < n_wedges()) return tag(wedge_tags, e, wedges.size());
  return tag(tet_tags, e - n_wedges(), tets.size());
}

std::string describe_elements(const Mesh& mesh) {
  std::string text;
  const auto add = [&text](int count, const char* plural) {
    if (count == 0) return;
    text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + plural;
  };
  add(mesh.n_hexes(), "hexahedra");
  add(mesh.n_wedges(), "wedges");
  add(mesh.n_tets(), "tetrahedra");
  return text.empty() ? std::string("0 hexahedra") : text;
}

const char* element_kind_name(ElementKind kind) {
  switch (kind) {
    case ElementKind::hexahedron:
      return "hexahedron";
    case ElementKind::wedge:
      return "wedge";
    case ElementKind::tetrahedron:
      return "tetrahedron";
  }
  return "element";
}

const std::vector<int>& Mesh::node_set(const std::string& name) const {
  const auto it = node_sets.find(name);
  if (it != node_sets.end()) return it->second;
  std::string names;
  for (const auto& [key, value] : node_sets) names += (names.empty() ? "" : ", ") + key;
  throw InputError("unknown node set '" + name +
                   "'; the mesh has: " + (names.empty() ? std::string("(none)") : names));
}

}  // namespace bipo
