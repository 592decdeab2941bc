// readdir/getdents64: completeness, d_type/d_ino, large directories, concurrent changes and
// telldir/seekdir stability.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "tests/posix/posix_support.h"

namespace dfs::posix {
namespace {

struct Entry {
  std::string name;
  ino_t ino;
  unsigned char type;
};

// One getdents64 call; appends its entries. Returns the byte count (0 at the end, -1 error).
long getdents_batch(int fd, size_t buf_bytes, std::vector<Entry>& out) {
  std::vector<char> buf(buf_bytes);
  long n = ::syscall(SYS_getdents64, fd, buf.data(), buf.size());
  for (long pos = 0; pos < n;) {
    struct Dirent64 {
      uint64_t d_ino;
      int64_t d_off;
      unsigned short d_reclen;
      unsigned char d_type;
      char d_name[1];
    };
    const auto* d = reinterpret_cast<const Dirent64*>(buf.data() + pos);
    out.push_back({d->d_name, static_cast<ino_t>(d->d_ino), d->d_type});
    pos += d->d_reclen;
  }
  return n;
}

// All entries via getdents64 with a large buffer; REQUIREs success.
std::vector<Entry> read_all(const std::string& path) {
  Fd fd = open_ok(path, O_RDONLY | O_DIRECTORY);
  std::vector<Entry> out;
  for (;;) {
    long n = getdents_batch(fd.get(), 1 << 20, out);
    REQUIRE_MESSAGE(n >= 0, "getdents64: " << errno_name(errno));
    if (n == 0) break;
  }
  return out;
}

void make_files(const std::string& dir, int count, const std::string& prefix = "e") {
  Fd dfd = open_ok(dir, O_RDONLY | O_DIRECTORY);
  for (int i = 0; i < count; ++i) {
    std::string name = prefix + std::to_string(i);
    int fd = ::openat(dfd.get(), name.c_str(), O_CREAT | O_WRONLY | O_EXCL, 0644);
    REQUIRE_MESSAGE(fd >= 0, "create " << name << ": " << errno_name(errno));
    ::close(fd);
  }
}

}  // namespace

TEST_CASE_FIXTURE(Scratch, "posix/readdir: an empty directory has exactly '.' and '..'") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  std::vector<Entry> entries = read_all(p("d"));
  REQUIRE_EQ(entries.size(), 2u);
  std::map<std::string, Entry> by_name;
  for (const Entry& e : entries) by_name.emplace(e.name, e);
  REQUIRE(by_name.count(".") == 1);
  REQUIRE(by_name.count("..") == 1);
  CHECK_EQ(by_name["."].ino, stat_of(p("d")).st_ino);
  CHECK_EQ(by_name[".."].ino, stat_of(dir()).st_ino);
  CHECK_EQ(by_name["."].type, DT_DIR);
  CHECK_EQ(by_name[".."].type, DT_DIR);
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: every entry appears exactly once with its inode") {
  constexpr int kCount = 1500;
  make_files(dir(), kCount);
  std::unordered_map<std::string, int> seen;
  std::vector<Entry> entries = read_all(dir());
  for (const Entry& e : entries) ++seen[e.name];
  CHECK_EQ(entries.size(), static_cast<size_t>(kCount + 2));
  int dupes = 0, missing = 0, bad_ino = 0;
  for (int i = 0; i < kCount; ++i) {
    std::string name = "e" + std::to_string(i);
    if (seen[name] == 0) ++missing;
    if (seen[name] > 1) ++dupes;
  }
  for (const Entry& e : entries) {
    if (e.name != "." && e.name != ".." && e.ino != lstat_of(p(e.name)).st_ino) ++bad_ino;
  }
  CHECK_EQ(missing, 0);
  CHECK_EQ(dupes, 0);
  CHECK_EQ(bad_ino, 0);
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: d_type matches the file type") {
  write_file(p("file"), "x");
  REQUIRE_EQ(::mkdir(p("dir").c_str(), 0755), 0);
  REQUIRE_EQ(::symlink("file", p("link").c_str()), 0);
  REQUIRE_EQ(::mkfifo(p("fifo").c_str(), 0644), 0);
  REQUIRE_EQ(::mknod(p("chr").c_str(), S_IFCHR | 0600, makedev(1, 3)), 0);
  REQUIRE_EQ(::mknod(p("blk").c_str(), S_IFBLK | 0600, makedev(7, 0)), 0);
  REQUIRE_EQ(errno_name(bind_socket(dir(), "sock")), "OK");
  std::map<std::string, unsigned char> types;
  for (const Entry& e : read_all(dir())) types[e.name] = e.type;
  CHECK_EQ(types.size(), 9u);
  CHECK_EQ(types["file"], DT_REG);
  CHECK_EQ(types["dir"], DT_DIR);
  CHECK_EQ(types["link"], DT_LNK);
  CHECK_EQ(types["fifo"], DT_FIFO);
  CHECK_EQ(types["chr"], DT_CHR);
  CHECK_EQ(types["blk"], DT_BLK);
  CHECK_EQ(types["sock"], DT_SOCK);
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: 100000 entries are all listed once") {
  constexpr int kCount = 100000;
  REQUIRE_EQ(::mkdir(p("big").c_str(), 0755), 0);
  make_files(p("big"), kCount, "entry-with-a-longer-name-");
  std::vector<Entry> entries = read_all(p("big"));
  CHECK_EQ(entries.size(), static_cast<size_t>(kCount + 2));
  std::vector<uint8_t> seen(kCount, 0);
  int dupes = 0, strangers = 0;
  const std::string prefix = "entry-with-a-longer-name-";
  for (const Entry& e : entries) {
    if (e.name == "." || e.name == "..") continue;
    if (e.name.compare(0, prefix.size(), prefix) != 0) {
      ++strangers;
      continue;
    }
    int i = std::stoi(e.name.substr(prefix.size()));
    if (i < 0 || i >= kCount) {
      ++strangers;
    } else if (seen[i]++ != 0) {
      ++dupes;
    }
  }
  CHECK_EQ(dupes, 0);
  CHECK_EQ(strangers, 0);
  CHECK_EQ(std::count(seen.begin(), seen.end(), 0), 0);
  CHECK_EQ(stat_of(p("big")).st_nlink, 2);
  // Lookups in the large directory still work.
  CHECK(S_ISREG(stat_of(p("big/" + prefix + "54321")).st_mode));
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: unlinking seen entries does not repeat or skip") {
  constexpr int kCount = 3000;
  make_files(dir(), kCount);
  Fd fd = open_ok(dir(), O_RDONLY | O_DIRECTORY);
  std::unordered_map<std::string, int> seen;
  for (;;) {
    std::vector<Entry> batch;
    long n = getdents_batch(fd.get(), 2048, batch);  // small batches: many resumptions
    REQUIRE_MESSAGE(n >= 0, errno_name(errno));
    if (n == 0) break;
    for (const Entry& e : batch) {
      ++seen[e.name];
      if (e.name != "." && e.name != "..") REQUIRE_EQ(::unlink(p(e.name).c_str()), 0);
    }
  }
  int dupes = 0, missing = 0;
  for (const auto& [name, count] : seen) dupes += count > 1;
  for (int i = 0; i < kCount; ++i) missing += seen.count("e" + std::to_string(i)) == 0;
  CHECK_EQ(dupes, 0);
  CHECK_EQ(missing, 0);  // every entry was present until it had been seen
  CHECK_EQ(list_dir(dir()).size(), 2u);
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: concurrent creates do not repeat or hide old entries") {
  constexpr int kCount = 2000;
  make_files(dir(), kCount);
  Fd fd = open_ok(dir(), O_RDONLY | O_DIRECTORY);
  std::unordered_map<std::string, int> seen;
  int created = 0;
  for (;;) {
    std::vector<Entry> batch;
    long n = getdents_batch(fd.get(), 2048, batch);
    REQUIRE(n >= 0);
    if (n == 0) break;
    for (const Entry& e : batch) ++seen[e.name];
    for (int k = 0; k < 5; ++k) write_file(p("new" + std::to_string(created++)), "");
  }
  int dupes = 0, missing = 0;
  for (const auto& [name, count] : seen) dupes += count > 1;
  for (int i = 0; i < kCount; ++i) missing += seen.count("e" + std::to_string(i)) == 0;
  CHECK_EQ(dupes, 0);
  CHECK_EQ(missing, 0);
  CHECK_EQ(list_dir(dir()).size(), static_cast<size_t>(kCount + created + 2));
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: telldir/seekdir return to the same entry") {
  constexpr int kCount = 700;
  make_files(dir(), kCount);
  DIR* d = ::opendir(dir().c_str());
  REQUIRE(d != nullptr);
  std::vector<std::pair<long, std::string>> positions;
  for (;;) {
    long pos = ::telldir(d);
    dirent* e = ::readdir(d);
    if (e == nullptr) break;
    positions.emplace_back(pos, e->d_name);
  }
  CHECK_EQ(positions.size(), static_cast<size_t>(kCount + 2));
  int mismatches = 0;
  for (size_t i = 0; i < positions.size(); i += 37) {
    ::seekdir(d, positions[i].first);
    dirent* e = ::readdir(d);
    if (e == nullptr || positions[i].second != e->d_name) ++mismatches;
    // Continuing from there yields the following entry too.
    if (i + 1 < positions.size()) {
      e = ::readdir(d);
      if (e == nullptr || positions[i + 1].second != e->d_name) ++mismatches;
    }
  }
  ::seekdir(d, positions.back().first);
  dirent* last = ::readdir(d);
  CHECK((last != nullptr && positions.back().second == last->d_name));
  CHECK(::readdir(d) == nullptr);
  ::closedir(d);
  CHECK_EQ(mismatches, 0);
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: seekdir positions survive removal of other entries") {
  constexpr int kCount = 500;
  make_files(dir(), kCount);
  DIR* d = ::opendir(dir().c_str());
  REQUIRE(d != nullptr);
  std::vector<std::pair<long, std::string>> positions;
  for (;;) {
    long pos = ::telldir(d);
    dirent* e = ::readdir(d);
    if (e == nullptr) break;
    positions.emplace_back(pos, e->d_name);
  }
  // Remove every other regular entry before the probes.
  std::set<std::string> removed;
  for (size_t i = 0; i < positions.size(); i += 2) {
    const std::string& name = positions[i].second;
    if (name == "." || name == "..") continue;
    REQUIRE_EQ(::unlink(p(name).c_str()), 0);
    removed.insert(name);
  }
  int mismatches = 0;
  for (size_t i = 1; i < positions.size(); i += 2) {
    if (removed.count(positions[i].second) != 0) continue;
    ::seekdir(d, positions[i].first);
    dirent* e = ::readdir(d);
    if (e == nullptr || positions[i].second != e->d_name) ++mismatches;
  }
  ::closedir(d);
  CHECK_EQ(mismatches, 0);
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: rewinddir sees additions and removals") {
  write_file(p("a"), "");
  write_file(p("b"), "");
  DIR* d = ::opendir(dir().c_str());
  REQUIRE(d != nullptr);
  int first = 0;
  while (::readdir(d) != nullptr) ++first;
  CHECK_EQ(first, 4);
  write_file(p("c"), "");
  REQUIRE_EQ(::unlink(p("a").c_str()), 0);
  ::rewinddir(d);
  std::multiset<std::string> names;
  while (dirent* e = ::readdir(d)) names.insert(e->d_name);
  ::closedir(d);
  CHECK_EQ(names, std::multiset<std::string>{".", "..", "b", "c"});
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: long names are returned intact") {
  std::set<std::string> expect = {".", ".."};
  for (int i = 0; i < 100; ++i) {
    std::string name = std::to_string(i) + std::string(255 - std::to_string(i).size(), 'n');
    write_file(p(name), "");
    expect.insert(name);
  }
  std::set<std::string> got;
  for (const Entry& e : read_all(dir())) got.insert(e.name);
  CHECK(got == expect);
}

TEST_CASE_FIXTURE(Scratch, "posix/readdir: opendir errors") {
  write_file(p("f"), "");
  errno = 0;
  CHECK(::opendir(p("f").c_str()) == nullptr);
  CHECK_EQ(errno_name(errno), "ENOTDIR");
  errno = 0;
  CHECK(::opendir(p("missing").c_str()) == nullptr);
  CHECK_EQ(errno_name(errno), "ENOENT");
  Fd fd = open_ok(p("f"), O_RDONLY);
  char buf[1024];
  DFS_CHECK_ERRNO(::syscall(SYS_getdents64, fd.get(), buf, sizeof(buf)), ENOTDIR);
}

}  // namespace dfs::posix
