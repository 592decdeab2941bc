#include "common/locks/range_set.h"

#include <doctest/doctest.h>

namespace dfs::locks {
namespace {

constexpr LockType kR = LockType::kRead;
constexpr LockType kW = LockType::kWrite;

std::vector<Segment> segs(std::initializer_list<Segment> s) { return s; }

TEST_CASE("locks/range_set: unlock in the middle splits a range in two") {
  RangeSet s;
  s.set(Range{0, 99}, kW);
  s.clear(Range{10, 19});
  CHECK(s.segments() == segs({{{0, 9}, kW}, {{20, 99}, kW}}));
  CHECK(s.size_after(Range{30, 39}, LockType::kUnlock) == 3);
  CHECK(s.size() == 2);  // size_after does not change the set
}

TEST_CASE("locks/range_set: ranges of one type that touch or overlap merge") {
  RangeSet s;
  s.set(Range{0, 9}, kR);
  s.set(Range{20, 29}, kR);
  s.set(Range{10, 19}, kR);
  CHECK(s.segments() == segs({{{0, 29}, kR}}));
  s.set(Range{25, Range::kEof}, kR);
  CHECK(s.segments() == segs({{{0, Range::kEof}, kR}}));
}

TEST_CASE("locks/range_set: ranges of different types touch without merging") {
  RangeSet s;
  s.set(Range{0, 9}, kR);
  s.set(Range{10, 19}, kW);
  CHECK(s.segments() == segs({{{0, 9}, kR}, {{10, 19}, kW}}));
  s.set(Range{5, 14}, kR);
  CHECK(s.segments() == segs({{{0, 14}, kR}, {{15, 19}, kW}}));
}

TEST_CASE("locks/range_set: a range to EOF is cut and set like any other") {
  RangeSet s;
  s.set(Range{100, Range::kEof}, kW);
  s.clear(Range{200, 299});
  CHECK(s.segments() == segs({{{100, 199}, kW}, {{300, Range::kEof}, kW}}));
  s.clear(Range{0, Range::kEof});
  CHECK(s.empty());
}

TEST_CASE("locks/range_set: first_conflict finds the lowest incompatible overlap") {
  RangeSet s;
  s.set(Range{0, 9}, kR);
  s.set(Range{20, 29}, kW);
  CHECK(!s.first_conflict(Range{0, 15}, kR));
  CHECK(s.first_conflict(Range{5, 25}, kW)->range == Range{0, 9});
  CHECK(s.first_conflict(Range{5, 25}, kR)->range == Range{20, 29});
  CHECK(!s.first_conflict(Range{10, 19}, kW));
}

}  // namespace
}  // namespace dfs::locks
