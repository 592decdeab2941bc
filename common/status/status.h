// Errors as values: ErrorCode, Error and Result<T>, shared by every tier.
// Result<T> borrows std::expected's member names so it can be swapped for it under
// C++23. Codes sit in numeric ranges by domain and are mirrored on the wire as-is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace dfs {

enum class ErrorCode : int32_t {
  kOk = 0,
  // 1..99: generic
  kInternal = 1,
  kInvalidArgument = 2,
  kNotFound = 3,
  kAlreadyExists = 4,
  kTimeout = 5,
  kUnavailable = 6,  // retryable: peer down, not enough replicas up, shutting down
  kCancelled = 7,
  kNoSpace = 8,
  kIoError = 9,
  kCorruption = 10,  // checksum mismatch or undecodable stored data; never retried
  kPermissionDenied = 11,
  kReadOnly = 12,  // a store that failed a sync refuses writes (sticky failure)
  kConnectionRefused = 13,  // nothing listens at the peer's address: it is down
  // A memory-only read needs the disk (internal); an MDS batch item would wait for a
  // recall of directory rights: it was not run, and is to be sent alone.
  kWouldBlock = 14,
  // 100..199: wire and protocol
  kProtocol = 100,      // malformed frame or message
  kAuthFailed = 101,
  kVersionMismatch = 102,
  kUnknownMethod = 103,
  kWrongCluster = 104,  // the peer belongs to another cluster (fsid); never retried
  kFenced = 105,        // the sender's session was evicted and fenced; never retried
  // 200..299: cluster maps and placement
  kStaleEpoch = 200,  // sender's map is older than needed; refetch and retry
  kNotPrimary = 201,  // this OSD is not the primary of the PG in its map
  kNoSuchPool = 202,
  // 300..399: file system semantics (mapped to errno once, in client-fuse/fuse)
  kNotDirectory = 300,   // ENOTDIR
  kIsDirectory = 301,    // EISDIR
  kNotEmpty = 302,       // ENOTEMPTY
  kNameTooLong = 303,    // ENAMETOOLONG
  kCrossDevice = 304,    // EXDEV
  kNoAttribute = 305,    // ENODATA: no such xattr
  kRange = 306,          // ERANGE: value does not fit the caller's buffer
  kTooManyLinks = 307,   // EMLINK
  kNotSupported = 308,   // EOPNOTSUPP
  kFileTooBig = 309,     // EFBIG
  kStale = 310,          // ESTALE: the inode no longer exists
  kNotPermitted = 311,   // EPERM (EACCES is kPermissionDenied)
  kBusy = 312,           // EBUSY
};

std::string_view error_code_name(ErrorCode code);

// Retryable errors may succeed if the same request is sent again later (mutations
// carry request ids, so a retry after an unknown outcome is not applied twice).
bool is_retryable(ErrorCode code);

class [[nodiscard]] Error {
 public:
  Error(ErrorCode code, std::string context) : code_(code), context_(std::move(context)) {}

  ErrorCode code() const { return code_; }
  const std::string& context() const { return context_; }

  // Adds a "while ..." phrase as the error crosses a layer.
  Error with_context(std::string_view what) const&;
  Error with_context(std::string_view what) &&;

  std::string to_string() const;

 private:
  ErrorCode code_;
  std::string context_;
};

// Tag type so that `return unexpected(err)` reads like std::expected.
struct Unexpected {
  Error error;
};
inline Unexpected unexpected(Error e) { return Unexpected{std::move(e)}; }
inline Unexpected make_error(ErrorCode code, std::string context) {
  return Unexpected{Error(code, std::move(context))};
}

template <class T>
class [[nodiscard]] Result {
 public:
  // Default-constructed results are an error; Asio needs the constructor for the value
  // it passes alongside an exception.
  Result() : v_(std::in_place_index<1>, Error(ErrorCode::kInternal, "no result")) {}
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected u) : error_(std::move(u.error)), ok_(false) {}
  Result(Error e) : error_(std::move(e)), ok_(false) {}

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const {}
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_{ErrorCode::kOk, {}};
  bool ok_ = true;
};

using Status = Result<void>;

inline Status ok_status() { return Status(); }

// Marks a result that is deliberately dropped; `why` documents it for grep.
template <class T>
inline void ignore_error(const Result<T>&, const char* /*why*/) {}

}  // namespace dfs

// Evaluates a Result-returning expression; on error returns it from the enclosing
// function (which must return a Result). Yields the value otherwise.
#define DFS_TRY(expr)                                          \
  ({                                                           \
    auto dfs_try_result_ = (expr);                             \
    if (!dfs_try_result_) return ::dfs::unexpected(std::move(dfs_try_result_).error()); \
    std::move(dfs_try_result_).value();                        \
  })

#define DFS_TRY_STATUS(expr)                                   \
  do {                                                         \
    auto dfs_try_status_ = (expr);                             \
    if (!dfs_try_status_) return ::dfs::unexpected(std::move(dfs_try_status_).error()); \
  } while (0)

// Same for coroutines: co_return instead of return.
#define DFS_CO_TRY(expr)                                       \
  ({                                                           \
    auto dfs_try_result_ = (expr);                             \
    if (!dfs_try_result_) co_return ::dfs::unexpected(std::move(dfs_try_result_).error()); \
    std::move(dfs_try_result_).value();                        \
  })

#define DFS_CO_TRY_STATUS(expr)                                \
  do {                                                         \
    auto dfs_try_status_ = (expr);                             \
    if (!dfs_try_status_) co_return ::dfs::unexpected(std::move(dfs_try_status_).error()); \
  } while (0)

// Coroutine forms for awaited results. GCC 12 cannot compile co_await inside a
// statement expression, so these expand to plain statements:
//   DFS_CO_AWAIT_TRY(auto conn, connect(addr));  // declares conn = the value
//   DFS_CO_AWAIT_CHECK(call(...));               // only propagates the error
#define DFS_CONCAT_INNER_(a, b) a##b
#define DFS_CONCAT_(a, b) DFS_CONCAT_INNER_(a, b)
#define DFS_CO_AWAIT_TRY(lhs, expr) \
  DFS_CO_AWAIT_TRY_IMPL_(DFS_CONCAT_(dfs_await_result_, __LINE__), lhs, expr)
#define DFS_CO_AWAIT_TRY_IMPL_(tmp, lhs, expr)                                   \
  auto tmp = co_await (expr);                                                   \
  if (!tmp) co_return ::dfs::unexpected(std::move(tmp).error());                \
  lhs = std::move(tmp).value()
#define DFS_CO_AWAIT_CHECK(expr)                                                 \
  do {                                                                          \
    auto dfs_await_status_ = co_await (expr);                                   \
    if (!dfs_await_status_) co_return ::dfs::unexpected(std::move(dfs_await_status_).error()); \
  } while (0)
