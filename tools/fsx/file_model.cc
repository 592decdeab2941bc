#include "file_model.h"

namespace dfs::fsx {
namespace {

// 251 is prime, so every step below is invertible and `writer_of` is exact modulo 251.
constexpr uint64_t kModulus = 251;
constexpr uint64_t kOpFactor = 37;
constexpr uint64_t kOpFactorInverse = 95;  // 37 * 95 = 14 * 251 + 1
static_assert((kOpFactor * kOpFactorInverse) % kModulus == 1);

}  // namespace

uint8_t pattern_byte(uint64_t op_number, uint64_t offset) {
  return static_cast<uint8_t>((op_number % kModulus * kOpFactor + offset) % kModulus + 1);
}

std::optional<uint64_t> writer_of(uint8_t value, uint64_t offset) {
  if (value == 0 || value > kModulus) return std::nullopt;
  uint64_t scaled = (value - 1 + kModulus - offset % kModulus) % kModulus;
  return scaled * kOpFactorInverse % kModulus;
}

void FileModel::write(uint64_t op_number, uint64_t offset, uint64_t length) {
  if (bytes_.size() < offset + length) bytes_.resize(offset + length, '\0');
  for (uint64_t i = 0; i < length; ++i)
    bytes_[offset + i] = static_cast<char>(pattern_byte(op_number, offset + i));
}

void FileModel::truncate(uint64_t size) { bytes_.resize(size, '\0'); }

std::optional<uint64_t> FileModel::first_mismatch(uint64_t offset, std::string_view got) const {
  for (uint64_t i = 0; i < got.size(); ++i) {
    if (got[i] != bytes_[offset + i]) return offset + i;
  }
  return std::nullopt;
}

}  // namespace dfs::fsx
