// The integer encoding of the Raft log storages' records: big-endian u64s, so that
// RocksStorage's entry keys scan in index order and FileStorage's records read the
// same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dfs::raft {

inline void put_u64(std::string& out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads a big-endian u64 at `*pos`, advancing it; false when the input is too short.
inline bool get_u64(std::string_view in, size_t* pos, uint64_t* v) {
  if (*pos > in.size() || in.size() - *pos < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) *v = (*v << 8) | static_cast<uint8_t>(in[*pos + i]);
  *pos += 8;
  return true;
}

}  // namespace dfs::raft
