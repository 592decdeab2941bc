// Fixed-point natural logarithm and the straw2 draw that CrushMap::place ranks OSDs by.
// Integer-only on purpose: std::log may differ in the last bit across libm versions, and one
// differing bit can flip a placement, so nodes would disagree on where data lives. Pure
// functions, safe from any thread; inline because place() calls them once per candidate OSD.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "common/crush/hash.h"
#include "common/crush/ln_table.h"

namespace dfs::crush {

// Weights are 16.16 fixed point: 1.0 == kWeightOne.
inline constexpr uint32_t kWeightOne = 0x10000;

namespace detail {

// round(ln(2) * 2^40).
inline constexpr uint64_t kLn2Q40 = 762123384786u;

// round(2^48 / (256 + i)): multiplying by it divides by the table point 1 + i/256.
inline constexpr std::array<uint64_t, 256> kInvQ48 = [] {
  std::array<uint64_t, 256> inv{};
  for (uint64_t i = 0; i < 256; ++i) inv[i] = ((uint64_t{1} << 48) + (256 + i) / 2) / (256 + i);
  return inv;
}();

}  // namespace detail

// -ln(u) in 32.32 fixed point for u = (h + 1) / 2^32, which maps the whole hash range onto
// (0, 1]. Within 1 unit in the last place (2^-32) of the exact value, never increasing in h,
// and in [0, 32 ln 2] (< 2^37).
//
// With v = h + 1 = 2^e * m, m in [1, 2): ln v = e ln 2 + ln(1 + i/256) + ln(1 + t), where i
// is m's next 8 bits (table lookup) and t = m / (1 + i/256) - 1 is in [0, 2^-8), small
// enough that four terms of ln(1 + t) = t - t^2/2 + t^3/3 - t^4/4 leave an error below
// 2^-40. Everything is carried in 24.40 fixed point and rounded to 32.32 at the end.
constexpr uint64_t neg_ln_q32(uint32_t h) {
  if (h == UINT32_MAX) return 0;  // u == 1
  const uint32_t v = h + 1;
  const int e = 31 - std::countl_zero(v);
  const uint32_t m = v << (31 - e);  // 1.31 fixed point, top bit set
  const uint32_t i = (m >> 23) & 0xff;
  const uint64_t rest = m & ((uint32_t{1} << 23) - 1);  // m - (1 + i/256), scaled by 2^31
  // t * 2^40 = rest * 2^9 / (256 + i) = rest * inv / 2^31; rest < 2^23, inv < 2^40.
  const uint64_t t = (rest * detail::kInvQ48[i]) >> 31;  // < 2^32
  const uint64_t t2 = (t * t) >> 40;                     // t * t < 2^64
  const uint64_t t3 = (t2 * t) >> 40;
  const uint64_t t4 = (t2 * t2) >> 40;
  const uint64_t ln1p_t = t - t2 / 2 + t3 / 3 - t4 / 4;
  const uint64_t ln_v = static_cast<uint64_t>(e) * detail::kLn2Q40 + detail::kLn1pQ40[i] + ln1p_t;
  const uint64_t neg_ln_u = 32 * detail::kLn2Q40 - ln_v;  // ln u = ln v - 32 ln 2 <= 0
  return (neg_ln_u + 128) >> 8;
}

// Extra fraction bits kept when dividing by the weight. neg_ln_q32 < 2^37, so the shifted
// value stays below 2^61.
inline constexpr int kCostShift = 24;

// The straw2 draw of OSD `id` for placement seed `x`, negated: -ln(u) / weight with
// u = (hash32(x, id, 0) + 1) / 2^32. The smallest cost is the largest straw2 draw. As -ln(u)
// is Exp(1)-distributed, the cost is Exp(weight)-distributed, which is what makes a race
// between OSDs go to each in proportion to its weight. r is always 0: place() ranks once and
// never retries. Requires: weight16 > 0.
constexpr uint64_t straw2_cost(uint32_t x, int32_t id, uint32_t weight16) {
  const uint32_t u = hash32(x, static_cast<uint32_t>(id), 0);
  return (neg_ln_q32(u) << kCostShift) / weight16;
}

}  // namespace dfs::crush
