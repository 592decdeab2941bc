// Logging setup for daemons and tools: spdlog to a file (daemons) or stderr (tools),
// one pattern everywhere so logs from all daemons of a cluster read alike.
#pragma once

#include <string>

#include "common/status/status.h"

namespace dfs {

struct LogOptions {
  std::string name;          // "osd.3", shown in every line
  std::string file;          // empty: stderr
  std::string level = "info";  // trace, debug, info, warn, error
};

// Errors: kInvalidArgument (unknown level), kIoError (cannot open the file).
Status init_logging(const LogOptions& options);

}  // namespace dfs
