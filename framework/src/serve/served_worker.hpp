// A batch worker taken from `regpipe serve`'s processes started ahead, when the batch itself
// runs in one of them (serve.hpp, server_of_this_command): the worker pays no process start,
// plugin loading or CUDA start (0.3 s of an H100 batch's 1.6 s, bench/results/
// batch_at_once_h100.md). It is still a process of its own, so a crash costs only its images.
//
// The supervisor connects to the server as any client does and hands the waiting process its
// command line (the worker's), its standard streams and the child ends of the worker's report
// pipe and task channel (process/worker_process.hpp); the process is the server's child, not
// the supervisor's. Its end shows as its report pipe's end; how it ended comes on the
// connection: "status N" from the process itself, or "signal N" from the server that reaped it
// (serve.cpp). Where the server is gone, nobody tells: WorkerExit::unknown.
#pragma once

#include "process/worker_process.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace regpipe {

// `args` (argv[1..]) run by one of the server's processes at `server`, as WorkerProcess would
// start them here with a task channel, on this process's standard streams and environment
// (the server's processes keep the CUDA devices and cores they started with); nothing where
// the server cannot take it (nobody listens, it declines: `why` says so, and the caller starts
// the worker itself).
std::unique_ptr<WorkerProcess> start_served_worker(const std::filesystem::path& server,
                                                   const std::vector<std::string>& args, std::string* why);

}  // namespace regpipe
