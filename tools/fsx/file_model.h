// FileModel: the bytes a file must hold after a sequence of operations, in memory.
// The checker applies every operation to the model and to the real file, then compares
// what the file returns with what the model says. Single-threaded; owned by the runner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dfs::fsx {

// The byte an operation writes at a file offset: never zero (zeros are what holes and
// truncated-then-extended ranges hold), and it encodes the operation's number, so that
// a wrong byte names the operation that wrote it (see `writer_of`).
uint8_t pattern_byte(uint64_t op_number, uint64_t offset);

// The operation numbers (modulo 251) that write `value` at `offset`; nullopt for zero
// (no operation writes a zero).
std::optional<uint64_t> writer_of(uint8_t value, uint64_t offset);

class FileModel {
 public:
  uint64_t size() const { return bytes_.size(); }
  const std::string& bytes() const { return bytes_; }

  // Writes `length` pattern bytes of operation `op_number` at `offset`, growing the
  // file (a gap before `offset` reads as zeros).
  void write(uint64_t op_number, uint64_t offset, uint64_t length);
  // Sets the size: bytes past it are gone, a grown range reads as zeros.
  void truncate(uint64_t size);

  // The first offset in [offset, offset + got.size()) where `got` differs from the
  // model, or nullopt when all match. Requires: offset + got.size() <= size().
  std::optional<uint64_t> first_mismatch(uint64_t offset, std::string_view got) const;

 private:
  std::string bytes_;
};

}  // namespace dfs::fsx
