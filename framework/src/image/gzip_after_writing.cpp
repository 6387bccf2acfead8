#include "image/gzip_after_writing.hpp"

#include "image/decompressed_file.hpp"
#include "image/file_names.hpp"
#include "image/parallel_gzip.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/temporary_outputs.hpp>

namespace fs = std::filesystem;

namespace regpipe::image_detail {

void write_gzipped_after(const fs::path& file, const fs::path& path,
                         const std::function<void(const fs::path& target)>& write) {
  if (!name_ends_with_any(file, {".nii.gz"})) return write(file);
  const fs::path plain = file.parent_path() / file.stem();  // ".x.partial-1-0.nii"
  register_temporary(plain);  // a terminating signal removes it
  auto remove_plain = [&] {
    std::error_code ec;
    fs::remove(plain, ec);
    forget_temporary(plain);
  };
  try {
    write(plain);
    const auto contents = read_decompressed(plain, 0);
    if (!contents) throw UserError("cannot write '" + path.string() + "': cannot read back " + plain.filename().string());
    write_gzip_file(file, contents->bytes.get(), contents->size, path);
  } catch (...) {
    remove_plain();
    throw;
  }
  remove_plain();
}

}  // namespace regpipe::image_detail
