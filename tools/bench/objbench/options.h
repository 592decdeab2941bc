// objbench's settings, filled from the command line by main.cc and read by both sides
// of the benchmark. Plain data; no behaviour.
#pragma once

#include <cstdint>
#include <string>

namespace dfs::bench {

inline constexpr uint64_t kLargeBytes = 4u << 20;  // one "4 MiB" object or file
inline constexpr uint64_t kSmallBytes = 4u << 10;  // one "4 KiB" write

struct BenchOptions {
  std::string conf;                    // cluster config; empty: $DFS_CONF, /etc/dfs/dfs.conf
  std::string pool = "data";           // pool the cluster objects go to
  std::string local_dir = "/var/tmp";  // where the local baseline's files go
  int large_count = 128;               // 4 MiB objects (and files) per side
  int small_count = 400;               // 4 KiB writes per side
  int depth = 4;                       // 4 MiB operations in flight
  int rounds = 4;                      // interleaving rounds the counts are split over
  int timeout_s = 10;                  // seconds to wait for the cluster's first map
  bool markdown = false;               // print the table as Markdown
};

}  // namespace dfs::bench
