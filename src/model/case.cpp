#include "model/case.hpp"

namespace bipo {

std::string located(const Case& c, const std::string& key) {
  // append() rather than operator+ chains: GCC 12 reports a false -Wrestrict
  // on those in this translation unit.
  std::string out = c.source.string();
  if (const auto it = c.key_lines.find(key); it != c.key_lines.end())
    out.append(":").append(std::to_string(it->second));
  return out.append(": ").append(key).append(": ");
}

}  // namespace bipo
