// Permission checks for unprivileged callers (forked children with dropped credentials):
// read/write/search bits, owner/group/other classes, sticky directories, root's overrides.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {
namespace {

int open_as(const Cred& cred, const std::string& path, int flags) {
  return as_user(cred, [&] { return open_err(path, flags); });
}

}  // namespace

TEST_CASE_FIXTURE(Scratch, "posix/access: reading a 0600 root file gives EACCES") {
  write_file(p("secret"), "root only", 0600);
  CHECK_EQ(errno_name(open_as(kNobody, p("secret"), O_RDONLY)), "EACCES");
  CHECK_EQ(errno_name(open_as(kUser1, p("secret"), O_RDONLY)), "EACCES");
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::access(p("secret").c_str(), R_OK)); }), "EACCES");
  // stat needs only search permission on the directory.
  CHECK_EQ(user_err(kUser1,
                    [&] {
                      struct stat st {};
                      return err_of(::stat(p("secret").c_str(), &st));
                    }),
           "OK");
}

TEST_CASE_FIXTURE(Scratch, "posix/access: writing a 0644 root file gives EACCES") {
  write_file(p("f"), "keep", 0644);
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_WRONLY)), "EACCES");
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDWR)), "EACCES");
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDONLY | O_TRUNC)), "EACCES");
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::truncate(p("f").c_str(), 0)); }), "EACCES");
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDONLY)), "OK");
  CHECK_EQ(read_file(p("f")), "keep");
}

TEST_CASE_FIXTURE(Scratch, "posix/access: creating in a 0755 root dir gives EACCES") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("d/existing"), "x");
  auto try_all = [&] {
    int e = open_err(p("d/new"), O_CREAT | O_WRONLY);
    if (e != EACCES) return 100 + e;
    if (int e2 = err_of(::mkdir(p("d/sub").c_str(), 0755)); e2 != EACCES) return 150 + e2;
    if (int e3 = err_of(::symlink("x", p("d/l").c_str())); e3 != EACCES) return 200 + e3;
    return err_of(::unlink(p("d/existing").c_str()));
  };
  CHECK_EQ(user_err(kUser1, try_all), "EACCES");
  CHECK_FALSE(exists(p("d/new")));
  CHECK(exists(p("d/existing")));
}

TEST_CASE_FIXTURE(Scratch, "posix/access: traversing a 0700 dir gives EACCES") {
  REQUIRE_EQ(::mkdir(p("private").c_str(), 0700), 0);
  write_file(p("private/f"), "x", 0644);
  REQUIRE_EQ(::mkdir(p("private/sub").c_str(), 0755), 0);
  CHECK_EQ(errno_name(open_as(kUser1, p("private/f"), O_RDONLY)), "EACCES");
  CHECK_EQ(user_err(kUser1,
                    [&] {
                      struct stat st {};
                      return err_of(::stat(p("private/sub").c_str(), &st));
                    }),
           "EACCES");
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::chdir(p("private").c_str())); }), "EACCES");
  CHECK_EQ(errno_name(open_as(kUser1, p("private"), O_RDONLY | O_DIRECTORY)), "EACCES");
}

TEST_CASE_FIXTURE(Scratch, "posix/access: search without read allows lookup but not listing") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0711), 0);
  write_file(p("d/known"), "found");
  CHECK_EQ(errno_name(open_as(kUser1, p("d/known"), O_RDONLY)), "OK");
  CHECK_EQ(errno_name(open_as(kUser1, p("d"), O_RDONLY | O_DIRECTORY)), "EACCES");
  // Read without search lists names but cannot reach the files.
  REQUIRE_EQ(::chmod(p("d").c_str(), 0744), 0);
  CHECK_EQ(errno_name(open_as(kUser1, p("d"), O_RDONLY | O_DIRECTORY)), "OK");
  CHECK_EQ(errno_name(open_as(kUser1, p("d/known"), O_RDONLY)), "EACCES");
}

TEST_CASE_FIXTURE(Scratch, "posix/access: owner, group and other classes are exclusive") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, 5000), 0);
  REQUIRE_EQ(::chmod(p("f").c_str(), 0074), 0);  // owner ---, group rwx, other r--
  Cred owner_in_group{kUser1.uid, kUser1.gid, {5000}};
  Cred group_member{kUser2.uid, kUser2.gid, {5000}};
  // The owner class applies even though the group class would allow more.
  CHECK_EQ(errno_name(open_as(owner_in_group, p("f"), O_RDONLY)), "EACCES");
  CHECK_EQ(errno_name(open_as(group_member, p("f"), O_RDWR)), "OK");
  CHECK_EQ(errno_name(open_as(kUser2, p("f"), O_RDONLY)), "OK");
  CHECK_EQ(errno_name(open_as(kUser2, p("f"), O_WRONLY)), "EACCES");
  Cred primary_group{kUser2.uid, 5000, {}};
  CHECK_EQ(errno_name(open_as(primary_group, p("f"), O_RDWR)), "OK");
}

TEST_CASE_FIXTURE(Scratch, "posix/access: access() reports R_OK, W_OK and X_OK per caller") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::chmod(p("f").c_str(), 0754), 0);
  auto access_as = [&](const Cred& c, int mode) {
    return user_err(c, [&] { return err_of(::access(p("f").c_str(), mode)); });
  };
  CHECK_EQ(access_as(kUser1, R_OK), "OK");
  CHECK_EQ(access_as(kUser1, W_OK), "EACCES");
  CHECK_EQ(access_as(kUser1, X_OK), "EACCES");
  Cred root_group{kUser1.uid, 0, {}};
  CHECK_EQ(access_as(root_group, R_OK | X_OK), "OK");
  CHECK_EQ(access_as(root_group, W_OK), "EACCES");
  CHECK_EQ(access_as(kUser1, F_OK), "OK");
}

TEST_CASE_FIXTURE(Scratch, "posix/access: removing needs write and search on the parent") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::chown(p("d").c_str(), kUser1.uid, kUser1.gid), 0);
  write_file(p("d/f"), "x", 0600);  // root's file in user1's dir
  REQUIRE_EQ(::mkdir(p("d/sub").c_str(), 0700), 0);
  CHECK_EQ(user_err(kUser2, [&] { return err_of(::unlink(p("d/f").c_str())); }), "EACCES");
  CHECK_EQ(user_err(kUser2, [&] { return err_of(::rmdir(p("d/sub").c_str())); }), "EACCES");
  // The directory's owner may remove entries it cannot read.
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::unlink(p("d/f").c_str())); }), "OK");
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::rmdir(p("d/sub").c_str())); }), "OK");
  CHECK_FALSE(exists(p("d/f")));
}

TEST_CASE_FIXTURE(Scratch, "posix/access: sticky dir protects other users' entries") {
  REQUIRE_EQ(::mkdir(p("tmp").c_str(), 0777), 0);
  REQUIRE_EQ(::chmod(p("tmp").c_str(), 01777), 0);
  CHECK_EQ(user_err(kUser1,
                    [&] {
                      int fd = ::open(p("tmp/mine").c_str(), O_CREAT | O_WRONLY, 0666);
                      if (fd < 0) return errno;
                      ::close(fd);
                      return err_of(::mkdir(p("tmp/mydir").c_str(), 0777));
                    }),
           "OK");
  REQUIRE_EQ(::chmod(p("tmp/mine").c_str(), 0666), 0);
  CHECK_EQ(user_err(kUser2, [&] { return err_of(::unlink(p("tmp/mine").c_str())); }), "EPERM");
  CHECK_EQ(
      user_err(kUser2, [&] { return err_of(::rename(p("tmp/mine").c_str(), p("tmp/x").c_str())); }),
      "EPERM");
  CHECK_EQ(user_err(kUser2, [&] { return err_of(::rmdir(p("tmp/mydir").c_str())); }), "EPERM");
  // Writing into the world-writable file itself is still allowed.
  CHECK_EQ(errno_name(open_as(kUser2, p("tmp/mine"), O_WRONLY)), "OK");
  CHECK(exists(p("tmp/mine")));
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::unlink(p("tmp/mine").c_str())); }), "OK");
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::rmdir(p("tmp/mydir").c_str())); }), "OK");
  CHECK_FALSE(exists(p("tmp/mine")));
}

TEST_CASE_FIXTURE(Scratch, "posix/access: in a sticky dir the dir owner and root may remove") {
  REQUIRE_EQ(::mkdir(p("tmp").c_str(), 0777), 0);
  REQUIRE_EQ(::chown(p("tmp").c_str(), kUser2.uid, kUser2.gid), 0);
  REQUIRE_EQ(::chmod(p("tmp").c_str(), 01777), 0);
  auto create = [&](const char* name) {
    return as_user(kUser1, [&] { return open_err(p(name), O_CREAT | O_WRONLY); });
  };
  REQUIRE_EQ(create("tmp/a"), 0);
  REQUIRE_EQ(create("tmp/b"), 0);
  CHECK_EQ(user_err(kUser2, [&] { return err_of(::unlink(p("tmp/a").c_str())); }), "OK");
  CHECK_EQ(user_err(kNobody, [&] { return err_of(::unlink(p("tmp/b").c_str())); }), "EPERM");
  DFS_CHECK_OK(::unlink(p("tmp/b").c_str()));
}

TEST_CASE_FIXTURE(Scratch, "posix/access: root reads and writes regardless of mode bits") {
  write_file(p("f"), "x", 0000);
  REQUIRE_EQ(::chmod(p("f").c_str(), 0000), 0);
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0000), 0);
  CHECK_EQ(errno_name(open_err(p("f"), O_RDWR)), "OK");
  write_file(p("d/inside"), "y");
  CHECK_EQ(read_file(p("d/inside")), "y");
  // Execute needs at least one x bit even for root.
  DFS_CHECK_ERRNO(::access(p("f").c_str(), X_OK), EACCES);
}

TEST_CASE_FIXTURE(Scratch, "posix/access: execve of a file without x gives EACCES") {
  write_file(p("script"), "#!/bin/sh\nexit 7\n", 0644);
  CHECK_EQ(user_err(kUser1,
                    [&] {
                      char* const argv[] = {nullptr};
                      ::execve(p("script").c_str(), argv, argv);
                      return errno;
                    }),
           "EACCES");
  REQUIRE_EQ(::chmod(p("script").c_str(), 0755), 0);
  CHECK_EQ(as_user(kUser1,
                   [&] {
                     char* const argv[] = {nullptr};
                     ::execve(p("script").c_str(), argv, argv);
                     return 100 + errno;
                   }),
           7);
}

TEST_CASE_FIXTURE(Scratch, "posix/access: rename needs write access to both parents") {
  REQUIRE_EQ(::mkdir(p("mine").c_str(), 0755), 0);
  REQUIRE_EQ(::chown(p("mine").c_str(), kUser1.uid, kUser1.gid), 0);
  REQUIRE_EQ(::mkdir(p("roots").c_str(), 0755), 0);
  write_file(p("mine/f"), "x");
  write_file(p("roots/g"), "y");
  CHECK_EQ(
      user_err(kUser1, [&] { return err_of(::rename(p("mine/f").c_str(), p("roots/f").c_str())); }),
      "EACCES");
  CHECK_EQ(
      user_err(kUser1, [&] { return err_of(::rename(p("roots/g").c_str(), p("mine/g").c_str())); }),
      "EACCES");
  CHECK_EQ(
      user_err(kUser1, [&] { return err_of(::rename(p("mine/f").c_str(), p("mine/h").c_str())); }),
      "OK");
  CHECK(exists(p("roots/g")));
}

}  // namespace dfs::posix
