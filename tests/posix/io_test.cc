// read/write/pread/pwrite/readv/writev/lseek: offsets, holes, object boundaries, > 4 GiB.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {

constexpr off_t kGiB = off_t{1} << 30;
constexpr off_t kMiB = off_t{1} << 20;

TEST_CASE_FIXTURE(Scratch, "posix/io: write then read returns the same bytes") {
  std::string data = pattern(100000, 0);
  data[17] = '\0';  // binary data, embedded NUL
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  CHECK_EQ(::write(fd.get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
  CHECK_EQ(::lseek(fd.get(), 0, SEEK_CUR), static_cast<off_t>(data.size()));
  REQUIRE_EQ(::lseek(fd.get(), 0, SEEK_SET), 0);
  std::string back(data.size(), '\0');
  CHECK_EQ(::read(fd.get(), back.data(), back.size()), static_cast<ssize_t>(data.size()));
  CHECK(back == data);
  CHECK_EQ(read_file(p("f")).size(), data.size());
}

TEST_CASE_FIXTURE(Scratch, "posix/io: read at and past EOF returns 0") {
  write_file(p("f"), "abc");
  Fd fd = open_ok(p("f"), O_RDONLY);
  char buf[16];
  CHECK_EQ(::pread(fd.get(), buf, sizeof(buf), 3), 0);
  CHECK_EQ(::pread(fd.get(), buf, sizeof(buf), 1000), 0);
  CHECK_EQ(::pread(fd.get(), buf, sizeof(buf), 1), 2);
  REQUIRE_EQ(::lseek(fd.get(), 3, SEEK_SET), 3);
  CHECK_EQ(::read(fd.get(), buf, sizeof(buf)), 0);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: pread and pwrite do not move the file offset") {
  write_file(p("f"), "0123456789");
  Fd fd = open_ok(p("f"), O_RDWR);
  REQUIRE_EQ(::lseek(fd.get(), 4, SEEK_SET), 4);
  char buf[3];
  CHECK_EQ(::pread(fd.get(), buf, 3, 7), 3);
  CHECK_EQ(std::string(buf, 3), "789");
  CHECK_EQ(::pwrite(fd.get(), "AB", 2, 0), 2);
  CHECK_EQ(::lseek(fd.get(), 0, SEEK_CUR), 4);
  CHECK_EQ(::read(fd.get(), buf, 3), 3);
  CHECK_EQ(std::string(buf, 3), "456");
  CHECK_EQ(read_file(p("f")), "AB23456789");
}

TEST_CASE_FIXTURE(Scratch, "posix/io: overwrite in the middle keeps the surrounding bytes") {
  std::string data = pattern(20000, 0);
  write_file(p("f"), data);
  Fd fd = open_ok(p("f"), O_RDWR);
  pwrite_all(fd.get(), "MIDDLE", 9997);
  data.replace(9997, 6, "MIDDLE");
  CHECK(read_file(p("f")) == data);
  CHECK_EQ(fstat_of(fd.get()).st_size, 20000);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: write past EOF leaves a hole that reads as zeros") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  pwrite_all(fd.get(), "head", 0);
  pwrite_all(fd.get(), "tail", kMiB + 3);
  CHECK_EQ(fstat_of(fd.get()).st_size, kMiB + 7);
  std::string all = pread_str(fd.get(), static_cast<size_t>(kMiB) + 100, 0);
  REQUIRE_EQ(all.size(), static_cast<size_t>(kMiB + 7));
  CHECK_EQ(all.substr(0, 4), "head");
  CHECK_EQ(all.substr(static_cast<size_t>(kMiB) + 3), "tail");
  CHECK_EQ(all.find_first_not_of('\0', 4), static_cast<size_t>(kMiB) + 3);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: a file that is all hole reads zeros to its size") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  REQUIRE_EQ(::ftruncate(fd.get(), 3 * kMiB + 5), 0);
  std::string all = pread_str(fd.get(), static_cast<size_t>(4 * kMiB), 0);
  CHECK_EQ(all.size(), static_cast<size_t>(3 * kMiB + 5));
  CHECK_EQ(all.find_first_not_of('\0'), std::string::npos);
  CHECK_LT(fstat_of(fd.get()).st_blocks * 512, kMiB);  // sparse, not materialised
}

TEST_CASE_FIXTURE(Scratch, "posix/io: writes spanning 4 MiB object boundaries read back") {
  constexpr off_t kObj = 4 * kMiB;
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  // Large write across several boundaries, then small unaligned ones straddling them.
  std::string big = pattern(static_cast<size_t>(3 * kObj + 12345), 0, 1);
  pwrite_all(fd.get(), big, 0);
  std::string small = pattern(10, kObj - 3, 2);
  pwrite_all(fd.get(), small, kObj - 3);
  big.replace(static_cast<size_t>(kObj - 3), 10, small);
  std::string odd = pattern(kObj + 2, 2 * kObj - 1, 3);
  pwrite_all(fd.get(), odd, 2 * kObj - 1);
  big.replace(static_cast<size_t>(2 * kObj - 1), odd.size(), odd);
  REQUIRE_EQ(::fsync(fd.get()), 0);
  std::string back = pread_str(fd.get(), big.size() + 10, 0);
  REQUIRE_EQ(back.size(), big.size());
  CHECK(back == big);
  CHECK(pread_str(fd.get(), 7, kObj - 2) == big.substr(static_cast<size_t>(kObj - 2), 7));
}

TEST_CASE_FIXTURE(Scratch, "posix/io: small file grows past the inline size and shrinks back") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  std::string data = pattern(100, 0);
  pwrite_all(fd.get(), data, 0);
  std::string more = pattern(9000, 100);
  pwrite_all(fd.get(), more, 100);  // crosses a 4 KiB inline threshold
  data += more;
  CHECK(pread_str(fd.get(), 20000, 0) == data);
  REQUIRE_EQ(::ftruncate(fd.get(), 50), 0);
  CHECK(pread_str(fd.get(), 20000, 0) == data.substr(0, 50));
  pwrite_all(fd.get(), "x", 5000);
  std::string expect = data.substr(0, 50) + std::string(4950, '\0') + "x";
  CHECK(pread_str(fd.get(), 20000, 0) == expect);
  fd.reset();
  CHECK(read_file(p("f")) == expect);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: sparse write at 5 GiB reads back with 64-bit size") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  std::string data = pattern(8192, 5 * kGiB, 4);
  pwrite_all(fd.get(), data, 5 * kGiB);
  REQUIRE_EQ(::fsync(fd.get()), 0);
  struct stat st = fstat_of(fd.get());
  CHECK_EQ(st.st_size, 5 * kGiB + 8192);
  CHECK_LT(st.st_blocks * 512, 64 * kMiB);  // the hole below costs nothing
  CHECK(pread_str(fd.get(), 8192, 5 * kGiB) == data);
  std::string hole = pread_str(fd.get(), 4096, 4 * kGiB + 12345);
  CHECK_EQ(hole, std::string(4096, '\0'));
  CHECK_EQ(pread_str(fd.get(), 100, 5 * kGiB + 8192), "");
  fd.reset();
  CHECK_EQ(stat_of(p("f")).st_size, 5 * kGiB + 8192);
  Fd again = open_ok(p("f"), O_RDONLY);
  CHECK(pread_str(again.get(), 8192, 5 * kGiB) == data);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: data on both sides of the 4 GiB boundary") {
  constexpr off_t k4G = 4 * kGiB;
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  std::string data = pattern(100000, k4G - 50000, 5);
  pwrite_all(fd.get(), data, k4G - 50000);
  pwrite_all(fd.get(), "low", 10);
  CHECK(pread_str(fd.get(), 100000, k4G - 50000) == data);
  CHECK(pread_str(fd.get(), 10, k4G - 5) == data.substr(49995, 10));
  CHECK_EQ(pread_str(fd.get(), 3, 10), "low");
  CHECK_EQ(fstat_of(fd.get()).st_size, k4G + 50000);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: lseek beyond 4 GiB and write through the offset") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  CHECK_EQ(::lseek(fd.get(), 6 * kGiB, SEEK_SET), 6 * kGiB);
  CHECK_EQ(::write(fd.get(), "far", 3), 3);
  CHECK_EQ(::lseek(fd.get(), 0, SEEK_END), 6 * kGiB + 3);
  CHECK_EQ(::lseek(fd.get(), -3, SEEK_END), 6 * kGiB);
  char buf[3];
  CHECK_EQ(::read(fd.get(), buf, 3), 3);
  CHECK_EQ(std::string(buf, 3), "far");
  Fd app = open_ok(p("f"), O_WRONLY | O_APPEND);
  CHECK_EQ(::write(app.get(), "+", 1), 1);
  CHECK_EQ(fstat_of(fd.get()).st_size, 6 * kGiB + 4);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: lseek errors and SEEK_DATA/SEEK_HOLE bounds") {
  write_file(p("f"), "0123456789");
  Fd fd = open_ok(p("f"), O_RDONLY);
  DFS_CHECK_ERRNO(::lseek(fd.get(), -1, SEEK_SET), EINVAL);
  DFS_CHECK_ERRNO(::lseek(fd.get(), 0, 12345), EINVAL);
  DFS_CHECK_ERRNO(::lseek(fd.get(), 10, SEEK_DATA), ENXIO);
  DFS_CHECK_ERRNO(::lseek(fd.get(), 100, SEEK_HOLE), ENXIO);
  CHECK_EQ(::lseek(fd.get(), 3, SEEK_DATA), 3);
  off_t hole = ::lseek(fd.get(), 0, SEEK_HOLE);
  CHECK_EQ(hole, 10);  // the implicit hole at EOF
}

TEST_CASE_FIXTURE(Scratch, "posix/io: readv and writev move whole vectors") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  std::string a = "first-", b(5000, 'b'), c = "-last";
  iovec out[3] = {{a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}};
  CHECK_EQ(::writev(fd.get(), out, 3), static_cast<ssize_t>(a.size() + b.size() + c.size()));
  std::string x(6, '\0'), y(5000, '\0'), z(10, '\0');
  iovec in[3] = {{x.data(), x.size()}, {y.data(), y.size()}, {z.data(), z.size()}};
  CHECK_EQ(::preadv(fd.get(), in, 3, 0), 5011);
  CHECK_EQ(x, a);
  CHECK(y == b);
  CHECK_EQ(z.substr(0, 5), c);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: read on a directory descriptor gives EISDIR") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  Fd fd = open_ok(p("d"), O_RDONLY | O_DIRECTORY);
  char buf[8];
  DFS_CHECK_ERRNO(::read(fd.get(), buf, sizeof(buf)), EISDIR);
  DFS_CHECK_ERRNO(::pread(fd.get(), buf, sizeof(buf), 0), EISDIR);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: closed or negative descriptors give EBADF") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  int raw = fd.release();
  REQUIRE_EQ(::close(raw), 0);
  char c = 0;
  DFS_CHECK_ERRNO(::read(raw, &c, 1), EBADF);
  DFS_CHECK_ERRNO(::write(raw, &c, 1), EBADF);
  DFS_CHECK_ERRNO(::close(raw), EBADF);
  DFS_CHECK_ERRNO(::pwrite(-1, &c, 1, 0), EBADF);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: pwrite and pread with a negative offset give EINVAL") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  char c = 'x';
  DFS_CHECK_ERRNO(::pwrite(fd.get(), &c, 1, -1), EINVAL);
  DFS_CHECK_ERRNO(::pread(fd.get(), &c, 1, -1), EINVAL);
  CHECK_EQ(fstat_of(fd.get()).st_size, 0);
}

TEST_CASE_FIXTURE(Scratch, "posix/io: zero-length read and write succeed and change nothing") {
  write_file(p("f"), "abc");
  Fd fd = open_ok(p("f"), O_RDWR);
  char c = 'x';
  CHECK_EQ(::write(fd.get(), &c, 0), 0);
  CHECK_EQ(::pwrite(fd.get(), &c, 0, 100), 0);
  CHECK_EQ(::read(fd.get(), &c, 0), 0);
  CHECK_EQ(fstat_of(fd.get()).st_size, 3);
  CHECK_EQ(read_file(p("f")), "abc");
}

TEST_CASE_FIXTURE(Scratch, "posix/io: two descriptors see each other's writes") {
  Fd w = open_ok(p("f"), O_RDWR | O_CREAT);
  Fd r = open_ok(p("f"), O_RDONLY);
  for (int i = 0; i < 50; ++i) {
    std::string chunk = pattern(777, static_cast<uint64_t>(i) * 777, 6);
    pwrite_all(w.get(), chunk, static_cast<off_t>(i) * 777);
    CHECK(pread_str(r.get(), 777, static_cast<off_t>(i) * 777) == chunk);
  }
  CHECK_EQ(fstat_of(r.get()).st_size, 50 * 777);
}

}  // namespace dfs::posix
