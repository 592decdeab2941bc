#include "common/metrics/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace dfs::metrics {
namespace {

// Entries of a /proc directory, minus "." and "..".
int count_entries(const char* path) {
  DIR* dir = ::opendir(path);
  if (!dir) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
  ::closedir(dir);
  return n;
}

}  // namespace

void add_process_collector(Registry& registry, const std::string& entity) {
  const auto started = std::chrono::steady_clock::now();
  registry.add_collector([entity, started](SampleWriter& w) {
    const Labels l{{"entity", entity}};
    w.gauge("dfs_process_uptime_seconds", "seconds since the daemon started", l,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    std::ifstream statm("/proc/self/statm");
    uint64_t pages_total = 0, pages_resident = 0;
    if (statm >> pages_total >> pages_resident) {
      w.gauge("dfs_process_resident_memory_bytes", "resident set size", l,
              static_cast<double>(pages_resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)));
    }
    w.gauge("dfs_process_open_fds", "open file descriptors", l, count_entries("/proc/self/fd"));
    w.gauge("dfs_process_threads", "threads", l, count_entries("/proc/self/task"));
  });
}

}  // namespace dfs::metrics
