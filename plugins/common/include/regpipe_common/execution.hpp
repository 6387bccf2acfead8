// Whether a numeric routine spreads its work over threads. The routines that take it give the
// same result bit for bit either way; serial is for callers that are already parallel and for
// the tests that prove that claim.
#pragma once

namespace regpipe_common {

enum class Execution { parallel, serial };

}  // namespace regpipe_common
