#include "transform/file_size_limit.hpp"

#include <regpipe/host/error.hpp>

#include <string>

namespace regpipe::transform_detail {

void require_size_at_most(const std::filesystem::path& path, uintmax_t limit, const char* kind) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > limit)
    throw UserError("cannot read transform '" + path.string() + "': it is " + std::to_string(size) +
                    " bytes, more than the " + std::to_string(limit) + " bytes of any " + kind);
}

}  // namespace regpipe::transform_detail
