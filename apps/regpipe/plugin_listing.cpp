#include "plugin_listing.hpp"

#include <sstream>

namespace regpipe::cli {
namespace {

const char* type_name(int32_t type) {
  switch (type) {
    case RP_PARAM_BOOL: return "bool";
    case RP_PARAM_INT: return "int";
    case RP_PARAM_DOUBLE: return "double";
    case RP_PARAM_ENUM: return "enum";
    case RP_PARAM_STRING: return "string";
    default: return "path";
  }
}

std::string domain(const ParamSchema& p) {
  std::ostringstream s;
  if (p.type == RP_PARAM_INT) s << "[" << (long long)p.min << ", " << (long long)p.max << "]";
  if (p.type == RP_PARAM_DOUBLE) s << "[" << p.min << ", " << p.max << "]";
  if (p.type == RP_PARAM_ENUM)
    for (size_t i = 0; i < p.choices.size(); ++i) s << (i ? ", " : "") << p.choices[i];
  if (!p.unit.empty()) s << (s.tellp() > 0 ? " " : "") << p.unit;
  return s.str();
}

// The optimizer's DOF line ("" for other kinds): declared since ABI 1.2, any before.
std::string dof_text(const Component& c) {
  if (c.kind != RP_KIND_OPTIMIZER) return "";
  return c.supported_dof == RP_DOF_ANY ? "any DOF" : "DOF " + dof_list(c.supported_dof);
}

}  // namespace

std::string components_text(const PluginHost& host) {
  std::ostringstream out;
  for (const auto& c : host.components()) {
    out << kind_name(c.kind) << "  " << c.id << "  " << c.version << "  (" << c.name << ")\n"
        << "    library: " << c.library.string() << "\n"
        << "    " << c.description << "\n";
    if (!dof_text(c).empty()) out << "    supports " << dof_text(c) << "\n";
    for (const auto& p : c.params)
      out << "    - " << p.name << " (" << type_name(p.type) << ", default " << p.default_value
          << (domain(p).empty() ? "" : ", " + domain(p)) << "): " << p.doc << "\n";
  }
  for (const auto& problem : host.problems())
    out << "skipped " << problem.file.string() << ": " << problem.reason << "\n";
  if (host.components().empty()) {
    out << "no components found; searched:";
    for (const auto& d : host.search_path()) out << " " << d.string();
    out << "\n";
  }
  return out.str();
}

nlohmann::json components_json(const PluginHost& host) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : host.components()) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : c.params) {
      nlohmann::json j = {{"name", p.name}, {"type", type_name(p.type)},
                          {"default", p.default_value}, {"unit", p.unit}, {"doc", p.doc}};
      if (p.type == RP_PARAM_INT || p.type == RP_PARAM_DOUBLE) j["range"] = {p.min, p.max};
      if (p.type == RP_PARAM_ENUM) j["choices"] = p.choices;
      params.push_back(j);
    }
    list.push_back({{"kind", kind_name(c.kind)}, {"id", c.id}, {"name", c.name},
                    {"version", c.version}, {"description", c.description},
                    {"library", c.library.string()}, {"library_version", c.library_version},
                    {"abi_minor", c.abi_minor}, {"params", params}});
    if (c.kind == RP_KIND_OPTIMIZER) {
      // The DOF registration.dof may take with it; null: any (nothing declared).
      nlohmann::json dof = nlohmann::json::array();
      for (unsigned d : {3u, 6u, 7u, 9u, 12u})
        if (c.supported_dof != RP_DOF_ANY && c.supports_dof(d)) dof.push_back(d);
      list.back()["supported_dof"] = c.supported_dof == RP_DOF_ANY && !c.deformable_only ? nlohmann::json() : dof;
      list.back()["deformable_only"] = c.deformable_only;
    }
  }
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : host.problems()) problems.push_back({{"file", p.file.string()}, {"reason", p.reason}});
  return {{"abi", std::to_string(RP_ABI_MAJOR) + "." + std::to_string(RP_ABI_MINOR)},
          {"components", list}, {"skipped", problems}};
}

std::string components_markdown(const PluginHost& host, const std::string& library) {
  std::ostringstream out;
  for (const auto& c : host.components()) {
    if (!library.empty() && c.library.stem().string() != library) continue;
    out << "### `" << c.id << "` — " << c.name << " (" << kind_name(c.kind) << ", " << c.version
        << ")\n\n" << c.description << "\n\n";
    if (c.deformable_only)
      out << "A deformable optimizer: for a syn stage (`registration.stages`), not an affine one.\n\n";
    else if (!dof_text(c).empty())
      out << "Supports " << dof_text(c) << " (`registration.dof`).\n\n";
    if (c.params.empty()) {
      out << "No parameters.\n\n";
      continue;
    }
    out << "| parameter | type | default | range / choices | description |\n"
        << "|---|---|---|---|---|\n";
    for (const auto& p : c.params)
      out << "| `" << p.name << "` | " << type_name(p.type) << " | `" << p.default_value << "` | "
          << domain(p) << " | " << p.doc << " |\n";
    out << "\n";
  }
  return out.str();
}

}  // namespace regpipe::cli
