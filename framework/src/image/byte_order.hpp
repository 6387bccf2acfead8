// A value of type T stored at `bytes` in a file's byte order (`swap`: the other one than this
// machine's): NIfTI headers and voxels, whichever endianness wrote them.
#pragma once

#include <algorithm>
#include <cstring>

namespace regpipe::image_detail {

template <class T>
T load_ordered(const unsigned char* bytes, bool swap) {
  unsigned char ordered[sizeof(T)];
  std::memcpy(ordered, bytes, sizeof(T));
  if (swap) std::reverse(ordered, ordered + sizeof(T));
  T value;
  std::memcpy(&value, ordered, sizeof(T));
  return value;
}

}  // namespace regpipe::image_detail
