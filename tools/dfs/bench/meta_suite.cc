// The meta suite: an mdtest-like load. T threads create, stat, rename and unlink files,
// all in one directory or each in its own, phase by phase; operations per second of each
// phase across the threads.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <thread>

#include "tools/dfs/bench/suite.h"

namespace dfs::bench {
namespace {

constexpr const char* kPhases[] = {"create", "stat", "rename", "unlink"};

// One operation of `phase` on file `i` of a thread whose files live in `dir`.
bool do_op(int phase, const std::string& dir, int thread, int i) {
  const std::string name = fmt::format("{}/f.{}.{}", dir, thread, i);
  switch (phase) {
    case 0: {
      int fd = ::open(name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      return fd >= 0 && ::close(fd) == 0;
    }
    case 1: {
      struct stat st;
      return ::stat(name.c_str(), &st) == 0;
    }
    case 2: return ::rename(name.c_str(), (name + ".r").c_str()) == 0;
    default: return ::unlink((name + ".r").c_str()) == 0;
  }
}

}  // namespace

std::vector<Step> meta_steps(const BenchOptions& options) {
  std::vector<Step> steps;
  const int per_thread = options.quick ? 100 : 1000;
  for (int threads : {1, 4, 16}) {
    for (bool shared_dir : {true, false}) {
      Step step;
      step.suite = "meta";
      step.name = fmt::format("meta: {} thread{}, {}", threads, threads == 1 ? "" : "s",
                              shared_dir ? "one directory" : "a directory each");
      step.estimated_s = threads * per_thread * 4 * 0.0002 + 0.5;
      step.run = [threads, shared_dir, per_thread, step](const Target& target) {
        const std::string where = fmt::format("{} thread{}, {}", threads, threads == 1 ? "" : "s",
                                              shared_dir ? "one dir" : "dir each");
        const std::string root = target.dir + "/meta";
        std::error_code ec;
        std::filesystem::remove_all(root, ec);
        for (int t = 0; t < threads; ++t) {
          std::filesystem::create_directories(shared_dir ? root : fmt::format("{}/d{}", root, t), ec);
        }
        std::vector<double> phase_seconds(4, 0);
        std::string error;
        std::mutex error_mutex;
        auto phase_start = std::chrono::steady_clock::now();
        int phase = 0;
        // The last thread to arrive closes the phase's clock and opens the next one's.
        std::barrier sync(threads, [&]() noexcept {
          auto now = std::chrono::steady_clock::now();
          if (phase < 4) phase_seconds[phase] = std::chrono::duration<double>(now - phase_start).count();
          ++phase;
          phase_start = std::chrono::steady_clock::now();
        });
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            const std::string dir = shared_dir ? root : fmt::format("{}/d{}", root, t);
            for (int p = 0; p < 4; ++p) {
              for (int i = 0; i < per_thread; ++i) {
                if (!do_op(p, dir, t, i)) {
                  std::lock_guard lock(error_mutex);
                  if (error.empty()) error = fmt::format("{} of {}: {}", kPhases[p], i, std::strerror(errno));
                }
              }
              sync.arrive_and_wait();
            }
          });
        }
        for (auto& th : pool) th.join();
        std::filesystem::remove_all(root, ec);
        std::vector<Sample> out;
        for (int p = 0; p < 4; ++p) {
          const std::string figure = fmt::format("{}/s, {}", kPhases[p], where);
          if (!error.empty()) {
            out.push_back(failed_sample(step, figure, "ops/s", true, target, error));
            continue;
          }
          Sample s;
          s.suite = "meta";
          s.figure = figure;
          s.unit = "ops/s";
          s.target = target.label;
          s.baseline = target.baseline;
          s.value = phase_seconds[p] > 0 ? threads * per_thread / phase_seconds[p] : 0;
          out.push_back(s);
        }
        return out;
      };
      steps.push_back(std::move(step));
    }
  }
  return steps;
}

}  // namespace dfs::bench
