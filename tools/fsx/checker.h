// FileChecker: applies operations to one real file and to a FileModel, and compares
// every byte the file returns with the model, and the file's size after every step.
// The first difference or I/O error stops it with a report of what went wrong: the
// operation, the first wrong byte and the operation that probably wrote it, and the
// operations before it. Single-threaded; owns the file descriptor.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "file_model.h"
#include "operation.h"

namespace dfs::fsx {

class FileChecker {
 public:
  // Creates (or empties) `path`. In direct mode the file is opened with O_DIRECT and
  // I/O buffers are aligned to `alignment`. Errors: a message in `error()`.
  FileChecker(std::string path, Mode mode, uint64_t alignment);
  ~FileChecker();
  FileChecker(const FileChecker&) = delete;
  FileChecker& operator=(const FileChecker&) = delete;

  bool ready() const { return fd_ >= 0; }
  uint64_t size() const { return model_.size(); }
  const std::string& error() const { return error_; }

  // Performs `op` as operation number `op_number` (1-based, the pattern it writes).
  // Returns false, with `error()` set, at the first wrong byte, wrong size or failed call.
  bool apply(uint64_t op_number, const Operation& op);

  // Reads the whole file once more and compares it (a final check after a run).
  bool verify_all(uint64_t op_number);

 private:
  bool open_file(bool truncate);
  bool fail(const std::string& what);
  bool fail_errno(const std::string& call);
  bool check_bytes(uint64_t op_number, uint64_t offset, const std::string& got, size_t expected);
  bool check_size(const Operation& op);

  bool read(uint64_t op_number, uint64_t offset, uint64_t length);
  bool write(uint64_t op_number, uint64_t offset, uint64_t length);
  bool map_read(uint64_t op_number, uint64_t offset, uint64_t length);
  bool map_write(uint64_t op_number, uint64_t offset, uint64_t length);
  bool truncate(uint64_t size);

  std::string path_;
  Mode mode_;
  uint64_t alignment_;
  int fd_ = -1;
  FileModel model_;
  std::string error_;
};

}  // namespace dfs::fsx
