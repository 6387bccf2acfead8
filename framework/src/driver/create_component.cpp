#include "driver/create_component.hpp"

#include <regpipe/host/error.hpp>

#include "plugin_host/did_you_mean.hpp"

namespace regpipe {

std::string describe_used(const UsedComponent& c) {
  std::string text = c.id + " " + c.version;
  if (c.device) text += " on " + c.device->name + " (device " + std::to_string(c.device->device) + ")";
  if (!c.fallback_from.empty()) text += " (instead of " + c.fallback_from + ")";
  return text;
}

template <class Instance>
Created<Instance> create_component(const ComponentSpec& spec, int32_t kind, const char* role,
                                   const PluginHost& plugins, HostServices& services,
                                   const RefuseComponent& refuse) {
  std::vector<std::string> refusals;
  for (const auto& id : spec.plugins) {
    const Component* c = plugins.find(kind, id);
    if (c == nullptr) {
      refusals.push_back(id + ": not installed");
      continue;
    }
    if (std::string why = refuse ? refuse(*c) : std::string(); !why.empty()) {
      refusals.push_back(id + ": " + why);
      continue;
    }
    std::map<std::string, std::string> texts;  // only the parameters this plugin has
    for (const auto& [name, text] : spec.params)
      if (c->find_param(name) != nullptr) texts[name] = text.value;
    try {
      Created<Instance> out;
      std::map<std::string, ParamValue> params = resolve_params(*c, texts);
      out.instance = std::make_unique<Instance>(*c, services, params);
      out.used = {role,           c->id, c->version, c->library.string(), join(refusals, "; "), std::move(params),
                  out.instance->device_description()};
      return out;
    } catch (const ComponentError& e) {
      // Only "cannot run here" falls through to the next preference; a bad parameter
      // or a plugin bug is the user's to see.
      if (e.status() != RP_DEVICE && e.status() != RP_UNSUPPORTED) throw;
      refusals.push_back(e.what());
    }
  }
  throw UserError(std::string("no usable ") + role + " plugin among " + join(spec.plugins, ", ") +
                  ":\n  " + join(refusals, "\n  "));
}

template Created<CostInstance> create_component<CostInstance>(const ComponentSpec&, int32_t,
                                                              const char*, const PluginHost&,
                                                              HostServices&, const RefuseComponent&);
template Created<OptimizerInstance> create_component<OptimizerInstance>(const ComponentSpec&,
                                                                        int32_t, const char*,
                                                                        const PluginHost&,
                                                                        HostServices&,
                                                                        const RefuseComponent&);
template Created<ResamplerInstance> create_component<ResamplerInstance>(const ComponentSpec&,
                                                                        int32_t, const char*,
                                                                        const PluginHost&,
                                                                        HostServices&,
                                                                        const RefuseComponent&);

}  // namespace regpipe
