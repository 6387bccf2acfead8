#include <regpipe/host/error.hpp>
#include <regpipe/host/temporary_outputs.hpp>

#include <mutex>
#include <map>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

struct Registry {
  std::mutex mutex;  // held by a publication and by the removal at exit
  std::map<fs::path, bool> paths;  // true: removed with its contents; false: only when empty
  bool terminating = false;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the signal thread may use it at exit
  return *r;
}

}  // namespace

void register_temporary(const fs::path& path) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.paths[path] = true;
}

void register_new_folder(const fs::path& path) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.paths.emplace(path, false);
}

void forget_temporary(const fs::path& path) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.paths.erase(path);
}

void publish_outputs(const std::function<void()>& rename_into_place) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.terminating) throw UserError("interrupted: the outputs were not written");
  rename_into_place();
}

void remove_temporaries_for_exit() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.terminating = true;
  std::error_code ec;
  for (auto it = r.paths.rbegin(); it != r.paths.rend(); ++it)  // a folder's contents before it
    if (it->second)
      fs::remove_all(it->first, ec);
    else
      fs::remove(it->first, ec);
  r.paths.clear();
}

}  // namespace regpipe
