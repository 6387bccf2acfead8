#include "image/parallel_gzip.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe_common/usable_cores.hpp>

#include <libdeflate.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

// Hardware threads not taken by a compression; each compression runs on its caller's thread
// plus what it takes from here, so that all of them together stay within the machine.
std::atomic<int>& spare_threads() {
  static std::atomic<int> spare(int(regpipe_common::usable_cores()) - 1);
  return spare;
}

// Up to `wanted` spare threads, as many as are free now (none blocks waiting for them).
unsigned take_spare_threads(unsigned wanted) {
  std::atomic<int>& spare = spare_threads();
  int free = spare.load();
  int taken = 0;
  do {
    taken = std::clamp(int(wanted), 0, std::max(free, 0));
  } while (taken > 0 && !spare.compare_exchange_weak(free, free - taken));
  return unsigned(taken);
}

class SpareThreads {
 public:
  explicit SpareThreads(unsigned wanted) : taken_(take_spare_threads(wanted)) {}
  ~SpareThreads() { spare_threads() += int(taken_); }
  SpareThreads(const SpareThreads&) = delete;
  SpareThreads& operator=(const SpareThreads&) = delete;
  unsigned taken() const { return taken_; }

 private:
  unsigned taken_;
};

struct CompressorFree {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

// One gzip member per chunk, in order.
std::vector<std::vector<unsigned char>> compress_members(const unsigned char* data, size_t size, int level,
                                                         unsigned threads) {
  const size_t chunks = std::max<size_t>(1, (size + kGzipChunkBytes - 1) / kGzipChunkBytes);
  std::vector<std::vector<unsigned char>> members(chunks);
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  // Each thread takes the next chunk until none is left: chunks of equal size, so the members
  // come out the same whatever the thread count.
  auto work = [&] {
    try {
      std::unique_ptr<libdeflate_compressor, CompressorFree> compressor(libdeflate_alloc_compressor(level));
      if (!compressor) throw std::bad_alloc();
      for (size_t c; (c = next++) < chunks;) {
        const size_t begin = c * kGzipChunkBytes, length = std::min(kGzipChunkBytes, size - std::min(size, begin));
        std::vector<unsigned char>& member = members[c];
        member.resize(libdeflate_gzip_compress_bound(compressor.get(), length));
        member.resize(libdeflate_gzip_compress(compressor.get(), data + begin, length, member.data(), member.size()));
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = chunks;
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < std::min<size_t>(threads, chunks); ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to spare: the others do the work
    }
  }
  work();
  for (std::thread& t : helpers) t.join();
  if (failure) std::rethrow_exception(failure);
  return members;
}

// Writes the pieces in order to `file`, whole, or throws UserError naming `named`.
void write_pieces(const fs::path& file, const std::vector<std::pair<const unsigned char*, size_t>>& pieces,
                  const fs::path& named) {
  auto fail = [&](const std::string& reason) {
    return UserError("cannot write '" + named.string() + "': " + reason);
  };
  std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(file.c_str(), "wb"), &std::fclose);
  if (!out)
    throw fail("could not create " + file.filename().string() + " in that folder (" + std::strerror(errno) + ")");
  for (const auto& [bytes, size] : pieces)
    if (std::fwrite(bytes, 1, size, out.get()) != size)
      throw fail(std::string("the write failed (") + std::strerror(errno) + "); is the disk full?");
  if (std::fclose(out.release()) != 0)
    throw fail(std::string("the write failed (") + std::strerror(errno) + "); is the disk full?");
}

}  // namespace

std::vector<unsigned char> gzip_members(const unsigned char* data, size_t size, int level, unsigned threads) {
  std::vector<unsigned char> out;
  for (const auto& m : compress_members(data, size, level, threads)) out.insert(out.end(), m.begin(), m.end());
  return out;
}

void write_gzip_file(const fs::path& file, const unsigned char* data, size_t size, const fs::path& named) {
  std::vector<std::vector<unsigned char>> members;
  {
    const size_t chunks = std::max<size_t>(1, (size + kGzipChunkBytes - 1) / kGzipChunkBytes);
    const SpareThreads spare(unsigned(chunks - 1));
    members = compress_members(data, size, kGzipLevel, 1 + spare.taken());
  }
  std::vector<std::pair<const unsigned char*, size_t>> pieces;
  for (const auto& m : members) pieces.emplace_back(m.data(), m.size());
  write_pieces(file, pieces, named);
}

void write_plain_file(const fs::path& file, const unsigned char* data, size_t size, const fs::path& named) {
  write_pieces(file, {{data, size}}, named);
}

}  // namespace regpipe::image_detail
