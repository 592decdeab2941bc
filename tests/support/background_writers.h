// BackgroundWriters: threads that keep writing new objects through one client until
// stopped, recording which writes were acknowledged, so a test can kill daemons
// mid-stream and then verify every acknowledged write. Phases (advanced by the test
// with next_phase()) tell writes started or acknowledged before and after an event.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client-fuse/libdfs/object_client.h"
#include "tests/support/object_checks.h"

namespace dfs::test {

struct WriterOptions {
  int threads = 8;
  std::string pool = "data";
  std::string prefix = "w";     // object names are <prefix><thread>-<n>
  size_t max_size = 256 << 10;  // sizes are log-distributed in [0, max_size]
  uint64_t seed = 1;
};

struct AckedWrite {
  ObjectSpec spec;
  int phase_at_start = 0;
  int phase_at_ack = 0;
  uint32_t copies = 0;  // replicas durable when acknowledged (WriteReply.copies)
  std::chrono::milliseconds latency{0};
};

class BackgroundWriters {
 public:
  BackgroundWriters(client::ObjectClient& client, WriterOptions options);
  ~BackgroundWriters();  // stops and joins

  void start();
  // Asks the writers to stop after their current write and joins them.
  void stop();

  // Moves to the next phase and returns it (0 at start).
  int next_phase() { return ++phase_; }
  size_t acked_count() const { return acked_count_.load(); }
  // Acknowledged writes that started in `phase` or later.
  size_t acked_since(int phase) const;
  // Waits until acked_since(phase) >= n. False on timeout.
  bool wait_acked_since(int phase, size_t n, std::chrono::milliseconds timeout) const;

  // Call after stop().
  std::vector<AckedWrite> acked() const;
  std::vector<std::string> failures() const;
  // The slowest acknowledged write, e.g. "w3-17 took 30.2 s (started in phase 1)".
  std::string slowest() const;
  std::chrono::milliseconds slowest_latency() const;

 private:
  void run(int thread);

  client::ObjectClient& client_;
  WriterOptions options_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<int> phase_{0};
  std::atomic<size_t> acked_count_{0};
  mutable std::mutex mu_;
  std::vector<AckedWrite> acked_;      // guarded by mu_
  std::vector<std::string> failures_;  // guarded by mu_
};

}  // namespace dfs::test
