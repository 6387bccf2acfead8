// Creating the component a pipeline names, honouring preference lists ([cuda.cr, cpu.cr]):
// the first plugin that can be created wins, and the reasons the others could not are kept.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/pipeline.hpp>

#include <functional>
#include <memory>

namespace regpipe {

template <class Instance>
struct Created {
  std::unique_ptr<Instance> instance;
  UsedComponent used;
};

// Why a component cannot serve this pipeline before it is created ("" when it can), e.g. an
// optimizer that does not support registration.dof; it then counts as a refusal.
using RefuseComponent = std::function<std::string(const Component&)>;

template <class Instance>
Created<Instance> create_component(const ComponentSpec& spec, int32_t kind, const char* role,
                                   const PluginHost& plugins, HostServices& services,
                                   const RefuseComponent& refuse = {});

}  // namespace regpipe
