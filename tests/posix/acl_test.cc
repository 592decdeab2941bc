// POSIX ACLs through the system.posix_acl_access/default xattrs, with blobs encoded here in
// the kernel's xattr format (no libacl dependency): enforcement for named users and groups,
// the mask, chmod interaction, default ACL inheritance and validation.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <vector>

#include "tests/posix/posix_support.h"

namespace dfs::posix {
namespace {

// Tags and the header version of the kernel's posix_acl xattr format (little-endian).
enum : uint16_t {
  kUserObj = 0x01,
  kUser = 0x02,
  kGroupObj = 0x04,
  kGroup = 0x08,
  kMask = 0x10,
  kOther = 0x20,
};
constexpr uint32_t kAclVersion = 2;
constexpr uint32_t kNoId = 0xffffffff;
const char* const kAccess = "system.posix_acl_access";
const char* const kDefault = "system.posix_acl_default";

struct AclEntry {
  uint16_t tag;
  uint16_t perm;  // rwx as 4|2|1
  uint32_t id = kNoId;
};

void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string acl_blob(const std::vector<AclEntry>& entries, uint32_t version = kAclVersion) {
  std::string out;
  put32(out, version);
  for (const AclEntry& e : entries) {
    out += static_cast<char>(e.tag & 0xff);
    out += static_cast<char>(e.tag >> 8);
    out += static_cast<char>(e.perm & 0xff);
    out += static_cast<char>(e.perm >> 8);
    put32(out, e.id);
  }
  return out;
}

int set_acl(const std::string& path, const char* name, const std::string& blob) {
  return err_of(::setxattr(path.c_str(), name, blob.data(), blob.size(), 0));
}

int open_as(const Cred& cred, const std::string& path, int flags) {
  return as_user(cred, [&] { return open_err(path, flags); });
}

// user::rw- user:1000:r-- group::--- mask::r-- other::---
std::string reader_acl() {
  return acl_blob({{kUserObj, 6}, {kUser, 4, kUser1.uid}, {kGroupObj, 0}, {kMask, 4}, {kOther, 0}});
}

}  // namespace

TEST_CASE_FIXTURE(Scratch, "posix/acl: a named-user entry grants that user access") {
  write_file(p("f"), "acl protected", 0600);
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDONLY)), "EACCES");
  REQUIRE_EQ(errno_name(set_acl(p("f"), kAccess, reader_acl())), "OK");
  CHECK_EQ(stat_of(p("f")).st_mode & 0777, 0640);  // group bits show the mask
  CHECK(get_xattr(p("f"), kAccess) == reader_acl());
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDONLY)), "OK");
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_WRONLY)), "EACCES");
  CHECK_EQ(errno_name(open_as(kUser2, p("f"), O_RDONLY)), "EACCES");
  CHECK_EQ(list_xattrs(p("f")).count(kAccess), 1u);
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: a named-group entry grants its members access") {
  write_file(p("f"), "x", 0600);
  std::string acl =
      acl_blob({{kUserObj, 6}, {kGroupObj, 0}, {kGroup, 6, 5000}, {kMask, 6}, {kOther, 0}});
  REQUIRE_EQ(errno_name(set_acl(p("f"), kAccess, acl)), "OK");
  Cred member{kUser2.uid, kUser2.gid, {5000}};
  CHECK_EQ(errno_name(open_as(member, p("f"), O_RDWR)), "OK");
  CHECK_EQ(errno_name(open_as(kUser2, p("f"), O_RDONLY)), "EACCES");
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: the mask limits named entries") {
  write_file(p("f"), "x", 0600);
  std::string acl =
      acl_blob({{kUserObj, 6}, {kUser, 7, kUser1.uid}, {kGroupObj, 0}, {kMask, 4}, {kOther, 0}});
  REQUIRE_EQ(set_acl(p("f"), kAccess, acl), 0);
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDONLY)), "OK");
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_WRONLY)), "EACCES");
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: chmod rewrites the mask entry") {
  write_file(p("f"), "x", 0600);
  REQUIRE_EQ(set_acl(p("f"), kAccess, reader_acl()), 0);
  REQUIRE_EQ(::chmod(p("f").c_str(), 0600), 0);
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDONLY)), "EACCES");
  std::string masked =
      acl_blob({{kUserObj, 6}, {kUser, 4, kUser1.uid}, {kGroupObj, 0}, {kMask, 0}, {kOther, 0}});
  CHECK(get_xattr(p("f"), kAccess) == masked);
  REQUIRE_EQ(::chmod(p("f").c_str(), 0660), 0);
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDONLY)), "OK");
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: removing the access ACL falls back to mode bits") {
  write_file(p("f"), "x", 0600);
  REQUIRE_EQ(set_acl(p("f"), kAccess, reader_acl()), 0);
  REQUIRE_EQ(errno_name(err_of(::removexattr(p("f").c_str(), kAccess))), "OK");
  CHECK_EQ(errno_name(open_as(kUser1, p("f"), O_RDONLY)), "EACCES");
  DFS_CHECK_ERRNO(::getxattr(p("f").c_str(), kAccess, nullptr, 0), ENODATA);
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: a minimal ACL only sets the mode") {
  write_file(p("f"), "x", 0600);
  REQUIRE_EQ(set_acl(p("f"), kAccess, acl_blob({{kUserObj, 7}, {kGroupObj, 5}, {kOther, 4}})), 0);
  CHECK_EQ(stat_of(p("f")).st_mode & 0777, 0754);
  DFS_CHECK_ERRNO(::getxattr(p("f").c_str(), kAccess, nullptr, 0), ENODATA);
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: a default ACL is inherited by new files and subdirs") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  std::string def =
      acl_blob({{kUserObj, 7}, {kUser, 7, kUser1.uid}, {kGroupObj, 5}, {kMask, 7}, {kOther, 0}});
  REQUIRE_EQ(errno_name(set_acl(p("d"), kDefault, def)), "OK");
  CHECK(get_xattr(p("d"), kDefault) == def);
  ::umask(022);  // ignored when the parent has a default ACL
  { Fd fd = open_ok(p("d/f"), O_CREAT | O_WRONLY, 0666); }
  CHECK_EQ(stat_of(p("d/f")).st_mode & 0777, 0660);
  CHECK(get_xattr(p("d/f"), kAccess) ==
        acl_blob({{kUserObj, 6}, {kUser, 7, kUser1.uid}, {kGroupObj, 5}, {kMask, 6}, {kOther, 0}}));
  DFS_CHECK_ERRNO(::getxattr(p("d/f").c_str(), kDefault, nullptr, 0), ENODATA);
  CHECK_EQ(errno_name(open_as(kUser1, p("d/f"), O_RDWR)), "OK");

  REQUIRE_EQ(::mkdir(p("d/sub").c_str(), 0777), 0);
  CHECK_EQ(stat_of(p("d/sub")).st_mode & 0777, 0770);
  CHECK(get_xattr(p("d/sub"), kDefault) == def);
  CHECK(get_xattr(p("d/sub"), kAccess) == def);
  // Inheritance continues below the subdir, also for files created by the named user.
  CHECK_EQ(user_err(kUser1, [&] { return open_err(p("d/sub/by-user"), O_CREAT | O_WRONLY); }),
           "OK");
  CHECK_EQ(stat_of(p("d/sub/by-user")).st_uid, kUser1.uid);
  CHECK_EQ(errno_name(open_as(kUser2, p("d/sub/by-user"), O_RDONLY)), "EACCES");
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: default ACLs exist only on directories") {
  write_file(p("f"), "x");
  std::string def = acl_blob({{kUserObj, 7}, {kGroupObj, 5}, {kOther, 5}});
  CHECK_EQ(errno_name(set_acl(p("f"), kDefault, def)), "EACCES");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  CHECK_EQ(errno_name(set_acl(p("d"), kDefault, def)), "OK");
  DFS_CHECK_OK(::removexattr(p("d").c_str(), kDefault));
  DFS_CHECK_ERRNO(::getxattr(p("d").c_str(), kDefault, nullptr, 0), ENODATA);
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: malformed ACL blobs give EINVAL") {
  write_file(p("f"), "x", 0640);
  std::string good = reader_acl();
  SUBCASE("wrong version") {
    CHECK_EQ(errno_name(set_acl(p("f"), kAccess, acl_blob({{kUserObj, 6}}, 1))), "EOPNOTSUPP");
  }
  SUBCASE("truncated entry") {
    CHECK_EQ(errno_name(set_acl(p("f"), kAccess, good.substr(0, good.size() - 3))), "EINVAL");
  }
  SUBCASE("named user without a mask") {
    std::string acl =
        acl_blob({{kUserObj, 6}, {kUser, 4, kUser1.uid}, {kGroupObj, 0}, {kOther, 0}});
    CHECK_EQ(errno_name(set_acl(p("f"), kAccess, acl)), "EINVAL");
  }
  SUBCASE("missing other entry") {
    CHECK_EQ(errno_name(set_acl(p("f"), kAccess, acl_blob({{kUserObj, 6}, {kGroupObj, 4}}))),
             "EINVAL");
  }
  SUBCASE("unknown tag") {
    std::string acl = acl_blob({{kUserObj, 6}, {0x40, 4, 0}, {kGroupObj, 0}, {kOther, 0}});
    CHECK_EQ(errno_name(set_acl(p("f"), kAccess, acl)), "EINVAL");
  }
  SUBCASE("two user_obj entries") {
    std::string acl = acl_blob({{kUserObj, 6}, {kUserObj, 4}, {kGroupObj, 0}, {kOther, 0}});
    CHECK_EQ(errno_name(set_acl(p("f"), kAccess, acl)), "EINVAL");
  }
  CHECK_EQ(stat_of(p("f")).st_mode & 0777, 0640);
  CHECK_EQ(errno_name(err_of(::getxattr(p("f").c_str(), kAccess, nullptr, 0))), "ENODATA");
}

TEST_CASE_FIXTURE(Scratch, "posix/acl: only the owner may set an ACL") {
  write_file(p("f"), "x", 0666);
  REQUIRE_EQ(::chmod(p("f").c_str(), 0666), 0);
  CHECK_EQ(user_err(kUser1, [&] { return set_acl(p("f"), kAccess, reader_acl()); }), "EPERM");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  CHECK_EQ(user_err(kUser1, [&] { return set_acl(p("f"), kAccess, reader_acl()); }), "OK");
}

}  // namespace dfs::posix
