// The cluster a daemon's data directory was made for: the file <dir>/fsid, one line,
// written at --mkfs and checked at every start, so that a disk made for one cluster
// never serves another (a dfs.conf copied from elsewhere, a disk moved between hosts,
// two dev clusters in one directory tree). Blocking file I/O: call from main().
#pragma once

#include <string>

#include "common/status/status.h"

namespace dfs {

// At --mkfs: records `fsid` in existing directory `dir` (durably: temp file, fsync,
// rename, directory fsync). Recording the fsid the file already holds is a no-op.
// Errors: kWrongCluster (the directory was made for another cluster), kIoError.
Status record_data_dir_fsid(const std::string& dir, const std::string& fsid);

// At start: checks that `dir` was made for cluster `fsid`. A directory made before
// fsids were recorded has no file: it is adopted (the file is written; a warning says
// so). Errors: kWrongCluster naming both clusters, kIoError.
Status check_data_dir_fsid(const std::string& dir, const std::string& fsid);

}  // namespace dfs
