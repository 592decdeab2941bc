// The db suite: what a database commit does to a file system, 4 KiB random writes each
// followed by fsync, one at a time; IOPS and latency percentiles.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "tools/dfs/bench/suite.h"

namespace dfs::bench {

std::vector<Step> db_steps(const BenchOptions& options) {
  Step step;
  step.suite = "db";
  step.name = "db: 4 KiB random writes, fsync after each";
  const int ops = options.quick ? 300 : 3000;
  step.estimated_s = ops * 0.004;
  step.run = [ops, step](const Target& target) {
    constexpr size_t kBlock = 4096;
    constexpr uint64_t kFileBytes = 64ull << 20;  // a small database
    auto fail = [&](const std::string& why) {
      return std::vector<Sample>{failed_sample(step, "commits/s", "IOPS", true, target, why),
                                 failed_sample(step, "commit p50", "us", false, target, why),
                                 failed_sample(step, "commit p99", "us", false, target, why),
                                 failed_sample(step, "commit p99.9", "us", false, target, why)};
    };
    std::error_code ec;
    std::filesystem::create_directories(target.dir, ec);
    if (ec) return fail("cannot create " + target.dir + ": " + ec.message());
    const std::string path = target.dir + "/db.file";
    int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return fail(path + ": " + std::strerror(errno));
    if (::ftruncate(fd, kFileBytes) != 0 || ::fsync(fd) != 0) {
      std::string why = path + ": " + std::strerror(errno);
      ::close(fd);
      return fail(why);
    }
    std::mt19937_64 random(42);
    std::vector<char> block(kBlock, 'd');
    std::vector<double> latencies_us;
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < ops; ++i) {
      off_t at = static_cast<off_t>(random() % (kFileBytes / kBlock) * kBlock);
      block[0] = static_cast<char>(i);
      auto t0 = std::chrono::steady_clock::now();
      if (::pwrite(fd, block.data(), kBlock, at) != static_cast<ssize_t>(kBlock) || ::fsync(fd) != 0) {
        std::string why = "write or fsync " + std::to_string(i) + ": " + std::strerror(errno);
        ::close(fd);
        return fail(why);
      }
      latencies_us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ::close(fd);
    std::filesystem::remove(path, ec);
    std::sort(latencies_us.begin(), latencies_us.end());
    auto pct = [&](double p) {
      return latencies_us[std::min(latencies_us.size() - 1, static_cast<size_t>(p * latencies_us.size()))];
    };
    auto sample = [&](const std::string& figure, const std::string& unit, bool higher, double value) {
      return measured_sample("db", figure, unit, higher, target, value);
    };
    return std::vector<Sample>{sample("commits/s", "IOPS", true, ops / seconds),
                               sample("commit p50", "us", false, pct(0.50)),
                               sample("commit p99", "us", false, pct(0.99)),
                               sample("commit p99.9", "us", false, pct(0.999))};
  };
  return {step};
}

}  // namespace dfs::bench
