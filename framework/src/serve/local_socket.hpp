// The Unix-domain sockets of `regpipe serve` (regpipe/host/serve.hpp): the server's listening
// socket, a client's connection, and messages framed by their length, each able to carry open
// file descriptors (SCM_RIGHTS: a client's standard streams, the server's hand-over of a
// connection to a waiting process).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace regpipe::serve_socket {

// Listens at `path`: its folder made (0700) where it is the default one, a stale socket file
// (nobody listening) replaced. UserError where another server listens there, the path is not
// a socket, is too long for one, or its folder is not this user's alone.
int listen_at(const std::filesystem::path& path, bool private_folder);

// A connection to the socket at `path`; -1 with errno where nobody listens there.
int connect_to(const std::filesystem::path& path);

// The user id of the process at the other end.
std::optional<uid_t> peer_user(int socket);

// One message: its length (4 bytes), then its bytes; `descriptors` travel with the first byte.
bool send_message(int socket, const std::string& text, const std::vector<int>& descriptors = {});
// The next message, and the descriptors that came with it (close-on-exec) appended to
// `descriptors`; nothing where the other end closed or the message is malformed.
std::optional<std::string> receive_message(int socket, std::vector<int>* descriptors = nullptr);

}  // namespace regpipe::serve_socket
