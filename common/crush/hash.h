// Stable 32-bit hashes for CRUSH placement: every client and daemon must map the same
// object to the same PG and the same OSDs, so these are pure integer arithmetic with fixed
// constants, independent of endianness, word size and compiler. Thread-safe, no state.
#pragma once

#include <cstdint>
#include <string_view>

namespace dfs::crush {

namespace detail {

// The mixing steps of Bob Jenkins' public-domain lookup3 hash (hashword). They are
// inline because straw2 calls hash32 once per candidate OSD per placement.
constexpr uint32_t rotl(uint32_t v, int k) { return (v << k) | (v >> (32 - k)); }

// clang-format off
constexpr void mix(uint32_t& a, uint32_t& b, uint32_t& c) {
  a -= c; a ^= rotl(c, 4);  c += b;
  b -= a; b ^= rotl(a, 6);  a += c;
  c -= b; c ^= rotl(b, 8);  b += a;
  a -= c; a ^= rotl(c, 16); c += b;
  b -= a; b ^= rotl(a, 19); a += c;
  c -= b; c ^= rotl(b, 4);  b += a;
}

constexpr void final_mix(uint32_t& a, uint32_t& b, uint32_t& c) {
  c ^= b; c -= rotl(b, 14);
  a ^= c; a -= rotl(c, 11);
  b ^= a; b -= rotl(a, 25);
  c ^= b; c -= rotl(b, 16);
  a ^= c; a -= rotl(c, 4);
  b ^= a; b -= rotl(a, 14);
  c ^= b; c -= rotl(b, 24);
}
// clang-format on

// Our own initval, so dfs hashes differ from any other lookup3 user ("dfs1"). Changing it
// (or anything in this file) moves every object in every cluster: it is an on-wire format.
inline constexpr uint32_t kSeed = 0x64667331u;

// lookup3 starts from a value that depends on the input length, so hash32(a), hash32(a, 0)
// and hash32(a, 0, 0) are unrelated.
constexpr uint32_t init(uint32_t words) { return 0xdeadbeefu + (words << 2) + kSeed; }

}  // namespace detail

constexpr uint32_t hash32(uint32_t a) {
  uint32_t b = detail::init(1);
  uint32_t c = b;
  a += b;
  detail::final_mix(a, b, c);
  return c;
}

constexpr uint32_t hash32(uint32_t a, uint32_t b) {
  const uint32_t start = detail::init(2);
  uint32_t c = start;
  a += start;
  b += start;
  detail::final_mix(a, b, c);
  return c;
}

constexpr uint32_t hash32(uint32_t a, uint32_t b, uint32_t c) {
  const uint32_t start = detail::init(3);
  a += start;
  b += start;
  c += start;
  detail::final_mix(a, b, c);
  return c;
}

// Stable hash of a byte string; object name -> PG is `hash_name(name) % pg_num`. Bytes are
// assembled little-endian explicitly, so the result does not depend on host byte order.
uint32_t hash_name(std::string_view name);

}  // namespace dfs::crush
