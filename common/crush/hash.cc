#include "common/crush/hash.h"

#include <cstddef>

namespace dfs::crush {
namespace {

// Reads up to 4 bytes as a little-endian word, zero-padding past `n`. Done byte by byte so
// big-endian hosts and unaligned names hash the same as x86.
uint32_t load_le(const unsigned char* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n && i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

// lookup3's hashlittle over 12-byte blocks. The tail is zero-padded; the length folded into
// the initial state keeps "a" and "a\0" apart.
uint32_t hash_name(std::string_view name) {
  const auto* p = reinterpret_cast<const unsigned char*>(name.data());
  size_t n = name.size();
  uint32_t a = 0xdeadbeefu + static_cast<uint32_t>(n) + detail::kSeed;
  uint32_t b = a;
  uint32_t c = a;
  if (n == 0) return c;
  while (n > 12) {
    a += load_le(p, 4);
    b += load_le(p + 4, 4);
    c += load_le(p + 8, 4);
    detail::mix(a, b, c);
    p += 12;
    n -= 12;
  }
  // 1..12 bytes remain.
  a += load_le(p, n);
  b += n > 4 ? load_le(p + 4, n - 4) : 0;
  c += n > 8 ? load_le(p + 8, n - 8) : 0;
  detail::final_mix(a, b, c);
  return c;
}

}  // namespace dfs::crush
