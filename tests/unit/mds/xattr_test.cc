// Extended attributes: namespaces, flags, limits, POSIX ACLs (mode sync, inheritance
// on create, chmod) and the dfs.layout virtual xattr.
#include <doctest/doctest.h>

#include "mds/ops/acl.h"
#include "mds_harness.h"

namespace dfs::mds::test {
namespace {

constexpr uint32_t kCreate = 1;
constexpr uint32_t kReplace = 2;

std::string acl(std::vector<AclEntry> entries) { return encode_acl(entries); }

// u::rwx, u:1000:r-x, g::r-x, m::rwx, o::---
std::string rich_acl() {
  return acl({{kAclUserObj, 7, 0xffffffff},
              {kAclUser, 5, 1000},
              {kAclGroupObj, 5, 0xffffffff},
              {kAclMask, 7, 0xffffffff},
              {kAclOther, 0, 0xffffffff}});
}

}  // namespace

TEST_CASE("mds/xattr: set, get, list, remove and flags") {
  MdsHarness h;
  auto f = h.create(kRootIno, "f");
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "user.a", "1"));
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "trusted.b", std::string("\0bin", 4)));
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "security.selinux", "ctx"));
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "security.capability", "caps"));
  CHECK(*h.getxattr(f->ino(), "user.a") == "1");
  CHECK(*h.getxattr(f->ino(), "trusted.b") == std::string("\0bin", 4));
  auto names = h.listxattr(f->ino());
  DFS_REQUIRE_OK(names);
  CHECK(*names ==
        std::vector<std::string>{"security.capability", "security.selinux", "trusted.b", "user.a"});
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "user.a", "2", kCreate), ErrorCode::kAlreadyExists);
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "user.new", "2", kReplace), ErrorCode::kNoAttribute);
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "user.a", "2", kReplace));
  CHECK(*h.getxattr(f->ino(), "user.a") == "2");
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "user.empty", ""));
  CHECK(h.getxattr(f->ino(), "user.empty")->empty());
  DFS_REQUIRE_OK(h.removexattr(f->ino(), "user.a"));
  DFS_REQUIRE_CODE(h.getxattr(f->ino(), "user.a"), ErrorCode::kNoAttribute);
  DFS_REQUIRE_CODE(h.removexattr(f->ino(), "user.a"), ErrorCode::kNoAttribute);
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "bogus.x", "1"), ErrorCode::kNotSupported);
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "system.other", "1"), ErrorCode::kNotSupported);
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "user." + std::string(300, 'n'), "1"), ErrorCode::kRange);
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "user.big", std::string(64 * 1024, 'v')));
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "user.big2", std::string(64 * 1024 + 1, 'v')),
                   ErrorCode::kRange);
  auto before = h.getattr(f->ino());
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "user.c", "x"));
  auto after = h.getattr(f->ino());
  CHECK(after->ctime().SerializeAsString() != before->ctime().SerializeAsString());
  CHECK(after->xattrs().at("user.c") == "x");
}

TEST_CASE("mds/xattr: the access ACL sets the mode, an equivalent one is not stored") {
  MdsHarness h;
  auto f = h.create(kRootIno, "f", 0644);
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "system.posix_acl_access", rich_acl()));
  auto with = h.getattr(f->ino());
  CHECK((with->mode() & 0777) == 0770);  // group bits show the mask
  CHECK(*h.getxattr(f->ino(), "system.posix_acl_access") == rich_acl());
  // chmod rewrites owner, mask and other entries.
  DFS_REQUIRE_OK(h.chmod(f->ino(), 0751));
  auto parsed = parse_acl(*h.getxattr(f->ino(), "system.posix_acl_access"));
  DFS_REQUIRE_OK(parsed);
  CHECK((*parsed)[0].perm == 7);  // user::rwx
  CHECK((*parsed)[1].perm == 5);  // user:1000 unchanged
  CHECK((*parsed)[3].perm == 5);  // mask r-x
  CHECK((*parsed)[4].perm == 1);  // other --x
  // A plain ACL only sets the mode.
  auto g = h.create(kRootIno, "g", 0600);
  DFS_REQUIRE_OK(h.setxattr(g->ino(), "system.posix_acl_access",
                            acl({{kAclUserObj, 6, 0xffffffff},
                                 {kAclGroupObj, 4, 0xffffffff},
                                 {kAclOther, 4, 0xffffffff}})));
  CHECK((h.getattr(g->ino())->mode() & 0777) == 0644);
  DFS_REQUIRE_CODE(h.getxattr(g->ino(), "system.posix_acl_access"), ErrorCode::kNoAttribute);
  DFS_REQUIRE_CODE(h.setxattr(g->ino(), "system.posix_acl_access", "garbage"),
                   ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.setxattr(g->ino(), "system.posix_acl_default", rich_acl()),
                   ErrorCode::kPermissionDenied);
}

TEST_CASE("mds/xattr: default ACLs are inherited on create instead of the umask") {
  MdsHarness h;
  auto d = h.mkdir(kRootIno, "d", 0755);
  DFS_REQUIRE_OK(h.setxattr(d->ino(), "system.posix_acl_default", rich_acl()));
  h.creds.set_umask(077);  // ignored under a default ACL
  auto f = h.create(d->ino(), "f", 0666);
  DFS_REQUIRE_OK(f);
  CHECK((f->mode() & 0777) == 0660);  // rw- from owner, group bits = mask & 6, other 0
  REQUIRE(f->xattrs().count("system.posix_acl_access"));
  auto access = parse_acl(f->xattrs().at("system.posix_acl_access"));
  DFS_REQUIRE_OK(access);
  CHECK((*access)[1].perm == 5);  // named user kept
  CHECK((*access)[3].perm == 6);  // mask cut to the requested group bits
  CHECK(f->xattrs().count("system.posix_acl_default") == 0);
  auto sub = h.mkdir(d->ino(), "sub", 0777);
  CHECK(sub->xattrs().at("system.posix_acl_default") == rich_acl());
  CHECK((sub->mode() & 0777) == 0770);
  // Without a default ACL the umask applies.
  auto plain = h.create(kRootIno, "plain", 0666);
  CHECK((plain->mode() & 0777) == 0600);
}

TEST_CASE("mds/xattr: dfs.layout on directories sets new files' layout, unlisted") {
  MdsHarness h;
  auto d = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(h.setxattr(d->ino(), "dfs.layout", "object_size=1048576"));
  auto stored = h.getxattr(d->ino(), "dfs.layout");
  DFS_REQUIRE_OK(stored);
  CHECK(stored->find("object_size=1048576") != std::string::npos);
  CHECK(stored->find("pool=data") != std::string::npos);
  CHECK(h.listxattr(d->ino())->empty());
  auto f = h.create(d->ino(), "f");
  CHECK(f->layout().object_size() == 1u << 20);
  auto sub = h.mkdir(d->ino(), "sub");
  CHECK(h.create(sub->ino(), "g")->layout().object_size() == 1u << 20);
  CHECK(h.getxattr(f->ino(), "dfs.layout")->find("object_size=1048576") != std::string::npos);
  DFS_REQUIRE_CODE(h.setxattr(d->ino(), "dfs.layout", "object_size=1000"),
                   ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.setxattr(d->ino(), "dfs.layout", "colour=blue"), ErrorCode::kInvalidArgument);
  // A file's own layout may change only while it is empty.
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "dfs.layout", "object_size=65536"));
  CHECK(h.getattr(f->ino())->layout().object_size() == 65536);
  DFS_REQUIRE_OK(h.write_inline(f->ino(), 0, "x"));
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "dfs.layout", "object_size=131072"), ErrorCode::kBusy);
}

TEST_CASE("mds/acl: create masq and equivalence follow the kernel") {
  auto parsed = parse_acl(rich_acl());
  DFS_REQUIRE_OK(parsed);
  uint32_t mode = S_IFREG | 0640;
  auto copy = *parsed;
  CHECK(acl_create_masq(copy, mode));
  CHECK((mode & 0777) == 0640);
  CHECK(copy[3].perm == 4);  // mask r--
  CHECK(copy[4].perm == 0);
  uint32_t m2 = S_IFREG;
  CHECK(acl_equiv_mode(*parsed, m2));
  CHECK((m2 & 0777) == 0770);
  DFS_REQUIRE_CODE(parse_acl(acl({{kAclUserObj, 7, 0}, {kAclOther, 0, 0}})),
                   ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(
      parse_acl(
          acl({{kAclUserObj, 7, 0}, {kAclUser, 7, 5}, {kAclGroupObj, 7, 0}, {kAclOther, 0, 0}})),
      ErrorCode::kInvalidArgument);  // named entry without mask
}

}  // namespace dfs::mds::test
