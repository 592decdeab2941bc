// The one place where rocksdb::Status becomes a dfs Error for the dir store.
#pragma once

#include <rocksdb/status.h>

#include <string_view>

#include "common/status/status.h"

namespace dfs::osd {

// kNoSpace, kCorruption, kNotFound, kIoError or kInternal, with `what` as context.
Error rocks_error(const rocksdb::Status& status, std::string_view what);

inline Status rocks_status(const rocksdb::Status& status, std::string_view what) {
  if (status.ok()) return ok_status();
  return rocks_error(status, what);
}

}  // namespace dfs::osd
