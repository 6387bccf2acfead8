// A minimal NIfTI-1 (or, with magic "", Analyze 7.5) writer and header reader, by byte offsets
// of the NIfTI-1 standard: the independent reference for scaling, 4D, data types and the
// header fields regpipe must read and carry over. Only the fields the tests set; the rest
// stay zero.
#pragma once

#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace regpipe::test {

struct RawNifti {
  std::vector<int16_t> dim;  // sizes, e.g. {3, 4, 5} or {3, 3, 3, 4}
  int16_t datatype = 16;     // 2 uint8, 4 int16, 16 float32, 128 RGB24
  int16_t bitpix = 32;
  float qfac = 1.0f;
  float pixdim[3] = {1, 1, 1};
  float slope = 0.0f, intercept = 0.0f;
  char xyzt_units = 2;  // mm
  float cal_max = 0.0f, cal_min = 0.0f;
  std::string descrip;
  int16_t qform_code = 0, sform_code = 0;
  float quatern[3] = {}, qoffset[3] = {};
  float srow[3][4] = {};      // RAS
  const char* magic = "n+1";  // "n+1" one file, "" Analyze 7.5 (.hdr + .img)
  std::vector<char> payload;

  std::vector<char> header() const {
    std::vector<char> h(348, 0);
    auto put = [&](size_t offset, const auto& value) {
      std::memcpy(&h[offset], &value, sizeof(value));
    };
    put(0, int32_t(348));
    put(40, int16_t(dim.size()));
    for (size_t i = 0; i < dim.size(); ++i) put(42 + 2 * i, dim[i]);
    put(70, datatype);
    put(72, bitpix);
    put(76, qfac);
    for (int i = 0; i < 3; ++i) put(80 + 4 * i, pixdim[i]);
    put(108, std::strlen(magic) > 0 ? 352.0f : 0.0f);
    put(112, slope);
    put(116, intercept);
    put(123, xyzt_units);
    put(124, cal_max);
    put(128, cal_min);
    std::memcpy(&h[148], descrip.data(), std::min<size_t>(descrip.size(), 79));
    put(252, qform_code);
    put(254, sform_code);
    for (int i = 0; i < 3; ++i) put(256 + 4 * i, quatern[i]);
    for (int i = 0; i < 3; ++i) put(268 + 4 * i, qoffset[i]);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) put(280 + 16 * r + 4 * c, srow[r][c]);
    std::memcpy(&h[344], magic, std::strlen(magic));
    return h;
  }

  void write(const std::filesystem::path& path) const {
    std::ofstream out(path, std::ios::binary);
    const auto h = header();
    out.write(h.data(), h.size());
    out.write("\0\0\0\0", 4);  // no extensions
    out.write(payload.data(), payload.size());
  }

  void write_analyze(const std::filesystem::path& hdr) const {
    std::ofstream(hdr, std::ios::binary).write(header().data(), 348);
    std::filesystem::path img = hdr;
    img.replace_extension(".img");
    std::ofstream(img, std::ios::binary).write(payload.data(), payload.size());
  }

  // The fields above (not dim, payload or magic) as a NIfTI-1 file, gzipped or not, stores them.
  static RawNifti read_header(const std::filesystem::path& path) {
    std::vector<char> h(348);
    gzFile file = gzopen(path.c_str(), "rb");  // reads plain files as they are
    const int got = file != nullptr ? gzread(file, h.data(), 348) : -1;
    if (file != nullptr) gzclose(file);
    if (got != 348) throw std::runtime_error("no NIfTI-1 header in " + path.string());
    auto get = [&](size_t offset, auto& value) { std::memcpy(&value, &h[offset], sizeof(value)); };
    RawNifti n;
    get(70, n.datatype);
    get(72, n.bitpix);
    get(76, n.qfac);
    for (int i = 0; i < 3; ++i) get(80 + 4 * i, n.pixdim[i]);
    get(112, n.slope);
    get(116, n.intercept);
    get(123, n.xyzt_units);
    get(124, n.cal_max);
    get(128, n.cal_min);
    n.descrip.assign(&h[148], strnlen(&h[148], 80));
    get(252, n.qform_code);
    get(254, n.sform_code);
    for (int i = 0; i < 3; ++i) get(256 + 4 * i, n.quatern[i]);
    for (int i = 0; i < 3; ++i) get(268 + 4 * i, n.qoffset[i]);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) get(280 + 16 * r + 4 * c, n.srow[r][c]);
    return n;
  }
};

}  // namespace regpipe::test
