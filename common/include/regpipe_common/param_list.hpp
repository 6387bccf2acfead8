// A component's parameter schema as (pointer, count): what its descriptor publishes and what its
// create() re-checks the values against (the same ranges, written once).
#pragma once

#include <regpipe/abi.h>

#include <cstddef>

namespace regpipe_common {

struct ParamList {
  const rp_param_desc* params;
  std::size_t count;
};

template <std::size_t N>
constexpr ParamList param_list(const rp_param_desc (&params)[N]) {
  return {params, N};
}

}  // namespace regpipe_common
