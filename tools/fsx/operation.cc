#include "operation.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace dfs::fsx {
namespace {

struct KindName {
  OpKind kind;
  std::string_view name;
  int numbers;  // how many numbers follow the name in the text form
};

constexpr std::array<KindName, 7> kKindNames = {{
    {OpKind::kRead, "read", 2},
    {OpKind::kWrite, "write", 2},
    {OpKind::kMapRead, "mapread", 2},
    {OpKind::kMapWrite, "mapwrite", 2},
    {OpKind::kTruncate, "truncate", 1},
    {OpKind::kFsync, "fsync", 0},
    {OpKind::kReopen, "reopen", 0},
}};

const KindName& entry_of(OpKind kind) {
  for (const auto& entry : kKindNames) {
    if (entry.kind == kind) return entry;
  }
  std::abort();  // every kind is in the table
}

}  // namespace

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string describe(const Operation& op) {
  const KindName& entry = entry_of(op.kind);
  std::string text(entry.name);
  if (entry.numbers >= 1) text += " " + hex(op.offset);
  if (entry.numbers >= 2) text += " " + hex(op.length);
  return text;
}

std::optional<Operation> parse_operation(std::string_view line, std::string* error) {
  std::istringstream in{std::string(line)};
  std::string name;
  in >> name;
  for (const auto& entry : kKindNames) {
    if (entry.name != name) continue;
    Operation op{entry.kind};
    std::vector<uint64_t> numbers;
    std::string word;
    while (in >> word) {
      char* end = nullptr;
      unsigned long long value = std::strtoull(word.c_str(), &end, 0);
      if (end == word.c_str() || *end != '\0') {
        *error = "'" + word + "' is not a number";
        return std::nullopt;
      }
      numbers.push_back(value);
    }
    if (static_cast<int>(numbers.size()) != entry.numbers) {
      *error = name + " takes " + std::to_string(entry.numbers) + " numbers";
      return std::nullopt;
    }
    if (entry.numbers >= 1) op.offset = numbers[0];
    if (entry.numbers >= 2) op.length = numbers[1];
    return op;
  }
  *error = "unknown operation '" + name + "'";
  return std::nullopt;
}

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::kBuffered: return "buffered";
    case Mode::kMmap: return "mmap";
    case Mode::kDirect: return "direct";
  }
  return "?";
}

std::optional<Mode> parse_mode(std::string_view name) {
  for (Mode mode : {Mode::kBuffered, Mode::kMmap, Mode::kDirect}) {
    if (mode_name(mode) == name) return mode;
  }
  return std::nullopt;
}

OpGenerator::OpGenerator(uint64_t seed, GeneratorConfig config)
    : config_(config), random_(seed) {}

uint64_t OpGenerator::below(uint64_t bound) { return bound == 0 ? 0 : random_() % bound; }

uint64_t OpGenerator::align_down(uint64_t value) const {
  if (config_.mode != Mode::kDirect) return value;
  return value / config_.alignment * config_.alignment;
}

Operation OpGenerator::next(uint64_t file_size) {
  // Weights out of 100, close to fsx's mix: reads and writes dominate, truncation is
  // frequent (that is where caches and object tails disagree), fsync and reopen rarer.
  uint64_t roll = below(100);
  bool mapped = config_.mode == Mode::kMmap;
  if (roll < 30) return io(mapped && roll % 2 ? OpKind::kMapRead : OpKind::kRead, file_size);
  if (roll < 65) return io(mapped && roll % 2 ? OpKind::kMapWrite : OpKind::kWrite, file_size);
  if (roll < 90) return truncation(file_size);
  if (roll < 95) return Operation{OpKind::kFsync};
  return Operation{OpKind::kReopen};
}

Operation OpGenerator::io(OpKind kind, uint64_t file_size) {
  bool reading = kind == OpKind::kRead || kind == OpKind::kMapRead;
  uint64_t limit = reading ? file_size : config_.max_size;
  uint64_t unit = config_.mode == Mode::kDirect ? config_.alignment : 1;
  if (reading && file_size == 0) return Operation{OpKind::kWrite, 0, unit};
  Operation op{kind};
  op.offset = align_down(below(limit));
  uint64_t room = limit - op.offset;
  if (config_.mode == Mode::kDirect) {
    // Whole units; a direct read may run past the end (it returns what is there).
    uint64_t units = std::max<uint64_t>(1, below(config_.max_io / unit) + 1);
    uint64_t max_units = std::max<uint64_t>(1, (config_.max_size - op.offset) / unit);
    op.length = std::min(units, max_units) * unit;
    return op;
  }
  op.length = std::min(room, below(config_.max_io) + 1);
  return op;
}

Operation OpGenerator::truncation(uint64_t file_size) {
  // Half the truncations shrink the file, half grow it (or leave it), as fsx does.
  uint64_t room = file_size < config_.max_size ? config_.max_size - file_size : 0;
  uint64_t size = below(2) == 0 && file_size > 0 ? below(file_size) : file_size + below(room + 1);
  return Operation{OpKind::kTruncate, size, 0};
}

}  // namespace dfs::fsx
