#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/temporary_outputs.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

bool ends_with_ignoring_case(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         std::equal(suffix.rbegin(), suffix.rend(), text.rbegin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

fs::path folder_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

void require_writable_folder(const fs::path& path) {
  const fs::path folder = folder_of(path);
  std::error_code ec;
  const auto status = fs::status(folder, ec);
  if (!fs::exists(status))
    throw UserError("cannot write '" + path.string() + "': folder '" + folder.string() +
                    "' does not exist");
  if (!fs::is_directory(status))
    throw UserError("cannot write '" + path.string() + "': '" + folder.string() +
                    "' is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw UserError("cannot write '" + path.string() + "': folder '" + folder.string() +
                    "' is not writable (" + std::strerror(errno) + ")");
}

// ".<stem>.partial-<pid>-<n>": a hidden folder, unique per process and call, in the destination
// folder so that the final renames never cross file systems. The temporaries are made inside it
// under their final names, so that no temporary outlives a terminating signal
// (temporary_outputs.hpp).
fs::path temporary_folder(const fs::path& path, const std::string& stem) {
  static std::atomic<unsigned long> counter{0};
  return folder_of(path) /
         ("." + stem + ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
}

void remove_quietly(const fs::path& folder) {
  std::error_code ec;
  fs::remove_all(folder, ec);
  forget_temporary(folder);
}

}  // namespace

std::string full_extension(const fs::path& path) {
  const std::string last = path.extension().string();
  if (ends_with_ignoring_case(last, ".gz")) return path.stem().extension().string() + last;
  return last;
}

void write_atomically(const fs::path& path, const std::vector<std::string>& companion_extensions,
                      const std::function<void(const fs::path& tmp)>& write) {
  require_writable_folder(path);
  const std::string extension = full_extension(path);
  const std::string name = path.filename().string();
  const std::string stem = name.substr(0, name.size() - extension.size());
  const fs::path folder = temporary_folder(path, stem);
  std::error_code ec;
  make_temporary_folder(folder, ec);  // a terminating signal removes it, with what is inside
  if (ec) throw UserError("cannot write '" + path.string() + "': " + ec.message());
  const std::string final_stem = path.string().substr(0, path.string().size() - extension.size());

  // Companions first, the main file last (see the header).
  std::vector<fs::path> temporaries, destinations;
  for (const auto& companion : companion_extensions) {
    temporaries.push_back(folder / (stem + companion));
    destinations.emplace_back(final_stem + companion);
  }
  temporaries.push_back(folder / name);
  destinations.push_back(path);

  try {
    write(temporaries.back());
    publish_outputs([&] {
      for (size_t i = 0; i < temporaries.size(); ++i) {
        fs::rename(temporaries[i], destinations[i], ec);
        if (ec) throw UserError("cannot write '" + destinations[i].string() + "': " + ec.message());
      }
    });
  } catch (...) {
    remove_quietly(folder);
    throw;
  }
  remove_quietly(folder);
}

void write_atomically(const fs::path& path, const std::function<void(const fs::path& tmp)>& write) {
  write_atomically(path, {}, write);
}

void write_text_atomically(const fs::path& path, const std::string& text) {
  write_atomically(path, [&](const fs::path& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw UserError("cannot write '" + path.string() + "': " + std::strerror(errno));
  });
}

}  // namespace regpipe
