// The operations the file checker performs, their text form (what a failure prints and
// what --replay reads) and their seeded generator. Pure: no I/O here, so the sequence a
// seed produces is the same on every machine (std::mt19937_64 is fully specified, and
// ranges are drawn by modulo, not by std::uniform_int_distribution, which is not).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace dfs::fsx {

enum class OpKind {
  kRead,      // pread of [offset, offset + length), within the file
  kWrite,     // pwrite of pattern bytes; may extend the file
  kMapRead,   // read through a shared mapping, within the file
  kMapWrite,  // write through a shared mapping (the file grown by ftruncate first), msync
  kTruncate,  // ftruncate to `offset` (the new size), up or down
  kFsync,     // fsync
  kReopen,    // close and open again: the next reads start from what open hands out
};

struct Operation {
  OpKind kind = OpKind::kRead;
  uint64_t offset = 0;  // the new size, for kTruncate
  uint64_t length = 0;

  bool operator==(const Operation&) const = default;
};

// `value` as the checker prints offsets and sizes: "0x29540".
std::string hex(uint64_t value);

// "write 0x1f000 0x800", "truncate 0x29540", "fsync": the form `parse_operation` reads.
std::string describe(const Operation& op);

// Parses one line of a replay script (numbers in hex with 0x, or decimal). Errors: a
// message naming what is wrong.
std::optional<Operation> parse_operation(std::string_view line, std::string* error);

enum class Mode {
  kBuffered,  // read/write through the page cache
  kMmap,      // buffered plus reads and writes through shared mappings
  kDirect,    // O_DIRECT, offsets and lengths aligned to `alignment`
};

std::string_view mode_name(Mode mode);
std::optional<Mode> parse_mode(std::string_view name);

struct GeneratorConfig {
  Mode mode = Mode::kBuffered;
  uint64_t max_size = 256 * 1024;  // the file never grows past this
  uint64_t max_io = 64 * 1024;     // the longest read or write
  uint64_t alignment = 4096;       // direct mode's unit
};

// Draws operations from a seed, the shape of each chosen against the file's size now.
class OpGenerator {
 public:
  OpGenerator(uint64_t seed, GeneratorConfig config);

  // The next operation for a file that is `file_size` bytes long.
  Operation next(uint64_t file_size);

 private:
  uint64_t below(uint64_t bound);  // uniform enough in [0, bound); 0 when bound is 0
  uint64_t align_down(uint64_t value) const;
  Operation io(OpKind kind, uint64_t file_size);
  Operation truncation(uint64_t file_size);

  GeneratorConfig config_;
  std::mt19937_64 random_;
};

}  // namespace dfs::fsx
