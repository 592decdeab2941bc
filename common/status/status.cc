#include "common/status/status.h"

namespace dfs {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kAlreadyExists: return "already exists";
    case ErrorCode::kTimeout: return "timed out";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kNoSpace: return "no space left";
    case ErrorCode::kIoError: return "I/O error";
    case ErrorCode::kCorruption: return "data corruption";
    case ErrorCode::kPermissionDenied: return "permission denied";
    case ErrorCode::kReadOnly: return "store is read-only after a failed sync";
    case ErrorCode::kConnectionRefused: return "connection refused";
    case ErrorCode::kWouldBlock: return "would block on I/O";
    case ErrorCode::kProtocol: return "protocol error";
    case ErrorCode::kAuthFailed: return "authentication failed";
    case ErrorCode::kVersionMismatch: return "protocol version mismatch";
    case ErrorCode::kUnknownMethod: return "unknown method";
    case ErrorCode::kWrongCluster: return "wrong cluster";
    case ErrorCode::kFenced: return "fenced (evicted)";
    case ErrorCode::kStaleEpoch: return "stale map epoch";
    case ErrorCode::kNotPrimary: return "not the primary";
    case ErrorCode::kNoSuchPool: return "no such pool";
    case ErrorCode::kNotDirectory: return "not a directory";
    case ErrorCode::kIsDirectory: return "is a directory";
    case ErrorCode::kNotEmpty: return "directory not empty";
    case ErrorCode::kNameTooLong: return "name too long";
    case ErrorCode::kCrossDevice: return "cross-device link";
    case ErrorCode::kNoAttribute: return "no such attribute";
    case ErrorCode::kRange: return "result out of range";
    case ErrorCode::kTooManyLinks: return "too many links";
    case ErrorCode::kNotSupported: return "operation not supported";
    case ErrorCode::kFileTooBig: return "file too big";
    case ErrorCode::kStale: return "stale file handle";
    case ErrorCode::kNotPermitted: return "operation not permitted";
    case ErrorCode::kBusy: return "resource busy";
  }
  return "unknown error code";
}

bool is_retryable(ErrorCode code) {
  switch (code) {
    case ErrorCode::kTimeout:
    case ErrorCode::kUnavailable:
    case ErrorCode::kConnectionRefused:
    case ErrorCode::kStaleEpoch:
    case ErrorCode::kNotPrimary:
      return true;
    default:
      return false;
  }
}

Error Error::with_context(std::string_view what) const& {
  Error copy = *this;
  return std::move(copy).with_context(what);
}

Error Error::with_context(std::string_view what) && {
  context_ = context_.empty() ? std::string(what) : std::string(what) + ": " + context_;
  return std::move(*this);
}

std::string Error::to_string() const {
  std::string out(error_code_name(code_));
  if (!context_.empty()) out += " (" + context_ + ")";
  return out;
}

}  // namespace dfs
