#include "plugin_host/descriptor_check.hpp"

#include <regpipe/host/error.hpp>

#include <regex>

namespace regpipe {
namespace {

// A vtable must hold at least the members of ABI 1.0 (up to `destroy`); a plugin built
// against a later minor may have more, which this host ignores.
#define RP_VTABLE_COVERS_1_0(vt, type) ((vt)->size >= offsetof(type, destroy) + sizeof((vt)->destroy))

std::string check_vtable(int32_t kind, const void* vtable) {
  if (vtable == nullptr) return "vtable is NULL";
  switch (kind) {
    case RP_KIND_COST: {
      auto* vt = static_cast<const rp_cost_vtable*>(vtable);
      if (!RP_VTABLE_COVERS_1_0(vt, rp_cost_vtable)) return "cost vtable is smaller than ABI 1.0's";
      if (!vt->create || !vt->set_reference || !vt->set_moving || !vt->evaluate ||
          !vt->last_error || !vt->destroy)
        return "cost vtable has a NULL function";
      return "";
    }
    case RP_KIND_OPTIMIZER: {
      auto* vt = static_cast<const rp_optimizer_vtable*>(vtable);
      if (!RP_VTABLE_COVERS_1_0(vt, rp_optimizer_vtable))
        return "optimizer vtable is smaller than ABI 1.0's";
      if (!vt->create || !vt->minimize || !vt->last_error || !vt->destroy)
        return "optimizer vtable has a NULL function";
      return "";
    }
    case RP_KIND_RESAMPLER: {
      auto* vt = static_cast<const rp_resampler_vtable*>(vtable);
      if (!RP_VTABLE_COVERS_1_0(vt, rp_resampler_vtable))
        return "resampler vtable is smaller than ABI 1.0's";
      if (!vt->create || !vt->resample || !vt->last_error || !vt->destroy)
        return "resampler vtable has a NULL function";
      return "";
    }
    default:
      return "unknown component kind " + std::to_string(kind);
  }
}

std::string text(const char* s) { return s != nullptr ? s : ""; }

std::optional<ParamSchema> read_param(const rp_param_desc& d, std::string* reason) {
  static const std::regex kSnakeCase("[a-z][a-z0-9_]*");
  if (d.size < offsetof(rp_param_desc, doc) + sizeof(d.doc)) {
    *reason = "parameter descriptor smaller than ABI 1.0's";
    return std::nullopt;
  }
  ParamSchema p;
  p.name = text(d.name);
  if (!std::regex_match(p.name, kSnakeCase)) {
    *reason = "parameter name '" + p.name + "' is not snake_case";
    return std::nullopt;
  }
  if (d.type < RP_PARAM_BOOL || d.type > RP_PARAM_PATH) {
    *reason = "parameter '" + p.name + "' has unknown type " + std::to_string(d.type);
    return std::nullopt;
  }
  p.type = d.type;
  p.default_value = text(d.default_value);
  p.min = d.min;
  p.max = d.max;
  p.unit = text(d.unit);
  p.doc = text(d.doc);
  if (d.type == RP_PARAM_ENUM) {
    for (const char* const* c = d.choices; c != nullptr && *c != nullptr; ++c) p.choices.push_back(*c);
    if (p.choices.empty()) {
      *reason = "enum parameter '" + p.name + "' has no choices";
      return std::nullopt;
    }
  }
  if ((d.type == RP_PARAM_INT || d.type == RP_PARAM_DOUBLE) && !(d.min <= d.max)) {
    *reason = "parameter '" + p.name + "' has min > max";
    return std::nullopt;
  }
  try {
    parse_param(p, p.default_value);
  } catch (const UserError& e) {
    *reason = "default of parameter '" + p.name + "' is invalid: " + e.what();
    return std::nullopt;
  }
  return p;
}

}  // namespace

std::string check_entry(const rp_plugin_entry* e) {
  if (e == nullptr) return "regpipe_plugin_entry() returned NULL";
  if (e->size < offsetof(rp_plugin_entry, abi_minor) + sizeof(e->abi_minor))
    return "entry struct is too small (size " + std::to_string(e->size) + ")";
  if (e->abi_major != RP_ABI_MAJOR)
    return "built for regpipe ABI " + std::to_string(e->abi_major) + ".x; this regpipe speaks " +
           std::to_string(RP_ABI_MAJOR) + ".x";
  if (e->size < offsetof(rp_plugin_entry, components) + sizeof(e->components))
    return "entry struct is smaller than ABI 1.0's";
  if (e->component_count > 0 && e->components == nullptr)
    return "component list is NULL";
  return "";
}

std::optional<Component> read_component(const rp_component_desc& d, std::string* reason) {
  static const std::regex kId("[a-z0-9][a-z0-9_\\-]*(\\.[a-z0-9][a-z0-9_\\-]*)+");
  static const std::regex kVersion("[0-9]+\\.[0-9]+\\.[0-9]+");
  if (d.size < offsetof(rp_component_desc, vtable) + sizeof(d.vtable)) {
    *reason = "component descriptor smaller than ABI 1.0's";
    return std::nullopt;
  }
  Component c;
  c.kind = d.kind;
  c.id = text(d.id);
  c.name = text(d.name);
  c.version = text(d.version);
  c.description = text(d.description);
  c.vtable = d.vtable;
  if (!std::regex_match(c.id, kId)) {
    *reason = "component id '" + c.id + "' is not lowercase dotted (e.g. 'cost.example')";
    return std::nullopt;
  }
  if (!std::regex_match(c.version, kVersion)) {
    *reason = "component '" + c.id + "' has version '" + c.version + "', not major.minor.patch";
    return std::nullopt;
  }
  if (std::string r = check_vtable(d.kind, d.vtable); !r.empty()) {
    *reason = "component '" + c.id + "': " + r;
    return std::nullopt;
  }
  if (d.kind == RP_KIND_OPTIMIZER) {
    auto* vt = static_cast<const rp_optimizer_vtable*>(d.vtable);
    if (RP_HAS_MEMBER(vt, rp_optimizer_vtable, supported_dof)) c.supported_dof = vt->supported_dof;
    c.deformable_only = (vt->flags & RP_OPTIMIZER_DEFORMABLE_ONLY) != 0;
  }
  if (d.param_count > 0 && d.params == nullptr) {
    *reason = "component '" + c.id + "' has a NULL parameter list";
    return std::nullopt;
  }
  for (size_t i = 0; i < d.param_count; ++i) {
    std::string r;
    auto p = read_param(d.params[i], &r);
    if (!p) {
      *reason = "component '" + c.id + "': " + r;
      return std::nullopt;
    }
    if (c.find_param(p->name) != nullptr) {
      *reason = "component '" + c.id + "' declares parameter '" + p->name + "' twice";
      return std::nullopt;
    }
    c.params.push_back(std::move(*p));
  }
  return c;
}

}  // namespace regpipe
