// libFuzzer target: reading an image file (read_image: header checks, ITK's reader, the NIfTI
// header pass). The first byte picks the file kind, the rest is the file. For the gzipped
// kind the harness compresses the bytes, so mutations reach the NIfTI header; the raw .nii.gz
// kind feeds the decompressor itself. Every refusal must be a UserError; anything else
// escaping (or a crash, a leak, an allocation over -malloc_limit_mb) is a finding.
#include "scratch_file.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>

#include <iterator>

namespace {

struct Kind {
  const char* file_name;
  bool gzip;
};
constexpr Kind kKinds[] = {{"input.nii", false}, {"input.nii.gz", true}, {"input.nrrd", false},
                           {"input.mha", false}, {"input.nii.gz", false}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Kind& kind = kKinds[data[0] % std::size(kKinds)];
  const auto path = regpipe::fuzz::scratch_path(kind.file_name);
  regpipe::fuzz::write_file(path, data + 1, size - 1, kind.gzip);
  regpipe::ReadOptions options;
  options.volume_index = 0;  // 4D files too: their first volume
  try {
    regpipe::read_image(path, options);
  } catch (const regpipe::UserError&) {
  }
  return 0;
}
