#include "transform/matlab_v4_check.hpp"

#include "transform/itk_transform_names.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

namespace regpipe::transform_detail {
namespace {

// A record header: type MOPT (M byte order, O 0, P element type, T matrix kind), rows, columns,
// whether an imaginary part follows, the length of the name with its NUL.
struct RecordHeader {
  int32_t type, rows, cols, imaginary, name_length;
};

int32_t swapped(int32_t value) {
  std::array<char, 4> bytes;
  std::memcpy(bytes.data(), &value, 4);
  std::reverse(bytes.begin(), bytes.end());
  std::memcpy(&value, bytes.data(), 4);
  return value;
}

// The element size of type digit P: double, float, int32, int16, uint16, uint8.
constexpr int64_t kElementBytes[] = {8, 4, 4, 2, 2, 1};

// The header in this machine's order: a big-endian file's type reads as a huge number here.
std::optional<std::string> header_problem(RecordHeader& h, int record) {
  const std::string matrix = "matrix " + std::to_string(record);
  if (h.type < 0 || h.type > 9999)
    for (int32_t* field : {&h.type, &h.rows, &h.cols, &h.imaginary, &h.name_length}) *field = swapped(*field);
  const int32_t order = h.type / 1000, zero = h.type / 100 % 10, element = h.type / 10 % 10, kind = h.type % 10;
  if (h.type < 0 || order > 1 || zero != 0 || element > 5 || kind > 2)
    return matrix + " has type " + std::to_string(h.type) + ", not a MATLAB v4 IEEE matrix type";
  if (h.rows < 0 || h.cols < 0) return matrix + " has " + std::to_string(h.rows) + " x " + std::to_string(h.cols) + " values";
  if (h.imaginary != 0 && h.imaginary != 1) return matrix + "'s imaginary flag is " + std::to_string(h.imaginary);
  if (h.name_length < 1) return matrix + "'s name length is " + std::to_string(h.name_length);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> matlab_v4_problem(const std::filesystem::path& path) {
  std::error_code ec;
  const int64_t size = int64_t(std::filesystem::file_size(path, ec));
  if (ec) return std::nullopt;  // the reader says what is wrong with the file itself
  std::ifstream in(path, std::ios::binary);
  int64_t at = 0;
  for (int record = 1; at < size; ++record) {
    RecordHeader h;
    if (size - at < int64_t(sizeof(h)))
      return "it ends " + std::to_string(size - at) + " bytes into the header of matrix " + std::to_string(record);
    in.seekg(at);
    in.read(reinterpret_cast<char*>(&h), sizeof(h));
    at += int64_t(sizeof(h));
    if (auto problem = header_problem(h, record)) return problem;
    const int64_t left = size - at;
    const int64_t values = int64_t(h.rows) * h.cols * (1 + h.imaginary);  // below 2^63
    const int64_t element_bytes = kElementBytes[h.type / 10 % 10];
    // A value takes at least one byte: counts that pass the file are compared before the
    // product in bytes, which could overflow.
    if (h.name_length > left || values > left || h.name_length + values * element_bytes > left)
      return "matrix " + std::to_string(record) + " promises a " + std::to_string(h.name_length) +
             "-byte name and " + std::to_string(h.rows) + " x " + std::to_string(h.cols) +
             " values, more than the " + std::to_string(left) + " bytes left in the file";
    // ITK creates the class a record names: only a transform's, or its fixed parameters.
    std::string name(std::size_t(h.name_length), '\0');
    in.seekg(at);
    in.read(name.data(), h.name_length);
    name.resize(std::min(name.size(), name.find('\0')));
    if (name != "fixed" && !is_itk_transform_type_name(name))
      return "matrix " + std::to_string(record) + " is named '" + printable_name(name) +
             "', neither a transform type as ITK writes one (Class_double_3_3) nor 'fixed'";
    at += h.name_length + values * element_bytes;
  }
  if (size == 0) return "it is empty";
  return std::nullopt;
}

}  // namespace regpipe::transform_detail
