#include <regpipe/host/temporary_outputs.hpp>

#include <map>
#include <mutex>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

struct Registry {
  // Held while a known folder is made or forgotten, by a publication, and from the removal at
  // exit until the process has ended.
  std::mutex mutex;
  std::map<fs::path, bool> paths;  // true: removed with its contents; false: only when empty
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the signal thread may use it at exit
  return *r;
}

// Another thread of this process may be making a file inside `folder` while it is removed,
// leaving it not empty: remove again until it is gone (nothing can be made in it then).
void remove_with_contents(const fs::path& folder) {
  std::error_code ec;
  for (int attempt = 0; attempt < 100 && fs::symlink_status(folder, ec).type() != fs::file_type::not_found;
       ++attempt)
    fs::remove_all(folder, ec);
}

}  // namespace

void make_temporary_folder(const fs::path& path, std::error_code& ec) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (fs::create_directory(path, ec)) r.paths[path] = true;
  else if (!ec) ec = std::make_error_code(std::errc::file_exists);
}

std::vector<fs::path> make_output_folders(const fs::path& dir, std::error_code& ec) {
  std::vector<fs::path> missing;  // dir first
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  ec.clear();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<fs::path> made;
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (!fs::create_directory(*it, ec)) {
      if (ec) break;
      continue;  // made meanwhile by someone else: not ours to remove
    }
    r.paths.emplace(*it, false);
    made.insert(made.begin(), *it);
  }
  return made;
}

void forget_temporary(const fs::path& path) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.paths.erase(path);
}

void publish_outputs(const std::function<void()>& rename_into_place) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  rename_into_place();
}

void remove_temporaries_for_exit() {
  Registry& r = registry();
  // Never unlocked: a thread that would make a folder, publish, or forget one (as its error
  // path does) waits for the end, so that the process ends by its signal, not by that error.
  r.mutex.lock();
  std::error_code ec;
  for (auto it = r.paths.rbegin(); it != r.paths.rend(); ++it)  // a folder's contents before it
    if (it->second)
      remove_with_contents(it->first);
    else
      fs::remove(it->first, ec);
  r.paths.clear();
}

}  // namespace regpipe
