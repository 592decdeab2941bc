#include "client-fuse/fuse/errno_map.h"

#include <doctest/doctest.h>

#include <cerrno>

namespace dfs::fuse {

TEST_CASE("client/errno_map: file system codes map to their errno") {
  CHECK(to_errno(ErrorCode::kOk) == 0);
  CHECK(to_errno(ErrorCode::kNotFound) == ENOENT);
  CHECK(to_errno(ErrorCode::kAlreadyExists) == EEXIST);
  CHECK(to_errno(ErrorCode::kNotDirectory) == ENOTDIR);
  CHECK(to_errno(ErrorCode::kIsDirectory) == EISDIR);
  CHECK(to_errno(ErrorCode::kNotEmpty) == ENOTEMPTY);
  CHECK(to_errno(ErrorCode::kNameTooLong) == ENAMETOOLONG);
  CHECK(to_errno(ErrorCode::kCrossDevice) == EXDEV);
  CHECK(to_errno(ErrorCode::kNoAttribute) == ENODATA);
  CHECK(to_errno(ErrorCode::kRange) == ERANGE);
  CHECK(to_errno(ErrorCode::kTooManyLinks) == EMLINK);
  CHECK(to_errno(ErrorCode::kNotSupported) == EOPNOTSUPP);
  CHECK(to_errno(ErrorCode::kFileTooBig) == EFBIG);
  CHECK(to_errno(ErrorCode::kStale) == ESTALE);
  CHECK(to_errno(ErrorCode::kNotPermitted) == EPERM);
  CHECK(to_errno(ErrorCode::kPermissionDenied) == EACCES);
  CHECK(to_errno(ErrorCode::kBusy) == EBUSY);
  CHECK(to_errno(ErrorCode::kNoSpace) == ENOSPC);
  CHECK(to_errno(ErrorCode::kInvalidArgument) == EINVAL);
  CHECK(to_errno(ErrorCode::kReadOnly) == EROFS);
}

TEST_CASE("client/errno_map: an unreachable or broken cluster is EIO, never ENOSYS") {
  for (auto code : {ErrorCode::kTimeout, ErrorCode::kUnavailable, ErrorCode::kConnectionRefused,
                    ErrorCode::kIoError, ErrorCode::kCorruption, ErrorCode::kProtocol,
                    ErrorCode::kInternal, ErrorCode::kStaleEpoch, ErrorCode::kNotPrimary,
                    ErrorCode::kNoSuchPool, ErrorCode::kVersionMismatch}) {
    CHECK(to_errno(code) == EIO);
  }
  CHECK(to_errno(ErrorCode::kUnknownMethod) == EOPNOTSUPP);
  CHECK(to_errno(static_cast<ErrorCode>(9999)) == EIO);
  // Every code has a positive errno (kOk aside).
  for (int c = 1; c < 400; ++c) CHECK(to_errno(static_cast<ErrorCode>(c)) > 0);
}

}  // namespace dfs::fuse
