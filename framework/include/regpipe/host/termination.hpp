// How regpipe ends on SIGINT, SIGTERM and SIGHUP. The CLI calls take_termination_signals()
// first in main, before any thread starts (threads inherit the blocked signals): one thread
// then takes these signals and runs ordinary code for them, so cleaning up is safe.
// - SIGINT goes to the interrupt handler (HostServices: the first asks the run to stop at its
//   plugin's next should_cancel; a batch supervisor passes each on to its worker).
// - A SIGINT that no handler takes (HostServices' second), SIGTERM or SIGHUP: the termination
//   hook runs (a supervisor passes the signal on to its worker and lets it clean up), then,
//   after a publication of outputs in progress, every temporary output is removed and the
//   process ends by that signal, at once, even while a plugin never looks at should_cancel.
#pragma once

#include <functional>

namespace regpipe {

void take_termination_signals();

// Whether take_termination_signals() runs in this process.
bool termination_signals_taken();

// Called on the signal thread for each SIGINT; returns whether it took care of it. An empty
// function (the default): SIGINT ends the process.
void on_interrupt(std::function<bool()> interrupt);

// Called on the signal thread with the signal that is about to end the process.
void on_termination(std::function<void(int signal)> hook);

}  // namespace regpipe
