// truncate(2) and ftruncate(2): shrinking, growing, zeros after re-extension, errors.
#include <fcntl.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {

constexpr off_t kMiB = off_t{1} << 20;

TEST_CASE_FIXTURE(Scratch, "posix/truncate: shrinking cuts the data at the new size") {
  std::string data = pattern(50000, 0);
  write_file(p("f"), data);
  REQUIRE_EQ(::truncate(p("f").c_str(), 12345), 0);
  CHECK_EQ(stat_of(p("f")).st_size, 12345);
  CHECK(read_file(p("f")) == data.substr(0, 12345));
}

TEST_CASE_FIXTURE(Scratch, "posix/truncate: growing extends with zeros") {
  write_file(p("f"), "abc");
  REQUIRE_EQ(::truncate(p("f").c_str(), 10000), 0);
  CHECK_EQ(stat_of(p("f")).st_size, 10000);
  CHECK(read_file(p("f")) == "abc" + std::string(9997, '\0'));
}

TEST_CASE_FIXTURE(Scratch, "posix/truncate: data cut off does not come back on re-extension") {
  SUBCASE("unaligned small") {
    std::string data = pattern(10000, 0);
    write_file(p("f"), data);
    REQUIRE_EQ(::truncate(p("f").c_str(), 100), 0);
    REQUIRE_EQ(::truncate(p("f").c_str(), 10000), 0);
    CHECK(read_file(p("f")) == data.substr(0, 100) + std::string(9900, '\0'));
  }
  SUBCASE("across object boundaries") {
    Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
    std::string data = pattern(static_cast<size_t>(9 * kMiB), 0);
    pwrite_all(fd.get(), data, 0);
    REQUIRE_EQ(::fsync(fd.get()), 0);
    REQUIRE_EQ(::ftruncate(fd.get(), 3 * kMiB + 7), 0);
    REQUIRE_EQ(::fsync(fd.get()), 0);
    REQUIRE_EQ(::ftruncate(fd.get(), 9 * kMiB), 0);
    std::string back = pread_str(fd.get(), static_cast<size_t>(9 * kMiB), 0);
    REQUIRE_EQ(back.size(), static_cast<size_t>(9 * kMiB));
    CHECK(back.compare(0, 3 * kMiB + 7, data, 0, 3 * kMiB + 7) == 0);
    CHECK_EQ(back.find_first_not_of('\0', 3 * kMiB + 7), std::string::npos);
  }
  SUBCASE("re-extension by a write past EOF") {
    std::string data = pattern(8192, 0);
    write_file(p("f"), data);
    REQUIRE_EQ(::truncate(p("f").c_str(), 10), 0);
    Fd fd = open_ok(p("f"), O_WRONLY);
    pwrite_all(fd.get(), "Z", 8191);
    fd.reset();
    CHECK(read_file(p("f")) == data.substr(0, 10) + std::string(8181, '\0') + "Z");
  }
}

TEST_CASE_FIXTURE(Scratch, "posix/truncate: ftruncate to zero and rewrite") {
  write_file(p("f"), pattern(100000, 0));
  Fd fd = open_ok(p("f"), O_RDWR);
  REQUIRE_EQ(::ftruncate(fd.get(), 0), 0);
  CHECK_EQ(fstat_of(fd.get()).st_size, 0);
  CHECK_EQ(pread_str(fd.get(), 10, 0), "");
  pwrite_all(fd.get(), "new", 0);
  CHECK_EQ(read_file(p("f")), "new");
}

TEST_CASE_FIXTURE(Scratch, "posix/truncate: does not move the file offset") {
  write_file(p("f"), "0123456789");
  Fd fd = open_ok(p("f"), O_RDWR);
  REQUIRE_EQ(::lseek(fd.get(), 8, SEEK_SET), 8);
  REQUIRE_EQ(::ftruncate(fd.get(), 4), 0);
  CHECK_EQ(::lseek(fd.get(), 0, SEEK_CUR), 8);
  CHECK_EQ(::write(fd.get(), "X", 1), 1);  // leaves a hole at 4..7
  CHECK_EQ(read_file(p("f")), std::string("0123\0\0\0\0X", 9));
}

TEST_CASE_FIXTURE(Scratch, "posix/truncate: error cases") {
  write_file(p("f"), "abc");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(::truncate(p("f").c_str(), -1), EINVAL);
  DFS_CHECK_ERRNO(::truncate(p("missing").c_str(), 0), ENOENT);
  DFS_CHECK_ERRNO(::truncate(p("d").c_str(), 0), EISDIR);
  DFS_CHECK_ERRNO(::truncate(p("f/x").c_str(), 0), ENOTDIR);
  Fd ro = open_ok(p("f"), O_RDONLY);
  DFS_CHECK_ERRNO(::ftruncate(ro.get(), 0), EINVAL);
  Fd dfd = open_ok(p("d"), O_RDONLY | O_DIRECTORY);
  DFS_CHECK_ERRNO(::ftruncate(dfd.get(), 0), EINVAL);
  CHECK_EQ(read_file(p("f")), "abc");
}

TEST_CASE_FIXTURE(Scratch, "posix/truncate: truncate through a symlink changes the target") {
  write_file(p("target"), "0123456789");
  REQUIRE_EQ(::symlink("target", p("link").c_str()), 0);
  REQUIRE_EQ(::truncate(p("link").c_str(), 4), 0);
  CHECK_EQ(read_file(p("target")), "0123");
  CHECK(S_ISLNK(lstat_of(p("link")).st_mode));
}

TEST_CASE_FIXTURE(Scratch, "posix/truncate: visible through another open descriptor") {
  write_file(p("f"), pattern(20000, 0));
  Fd a = open_ok(p("f"), O_RDWR);
  Fd b = open_ok(p("f"), O_RDONLY);
  REQUIRE_EQ(::ftruncate(a.get(), 5), 0);
  CHECK_EQ(fstat_of(b.get()).st_size, 5);
  CHECK_EQ(pread_str(b.get(), 100, 0).size(), 5u);
  REQUIRE_EQ(::ftruncate(a.get(), 20000), 0);
  CHECK_EQ(pread_str(b.get(), 100, 10000), std::string(100, '\0'));
}

}  // namespace dfs::posix
