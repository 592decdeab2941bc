// The crash tests' harness: run a child program that works on a store and reports each
// durable step as a fixed-size record on fd 3, SIGKILL it after a delay, and collect
// what it reported. Header-only (doctest assertions; used by several test binaries).
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace dfs::test {

struct KilledChild {
  std::string reports;       // every record the child wrote to fd 3, in order
  bool died_of_kill = false;  // false: it exited or crashed on its own before the kill
};

// Starts `argv` (argv[0] is the program's path), kills it after `delay`.
inline KilledChild run_and_kill(const std::vector<std::string>& argv,
                                std::chrono::milliseconds delay) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 3);  // dup2 clears O_CLOEXEC on the copy
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  KilledChild run;
  run.died_of_kill = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  char buf[4096];
  ssize_t got;
  while ((got = ::read(fds[0], buf, sizeof buf)) > 0) run.reports.append(buf, size_t(got));
  ::close(fds[0]);
  return run;
}

// The seed of a randomized test: $DFS_SEED to replay one, else a fresh one.
inline uint64_t test_seed() {
  const char* env = std::getenv("DFS_SEED");
  return env ? std::strtoull(env, nullptr, 10) : std::random_device()();
}

}  // namespace dfs::test
