// Child processes for integration tests: spawning daemons (tied to the test process's
// lifetime, so a crashed or timed-out test leaves no daemon behind) and running a
// command to completion with a deadline. Blocking; call from the test's main thread
// (a daemon spawned from another thread dies when that thread exits).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/status/status.h"

namespace dfs::test {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::string stdout_path;        // appended to; empty: /dev/null
  std::string stderr_path;        // appended to; empty: /dev/null
  // Runs the program under `setpriv --pdeathsig KILL` when setpriv is installed, so
  // the kernel kills it if the spawning thread dies first.
  bool die_with_parent = true;
};

// Starts the program and returns its pid. Errors: kInternal (posix_spawn failed).
Result<pid_t> spawn_process(const SpawnOptions& options);

// How a reaped child ended, e.g. "exited with status 1" or "killed by signal 6 (Aborted)".
std::string describe_wait_status(int status);

// Waits for `pid` to end for at most `timeout`; returns its wait status, or nullopt if
// it is still running.
std::optional<int> wait_for_exit(pid_t pid, std::chrono::milliseconds timeout);

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or timed out
  bool timed_out = false;
  std::string out;  // what it wrote to stdout
  std::string err;  // what it wrote to stderr
  std::chrono::milliseconds elapsed{0};
  std::string describe() const;  // all of the above, for failure messages
};

// Runs `argv` to completion, capturing its output through files in `scratch_dir`.
// SIGKILLs it after `timeout`. Errors: kInternal (cannot spawn or capture).
Result<CommandResult> run_command(const std::vector<std::string>& argv,
                                  const std::string& scratch_dir,
                                  std::chrono::milliseconds timeout);

// The whole content of a file, or "" when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace dfs::test
