// One registration's output files, appearing together or not at all: each is written under a
// staging folder inside the destination, and publish() renames them all into place in one
// step that a terminating signal waits for (temporary_outputs.hpp). A result set dropped
// unpublished (an error, a full disk, a signal) removes its staging folder, and the
// destination folder too when it made it: nothing new is left behind.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace regpipe {

class ResultSet {
 public:
  // `dir` is made (parents included) when missing.
  explicit ResultSet(std::filesystem::path dir);
  ~ResultSet();
  ResultSet(const ResultSet&) = delete;
  ResultSet& operator=(const ResultSet&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // Where to write the output named `name` (a file name in dir) before publish().
  std::filesystem::path staged(const std::string& name);
  // Renames every staged file that was written onto its name in dir, and removes the files
  // of `stale` (names in dir of an earlier run's outputs that this one does not write again).
  // Throws UserError when a rename fails or the process is terminating.
  void publish(const std::vector<std::string>& stale);
  // `message` (a writer's error about a staged file) naming the file where it was to appear.
  std::string as_published(const std::string& message) const;

 private:
  // Removes the folders of dir's path that this made (each only while empty) and forgets them.
  void remove_made_folders();

  std::filesystem::path dir_, staging_;
  std::vector<std::filesystem::path> made_folders_;  // the folders of dir's path this made, dir first
  std::set<std::string> names_;
  bool published_ = false;
};

// Removes what process `pid` left half-written anywhere under `dir` (its staging folders and
// atomic writes' temporaries) when it could not: it crashed or was killed.
void remove_leftovers_of(int pid, const std::filesystem::path& dir);

}  // namespace regpipe
