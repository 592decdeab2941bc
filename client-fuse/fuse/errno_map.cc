#include "client-fuse/fuse/errno_map.h"

#include <cerrno>

namespace dfs::fuse {

int to_errno(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return 0;
    case ErrorCode::kInvalidArgument:
      return EINVAL;
    case ErrorCode::kNotFound:
      return ENOENT;
    case ErrorCode::kAlreadyExists:
      return EEXIST;
    case ErrorCode::kCancelled:
      return EINTR;
    case ErrorCode::kNoSpace:
      return ENOSPC;
    case ErrorCode::kPermissionDenied:
      return EACCES;
    case ErrorCode::kAuthFailed:
      return EACCES;
    case ErrorCode::kReadOnly:
      return EROFS;
    // A method the MDS does not know: "not supported" (ENOSYS would make the kernel
    // stop asking for good, e.g. for every xattr).
    case ErrorCode::kUnknownMethod:
      return EOPNOTSUPP;
    case ErrorCode::kNotDirectory:
      return ENOTDIR;
    case ErrorCode::kIsDirectory:
      return EISDIR;
    case ErrorCode::kNotEmpty:
      return ENOTEMPTY;
    case ErrorCode::kNameTooLong:
      return ENAMETOOLONG;
    case ErrorCode::kCrossDevice:
      return EXDEV;
    case ErrorCode::kNoAttribute:
      return ENODATA;
    case ErrorCode::kRange:
      return ERANGE;
    case ErrorCode::kTooManyLinks:
      return EMLINK;
    case ErrorCode::kNotSupported:
      return EOPNOTSUPP;
    case ErrorCode::kFileTooBig:
      return EFBIG;
    case ErrorCode::kStale:
      return ESTALE;
    case ErrorCode::kNotPermitted:
      return EPERM;
    case ErrorCode::kBusy:
      return EBUSY;
    case ErrorCode::kInternal:
    case ErrorCode::kTimeout:
    case ErrorCode::kUnavailable:
    case ErrorCode::kIoError:
    case ErrorCode::kCorruption:
    case ErrorCode::kConnectionRefused:
    case ErrorCode::kWouldBlock:
    case ErrorCode::kProtocol:
    case ErrorCode::kVersionMismatch:
    case ErrorCode::kWrongCluster:
    case ErrorCode::kFenced:
    case ErrorCode::kStaleEpoch:
    case ErrorCode::kNotPrimary:
    case ErrorCode::kNoSuchPool:
      return EIO;
  }
  return EIO;
}

}  // namespace dfs::fuse
