// Name and path limits: 255-byte names work everywhere, 256 gives ENAMETOOLONG for every
// entry-creating call and in middle components; PATH_MAX; unusual but legal names.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {
namespace {

const std::string kName255(255, 'n');
const std::string kName256(256, 'n');

}  // namespace

TEST_CASE_FIXTURE(Scratch, "posix/names: 255-byte names work for every kind of entry") {
  std::string f = std::string(254, 'f') + "1", d = std::string(254, 'd') + "2";
  std::string l = std::string(254, 'l') + "3", h = std::string(254, 'h') + "4";
  write_file(p(f), "long");
  REQUIRE_EQ(::mkdir(p(d).c_str(), 0755), 0);
  REQUIRE_EQ(::symlink(f.c_str(), p(l).c_str()), 0);
  REQUIRE_EQ(::link(p(f).c_str(), p(h).c_str()), 0);
  REQUIRE_EQ(::mkfifo(p(d + "/" + kName255).c_str(), 0644), 0);
  CHECK_EQ(read_file(p(l)), "long");
  CHECK_EQ(read_file(p(h)), "long");
  CHECK_EQ(list_dir(dir()).count(f), 1u);
  DFS_CHECK_OK(::rename(p(f).c_str(), p(kName255).c_str()));
  CHECK_EQ(read_file(p(kName255)), "long");
}

TEST_CASE_FIXTURE(Scratch, "posix/names: a 256-byte name gives ENAMETOOLONG everywhere") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  const std::string bad = p(kName256);
  struct stat st {};
  CHECK_EQ(errno_name(open_err(bad, O_CREAT | O_WRONLY)), "ENAMETOOLONG");
  CHECK_EQ(errno_name(open_err(bad, O_RDONLY)), "ENAMETOOLONG");
  DFS_CHECK_ERRNO(::mkdir(bad.c_str(), 0755), ENAMETOOLONG);
  DFS_CHECK_ERRNO(::symlink("f", bad.c_str()), ENAMETOOLONG);
  DFS_CHECK_ERRNO(::link(p("f").c_str(), bad.c_str()), ENAMETOOLONG);
  DFS_CHECK_ERRNO(::rename(p("f").c_str(), bad.c_str()), ENAMETOOLONG);
  DFS_CHECK_ERRNO(::mknod(bad.c_str(), S_IFIFO | 0644, 0), ENAMETOOLONG);
  DFS_CHECK_ERRNO(::stat(bad.c_str(), &st), ENAMETOOLONG);
  DFS_CHECK_ERRNO(::unlink(bad.c_str()), ENAMETOOLONG);
  DFS_CHECK_ERRNO(::rmdir(bad.c_str()), ENAMETOOLONG);
  DFS_CHECK_ERRNO(::setxattr(bad.c_str(), "user.a", "v", 1, 0), ENAMETOOLONG);
  CHECK_EQ(list_dir(dir()).size(), 4u);
}

TEST_CASE_FIXTURE(Scratch, "posix/names: a long middle component gives ENAMETOOLONG") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  struct stat st {};
  DFS_CHECK_ERRNO(::stat(p(kName256 + "/x").c_str(), &st), ENAMETOOLONG);
  CHECK_EQ(errno_name(open_err(p("d/" + kName256 + "/x"), O_CREAT | O_WRONLY)), "ENAMETOOLONG");
  DFS_CHECK_ERRNO(::mkdir(p("d/" + kName256 + "/sub").c_str(), 0755), ENAMETOOLONG);
}

TEST_CASE_FIXTURE(Scratch, "posix/names: paths of PATH_MAX bytes give ENAMETOOLONG") {
  // Build a real deep tree so that the limit, not a missing component, is what fails.
  std::string rel;
  std::string comp(200, 'p');
  while (dir().size() + rel.size() + comp.size() + 2 < 4000) {
    rel += (rel.empty() ? "" : "/") + comp;
    REQUIRE_EQ(::mkdir(p(rel).c_str(), 0755), 0);
  }
  std::string ok_path = p(rel + "/f");
  REQUIRE_LT(ok_path.size(), 4096u);
  write_file(ok_path, "deep");
  CHECK_EQ(read_file(ok_path), "deep");
  std::string too_long = p(rel + "/" + std::string(4096 - (p(rel).size() + 1), 'z'));
  REQUIRE_GE(too_long.size(), 4096u);
  CHECK_EQ(errno_name(open_err(too_long, O_CREAT | O_WRONLY)), "ENAMETOOLONG");
  // The same file is reachable by a relative path from a descriptor.
  Fd dfd = open_ok(p(rel), O_RDONLY | O_DIRECTORY);
  Fd f(::openat(dfd.get(), "f", O_RDONLY));
  CHECK(f);
}

TEST_CASE_FIXTURE(Scratch, "posix/names: unusual bytes are legal in names") {
  std::vector<std::string> names = {
      " leading space", "trailing space ",   "-dash",       "new\nline",
      "tab\there",      "\x01\x7f\xff",      "...",         "..more",
      "*?[]",           "\xe2\x9c\x93 utf8", "back\\slash", "quote\"s'"};
  for (const auto& n : names) {
    CAPTURE(n);
    write_file(p(n), n);
  }
  std::multiset<std::string> listed = list_dir(dir());
  for (const auto& n : names) {
    CAPTURE(n);
    CHECK_EQ(listed.count(n), 1u);
    CHECK_EQ(read_file(p(n)), n);
  }
  CHECK_EQ(listed.size(), names.size() + 2);
}

TEST_CASE_FIXTURE(Scratch, "posix/names: names are case sensitive") {
  write_file(p("Name"), "upper");
  write_file(p("name"), "lower");
  write_file(p("NAME"), "caps");
  CHECK_EQ(read_file(p("Name")), "upper");
  CHECK_EQ(read_file(p("name")), "lower");
  CHECK_EQ(read_file(p("NAME")), "caps");
  CHECK_EQ(list_dir(dir()).size(), 5u);
}

TEST_CASE_FIXTURE(Scratch, "posix/names: repeated and trailing slashes resolve") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("d/f"), "x");
  CHECK_EQ(read_file(dir() + "//d///f"), "x");
  CHECK_EQ(read_file(p("d/./f")), "x");
  CHECK(S_ISDIR(stat_of(p("d//")).st_mode));
  CHECK(S_ISDIR(stat_of(p("d/.//")).st_mode));
}

}  // namespace dfs::posix
