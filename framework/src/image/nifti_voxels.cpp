#include "image/nifti_voxels.hpp"

#include "image/byte_order.hpp"
#include "image/decompressed_file.hpp"
#include "image/nifti_header.hpp"

#include <nifti1_io.h>
#include <regpipe_common/parallel_slabs.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

namespace regpipe::image_detail {
namespace {

struct NiftiFree {
  void operator()(nifti_image* nim) const { nifti_image_free(nim); }
};

// NiftiImageIO's rescaling: a slope of 0 means 1, and values are rescaled unless the pair is
// (1, 0) to within double epsilon (NiftiImageIO::MustRescale).
struct Rescale {
  double slope = 1.0, intercept = 0.0;
  bool applies = false;
};

Rescale itk_rescale(const nifti_image& nim) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  Rescale r;
  r.slope = nim.scl_slope;
  if (std::abs(r.slope) < eps) r.slope = 1.0;
  r.intercept = nim.scl_inter;
  r.applies = std::abs(r.slope) > eps && (std::abs(r.slope - 1.0) > eps || std::abs(r.intercept) > eps);
  return r;
}

// One voxel as ITK ends up with it. The product and sum are separate double operations, as in
// NiftiImageIO's RescaleFunction (regpipe is built without FMA contraction on x86-64).
template <class T>
float itk_value(T stored, const Rescale& r) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(stored)) stored = T(0);  // niftilib's nifti_read_buffer
    if (!r.applies) return static_cast<float>(stored);
    double scaled = static_cast<double>(stored) * r.slope;
    scaled += r.intercept;
    return static_cast<float>(static_cast<T>(scaled));  // rescaled in the stored type, then cast
  } else {
    const float value = static_cast<float>(stored);  // CastCopy to float before rescaling
    if (!r.applies) return value;
    double scaled = static_cast<double>(value) * r.slope;
    scaled += r.intercept;
    return static_cast<float>(scaled);
  }
}

// Into `out` (resized to `count`), slab by slab on every core (parallel_slabs: a thread per
// usable core at most): each voxel on its own, so the same values whatever the number of cores.
template <class T>
std::vector<float> decode(const unsigned char* data, uint64_t count, bool swap, const Rescale& rescale,
                          std::vector<float> out) {
  out.resize(count);
  const size_t slabs = 1 + count / (1 << 16);
  regpipe_common::parallel_slabs(slabs, [&](size_t s) {
    for (uint64_t i = regpipe_common::slab_begin(count, slabs, s), end = regpipe_common::slab_begin(count, slabs, s + 1);
         i < end; ++i)
      out[i] = itk_value(load_ordered<T>(data + i * sizeof(T), swap), rescale);
  });
  return out;
}

}  // namespace

std::optional<std::vector<float>> decode_nifti_voxels(const DecompressedFile& contents, uint64_t count,
                                                     std::vector<float> storage) {
  nifti_1_header header;
  if (contents.kept < sizeof(header)) return std::nullopt;
  std::memcpy(&header, contents.bytes.get(), sizeof(header));
  // niftilib's own reading of the header: its byte order, offset and scaling (no file opened).
  std::unique_ptr<nifti_image, NiftiFree> nim;
  {
    std::lock_guard<std::mutex> lock(header_mutex());  // niftilib's global options
    nim.reset(nifti_convert_nhdr2nim(header, nullptr));
  }
  if (!nim || nim->nifti_type != NIFTI_FTYPE_NIFTI1_1 || nim->nvox != count || nim->iname_offset < 0)
    return std::nullopt;
  const uint64_t offset = uint64_t(nim->iname_offset), bytes = count * uint64_t(nim->nbyper);
  if (offset > contents.kept || bytes > contents.kept - offset) return std::nullopt;
  const unsigned char* data = contents.bytes.get() + offset;
  const bool swap = nim->swapsize > 1 && nim->byteorder != nifti_short_order();
  const Rescale rescale = itk_rescale(*nim);
  switch (nim->datatype) {
    case DT_UINT8: return decode<uint8_t>(data, count, swap, rescale, std::move(storage));
    case DT_INT8: return decode<int8_t>(data, count, swap, rescale, std::move(storage));
    case DT_UINT16: return decode<uint16_t>(data, count, swap, rescale, std::move(storage));
    case DT_INT16: return decode<int16_t>(data, count, swap, rescale, std::move(storage));
    case DT_UINT32: return decode<uint32_t>(data, count, swap, rescale, std::move(storage));
    case DT_INT32: return decode<int32_t>(data, count, swap, rescale, std::move(storage));
    case DT_FLOAT32: return decode<float>(data, count, swap, rescale, std::move(storage));
    case DT_FLOAT64: return decode<double>(data, count, swap, rescale, std::move(storage));
    default: return std::nullopt;
  }
}

}  // namespace regpipe::image_detail
