// Host-side error types. A UserError is bad input (a file, a key, a value): the CLI prints
// its message and exits 2. Anything else that escapes is a bug or an environment failure.
#pragma once

#include <stdexcept>
#include <string>

namespace regpipe {

class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace regpipe
