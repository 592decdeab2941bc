#include "osd/store/rocks_status.h"

#include <string>

namespace dfs::osd {

Error rocks_error(const rocksdb::Status& status, std::string_view what) {
  ErrorCode code = ErrorCode::kInternal;
  if (status.IsNoSpace()) {
    code = ErrorCode::kNoSpace;
  } else if (status.IsCorruption()) {
    code = ErrorCode::kCorruption;
  } else if (status.IsNotFound()) {
    code = ErrorCode::kNotFound;
  } else if (status.IsIOError()) {
    code = ErrorCode::kIoError;
  }
  return Error(code, std::string(what) + ": rocksdb: " + status.ToString());
}

}  // namespace dfs::osd
