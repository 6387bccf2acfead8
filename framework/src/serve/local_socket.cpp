#include "serve/local_socket.hpp"

#include <regpipe/host/error.hpp>

#include <array>
#include <cerrno>
#include <cstring>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace regpipe::serve_socket {
namespace {

constexpr size_t kMaxDescriptors = 8;  // a batch worker's: 3 streams, its report pipe and task channel
constexpr uint32_t kMaxMessageBytes = 16u << 20;  // a command line and its environment

sockaddr_un address_of(const fs::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string text = path.string();
  if (text.empty() || text.size() >= sizeof(address.sun_path))
    throw UserError("regpipe serve: the socket path '" + text + "' is " +
                    (text.empty() ? "empty" : "longer than a Unix socket allows (" +
                                                  std::to_string(sizeof(address.sun_path) - 1) + " bytes)"));
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  return address;
}

// The default folder: made if absent; refused unless it is this user's and closed to others.
void make_private_folder(const fs::path& folder) {
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    throw UserError("regpipe serve: cannot make the folder " + folder.string() + ": " + std::strerror(errno));
  struct stat info {};
  if (::lstat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw UserError("regpipe serve: " + folder.string() + " is not a folder");
  if (info.st_uid != ::geteuid() || (info.st_mode & 077) != 0)
    throw UserError("regpipe serve: the folder " + folder.string() +
                    " must belong to this user and be closed to others (mode 0700)");
}

bool write_all(int socket, const char* data, size_t size, msghdr* first) {
  size_t done = 0;
  while (done < size) {
    ssize_t n;
    if (first != nullptr) {
      iovec part{const_cast<char*>(data), size};
      first->msg_iov = &part;
      first->msg_iovlen = 1;
      n = ::sendmsg(socket, first, MSG_NOSIGNAL);
    } else {
      n = ::send(socket, data + done, size - done, MSG_NOSIGNAL);
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    first = nullptr;  // the descriptors went with the first bytes
    done += size_t(n);
  }
  return true;
}

// Reads exactly `size` bytes; the first read takes the descriptors sent with them.
bool read_all(int socket, char* data, size_t size, std::vector<int>* descriptors) {
  size_t done = 0;
  bool first = true;
  while (done < size) {
    std::array<char, CMSG_SPACE(sizeof(int) * kMaxDescriptors)> control{};
    iovec part{data + done, size - done};
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    if (first) {
      message.msg_control = control.data();
      message.msg_controllen = control.size();
    }
    const ssize_t n = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    for (cmsghdr* c = first ? CMSG_FIRSTHDR(&message) : nullptr; c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        if (descriptors != nullptr) descriptors->push_back(fd);
        else ::close(fd);
      }
    }
    first = false;
    done += size_t(n);
  }
  return true;
}

}  // namespace

int listen_at(const fs::path& path, bool private_folder) {
  address_of(path);  // a path too long for a socket: refused first
  if (private_folder) make_private_folder(path.parent_path());
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0) {
    if (!S_ISSOCK(info.st_mode)) throw UserError("regpipe serve: " + path.string() + " exists and is not a socket");
    const int probe = connect_to(path);
    if (probe >= 0) {
      ::close(probe);
      throw UserError("regpipe serve: a server already listens at " + path.string());
    }
    ::unlink(path.c_str());  // left by a server that ended without removing it
  }
  // Bound under a name of its own and renamed once it listens, so that whoever waits for the
  // socket to appear can connect as soon as it does (where that name is too long for a socket,
  // bound at its place).
  fs::path bound = path.parent_path() / (".serve." + std::to_string(::getpid()));
  if (bound.string().size() >= sizeof(sockaddr_un::sun_path)) bound = path;
  const sockaddr_un bound_address = address_of(bound);
  ::unlink(bound.c_str());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw UserError(std::string("regpipe serve: socket: ") + std::strerror(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&bound_address), sizeof(bound_address)) != 0 ||
      ::listen(fd, 64) != 0 || (bound != path && ::rename(bound.c_str(), path.c_str()) != 0)) {
    const int error = errno;
    ::close(fd);
    if (bound != path) ::unlink(bound.c_str());
    throw UserError("regpipe serve: cannot listen at " + path.string() + ": " + std::strerror(error));
  }
  return fd;
}

int connect_to(const fs::path& path) {
  sockaddr_un address{};
  const std::string text = path.string();
  if (text.empty() || text.size() >= sizeof(address.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  address = address_of(path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

std::optional<uid_t> peer_user(int socket) {
  ucred credentials{};
  socklen_t size = sizeof(credentials);
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) return std::nullopt;
  return credentials.uid;
}

bool send_message(int socket, const std::string& text, const std::vector<int>& descriptors) {
  if (text.size() > kMaxMessageBytes || descriptors.size() > kMaxDescriptors) return false;
  const uint32_t size = uint32_t(text.size());
  std::string framed(reinterpret_cast<const char*>(&size), sizeof(size));
  framed += text;
  std::array<char, CMSG_SPACE(sizeof(int) * kMaxDescriptors)> control{};
  msghdr message{};
  if (!descriptors.empty()) {
    message.msg_control = control.data();
    message.msg_controllen = CMSG_SPACE(sizeof(int) * descriptors.size());
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * descriptors.size());
    std::memcpy(CMSG_DATA(c), descriptors.data(), sizeof(int) * descriptors.size());
  }
  return write_all(socket, framed.data(), framed.size(), &message);
}

std::optional<std::string> receive_message(int socket, std::vector<int>* descriptors) {
  uint32_t size = 0;
  if (!read_all(socket, reinterpret_cast<char*>(&size), sizeof(size), descriptors) || size > kMaxMessageBytes)
    return std::nullopt;
  std::string text(size, '\0');
  if (!read_all(socket, text.data(), size, nullptr)) return std::nullopt;
  return text;
}

}  // namespace regpipe::serve_socket
