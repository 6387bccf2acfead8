#include <regpipe/host/error.hpp>
#include <regpipe/host/result_set.hpp>
#include <regpipe/host/temporary_outputs.hpp>

#include <unistd.h>

#include <atomic>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

const std::string kStagingPrefix = ".regpipe-staging-";

}  // namespace

void remove_leftovers_of(int pid, const fs::path& dir) {
  const std::string staging = kStagingPrefix + std::to_string(pid) + "-";
  const std::string partial = ".partial-" + std::to_string(pid) + "-";  // atomic_file.cpp's names
  std::vector<fs::path> leftovers;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(staging, 0) == 0 || name.find(partial) != std::string::npos) {
      leftovers.push_back(it->path());
      it.disable_recursion_pending();
    }
  }
  for (const fs::path& p : leftovers) fs::remove_all(p, ec);
}

ResultSet::ResultSet(fs::path dir) : dir_(std::move(dir)) {
  static std::atomic<unsigned long> counter{0};
  std::error_code ec;
  made_folders_ = make_output_folders(dir_, ec);
  if (ec) {
    remove_made_folders();
    throw UserError("cannot make the output folder " + dir_.string() + ": " + ec.message());
  }
  staging_ = dir_ / (kStagingPrefix + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  make_temporary_folder(staging_, ec);
  if (ec) {
    remove_made_folders();
    throw UserError("cannot write into the output folder " + dir_.string() + ": " + ec.message());
  }
}

ResultSet::~ResultSet() {
  std::error_code ec;
  fs::remove_all(staging_, ec);
  forget_temporary(staging_);
  if (published_)
    for (const fs::path& p : made_folders_) forget_temporary(p);
  else
    remove_made_folders();
}

void ResultSet::remove_made_folders() {
  std::error_code ec;
  for (const fs::path& p : made_folders_) {  // dir first: each is empty when its turn comes
    fs::remove(p, ec);
    forget_temporary(p);
  }
}

fs::path ResultSet::staged(const std::string& name) {
  names_.insert(name);
  return staging_ / name;
}

std::string ResultSet::as_published(const std::string& message) const {
  std::string out = message;
  const std::string from = staging_.string(), to = dir_.string();
  for (size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size()))
    out.replace(at, from.size(), to);
  return out;
}

void ResultSet::publish(const std::vector<std::string>& stale) {
  publish_outputs([&] {
    std::error_code ec;
    for (const std::string& name : names_) {
      if (!fs::exists(staging_ / name, ec)) continue;  // staged but not written (a companion)
      fs::rename(staging_ / name, dir_ / name, ec);
      if (ec) throw UserError("cannot write '" + (dir_ / name).string() + "': " + ec.message());
    }
    for (const std::string& name : stale)
      if (names_.count(name) == 0) fs::remove(dir_ / name, ec);
    published_ = true;
  });
}

}  // namespace regpipe
