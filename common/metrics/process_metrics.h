// Metrics every daemon exports about its own process (uptime, memory, file descriptors,
// threads), from /proc at scrape time.
#pragma once

#include "common/metrics/registry.h"

namespace dfs::metrics {

// Adds a collector for the process's own figures, labelled with `entity` ("osd.3").
void add_process_collector(Registry& registry, const std::string& entity);

}  // namespace dfs::metrics
