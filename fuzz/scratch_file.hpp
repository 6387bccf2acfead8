// The fuzz input as a file: regpipe's readers take paths and pick the format from the
// extension, so each target writes its input into a folder of its own process first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace regpipe::fuzz {

// `file_name` in this process's scratch folder (under the system temp folder, made once;
// libFuzzer's -fork/-jobs workers are separate processes and get separate folders).
std::filesystem::path scratch_path(const std::string& file_name);

// Writes `size` bytes to `path`, replacing it; gzipped when `gzip` (a .nii.gz whose header the
// fuzzer mutates through the compression).
void write_file(const std::filesystem::path& path, const uint8_t* data, size_t size, bool gzip = false);

}  // namespace regpipe::fuzz
