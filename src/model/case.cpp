#include "model/case.hpp"

namespace bipo {

std::string CaseOverride::named() const {
  constexpr std::size_t kLongest = 80;
  std::string out = option;
  out.append(" ").append(key).append("=");
  if (value.size() <= kLongest) return out.append(value);
  // Cut at a character boundary (the value is UTF-8, checked when read).
  std::size_t end = kLongest;
  while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xc0u) == 0x80u) --end;
  return out.append(value, 0, end).append("...");
}

const LoadProgram& cycle_program(const Case& c) {
  const auto own = [&c](const std::optional<LoadProgram>& p) -> const LoadProgram& {
    return p ? *p : c.program;
  };
  const auto i = static_cast<std::size_t>(c.cycles.index);
  switch (c.cycles.kind) {
    case CycleProgramRef::Kind::contact_motion:
      return own(c.contacts.at(i).motion_program);
    case CycleProgramRef::Kind::boundary_condition:
      return own(c.dirichlet.at(i).program);
    case CycleProgramRef::Kind::load:
      return own(c.loads.at(i).program);
    case CycleProgramRef::Kind::load_program:
      break;
  }
  return c.program;
}

bool is_within_key(const std::string& key, const std::string& scope) {
  return key.compare(0, scope.size(), scope) == 0 &&
         (key.size() == scope.size() || key[scope.size()] == '.' || key[scope.size()] == '[');
}

std::string located(const Case& c, const std::string& key) {
  // append() rather than operator+ chains: GCC 12 reports a false -Wrestrict
  // on those in this translation unit.
  std::string out = c.source.string();
  // The last value given for a key is the one in effect.
  for (auto o = c.overrides.rbegin(); o != c.overrides.rend(); ++o) {
    if (is_within_key(key, o->scope))
      return out.append(": ").append(o->named()).append(": ").append(key).append(": ");
  }
  if (const auto it = c.key_lines.find(key); it != c.key_lines.end())
    out.append(":").append(std::to_string(it->second));
  return out.append(": ").append(key).append(": ");
}

}  // namespace bipo
