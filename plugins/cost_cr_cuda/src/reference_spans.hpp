// fused's reference layout built on the host: the runs of weighted voxels along x ("spans"),
// each voxel's bin and weight in span order, and the bin populations. Rows are cut into
// fixed slabs that are counted, then filled, in parallel: the arrays are those of a serial
// walk in x-fastest order, whatever the thread count.
#pragma once

#include <regpipe_common/prepared_image.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace regpipe::cost_cr_cuda {

// The layout of CUDA's int4 in fused's span array: {first voxel in span order, x of the
// first, length, y + ny * z}.
struct Span {
  int32_t first, x, length, row;
};

struct ReferenceSpans {
  std::vector<Span> spans;
  std::vector<uint16_t> bins;       // bins <= 1024
  std::vector<float> weights;       // empty: weight 1
  std::vector<std::size_t> population;  // weighted voxels per bin
  int hot_bin = 0;                  // the most populated bin (the first of equals)
};

ReferenceSpans make_reference_spans(const regpipe_common::MeasuredImage& ref,
                                    const regpipe_common::IntensityBinning& binning);

}  // namespace regpipe::cost_cr_cuda
