// How regpipe ends on SIGINT, SIGTERM and SIGHUP. The CLI calls take_termination_signals()
// first in main, before any thread starts (threads inherit the blocked signals): one thread
// then takes these signals and runs ordinary code for them, so cleaning up is safe.
// - SIGINT, the first time, while something can be cancelled: asks it to stop (a run ends at
//   its plugin's next should_cancel, as a cancelled run, its outputs undone).
// - A second SIGINT, a SIGINT with nothing to cancel, SIGTERM or SIGHUP: waits for a
//   publication of outputs in progress, removes every temporary output, and ends the process
//   by that signal, at once, even while a plugin never looks at should_cancel.
#pragma once

#include <functional>

namespace regpipe {

void take_termination_signals();

// Whether take_termination_signals() runs in this process.
bool termination_signals_taken();

// What the first SIGINT cancels; an empty function: nothing (the next SIGINT ends the process).
void on_first_interrupt(std::function<void()> cancel);

}  // namespace regpipe
