#include "client-fuse/libdfs/inline_buffer.h"

#include <doctest/doctest.h>

namespace dfs::client {

TEST_CASE("client/inline_buffer: writes are buffered and taken once") {
  InlineBuffer b("hello");
  CHECK(!b.dirty());
  b.write(1, "EL");
  CHECK(b.data() == "hELlo");
  CHECK(b.dirty());
  auto d = b.take_dirty();
  CHECK(d.offset == 1);
  CHECK(d.bytes == "EL");
  CHECK(!b.dirty());
  CHECK(b.take_dirty().bytes.empty());
}

TEST_CASE("client/inline_buffer: a gap past the end is zeros and is sent too") {
  InlineBuffer b("ab");
  b.write(5, "xy");
  CHECK(b.size() == 7);
  CHECK(b.data() == std::string("ab\0\0\0xy", 7));
  auto d = b.take_dirty();
  CHECK(d.offset == 2);  // the zeros the MDS has not seen
  CHECK(d.bytes == std::string("\0\0\0xy", 5));
}

TEST_CASE("client/inline_buffer: many small writes merge into one range") {
  InlineBuffer b;
  for (int i = 0; i < 100; ++i)
    b.write(static_cast<uint64_t>(i) * 10, std::string(10, 'a' + i % 26));
  CHECK(b.size() == 1000);
  auto d = b.take_dirty();
  CHECK(d.offset == 0);
  CHECK(d.bytes.size() == 1000);
  CHECK(d.bytes == b.data());
}

TEST_CASE("client/inline_buffer: a failed send marks the range dirty again") {
  InlineBuffer b("0123456789");
  b.write(2, "ab");
  auto d = b.take_dirty();
  b.write(8, "z");  // written while the send was in flight
  b.mark_dirty(d.offset, d.offset + d.bytes.size());
  auto again = b.take_dirty();
  CHECK(again.offset == 2);
  CHECK(again.bytes == "ab4567z");
}

TEST_CASE("client/inline_buffer: truncate clips the dirty range") {
  InlineBuffer b("0123456789");
  b.write(6, "xyz");
  b.truncate(7);
  CHECK(b.data() == "012345x");
  auto d = b.take_dirty();
  CHECK(d.offset == 6);
  CHECK(d.bytes == "x");
  b.write(2, "Q");
  b.truncate(1);
  CHECK(!b.dirty());
  b.truncate(4);
  CHECK(b.data() == std::string("0\0\0\0", 4));
}

TEST_CASE("client/inline_buffer: reads clip to the data and empty writes change nothing") {
  InlineBuffer b("abc");
  CHECK(b.read(1, 10) == "bc");
  CHECK(b.read(3, 1).empty());
  CHECK(b.read(100, 1).empty());
  b.write(10, "");
  CHECK(b.size() == 3);
  CHECK(!b.dirty());
}

}  // namespace dfs::client
