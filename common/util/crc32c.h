// crc32c (Castagnoli) over byte ranges, backed by ISA-L's hardware-accelerated
// crc32_iscsi. Used for frame integrity on the wire and per-block checksums on disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dfs {

// Extends `crc` (0 for a fresh checksum) over `len` bytes at `data`.
uint32_t crc32c(uint32_t crc, const void* data, size_t len);

inline uint32_t crc32c(std::string_view bytes) { return crc32c(0, bytes.data(), bytes.size()); }

}  // namespace dfs
