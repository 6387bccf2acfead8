// A component's parameter schema as (pointer, count): what its descriptor publishes and what its
// create() re-checks the values against (the same ranges, written once).
#pragma once

#include <regpipe/abi.h>

#include <cstddef>
#include <cstring>

namespace regpipe_common {

struct ParamList {
  const rp_param_desc* params;
  std::size_t count;
};

template <std::size_t N>
constexpr ParamList param_list(const rp_param_desc (&params)[N]) {
  return {params, N};
}

// The entry `name` of `schema`; null when it has none.
inline const rp_param_desc* find_param(ParamList schema, const char* name) {
  for (std::size_t i = 0; i < schema.count; ++i)
    if (std::strcmp(schema.params[i].name, name) == 0) return &schema.params[i];
  return nullptr;
}

}  // namespace regpipe_common
