// setattr permission rules (chmod, chown, chgrp by non-root), setgid inheritance,
// privilege clearing on write, truncate and chown, and times.
#include <doctest/doctest.h>
#include <fcntl.h>

#include "mds_harness.h"

namespace dfs::mds::test {
namespace {

proto::Creds user(uint32_t uid, uint32_t gid, std::vector<uint32_t> groups = {}) {
  proto::Creds c;
  c.set_uid(uid);
  c.set_gid(gid);
  for (auto g : groups) c.add_groups(g);
  return c;
}

}  // namespace

TEST_CASE("mds/setattr: chmod by owner or root only") {
  MdsHarness h;
  h.creds = user(1000, 100);
  auto f = h.create(kRootIno, "f", 0644);
  DFS_REQUIRE_OK(h.chmod(f->ino(), 0600));
  CHECK((h.getattr(f->ino())->mode() & 07777) == 0600);
  h.creds = user(1001, 100);
  DFS_REQUIRE_CODE(h.chmod(f->ino(), 0777), ErrorCode::kNotPermitted);
  h.creds = user(0, 0);
  DFS_REQUIRE_OK(h.chmod(f->ino(), 06755));
  CHECK(h.getattr(f->ino())->mode() == (S_IFREG | 06755));
  // Anyone may drop setuid/setgid (the kernel's kill-privileges setattr for a writer),
  // but nothing else.
  h.creds = user(1001, 100);
  DFS_REQUIRE_CODE(h.chmod(f->ino(), 06777), ErrorCode::kNotPermitted);
  DFS_REQUIRE_CODE(h.chmod(f->ino(), 0655), ErrorCode::kNotPermitted);
  DFS_REQUIRE_OK(h.chmod(f->ino(), 02755));
  DFS_REQUIRE_OK(h.chmod(f->ino(), 0755));
  CHECK(h.getattr(f->ino())->mode() == (S_IFREG | 0755));
  DFS_REQUIRE_CODE(h.chmod(f->ino(), 04755), ErrorCode::kNotPermitted);
}

TEST_CASE("mds/setattr: non-root chmod drops setgid outside the file's group") {
  MdsHarness h;
  h.creds = user(1000, 100, {200});
  auto f = h.create(kRootIno, "f", 0644);
  DFS_REQUIRE_OK(h.chmod(f->ino(), 02755));
  CHECK((h.getattr(f->ino())->mode() & 07777) == 02755);  // gid 100 is the caller's
  h.creds = user(0, 0);
  DFS_REQUIRE_OK(h.chown(f->ino(), 1000, 300));
  h.creds = user(1000, 100, {200});
  DFS_REQUIRE_OK(h.chmod(f->ino(), 02755));
  CHECK((h.getattr(f->ino())->mode() & 07777) == 0755);
}

TEST_CASE("mds/setattr: chown rules") {
  MdsHarness h;
  h.creds = user(0, 0);
  auto f = h.create(kRootIno, "f", 0644);
  DFS_REQUIRE_OK(h.chown(f->ino(), 1000, 100));
  h.creds = user(1000, 100, {200});
  // The owner may give the file to a group of its own, not to another user.
  proto::SetAttrRequest chgrp;
  chgrp.set_ino(f->ino());
  chgrp.set_valid(proto::SET_ATTR_GID);
  chgrp.set_gid(200);
  DFS_REQUIRE_OK(h.setattr(chgrp));
  CHECK(h.getattr(f->ino())->gid() == 200);
  chgrp.set_gid(300);
  DFS_REQUIRE_CODE(h.setattr(chgrp), ErrorCode::kNotPermitted);
  DFS_REQUIRE_CODE(h.chown(f->ino(), 1001, 200), ErrorCode::kNotPermitted);
  DFS_REQUIRE_OK(h.chown(f->ino(), 1000, 200));  // "changing" to itself is allowed
  h.creds = user(1001, 200);
  chgrp.set_gid(200);
  DFS_REQUIRE_CODE(h.setattr(chgrp), ErrorCode::kNotPermitted);  // not the owner
  h.creds = user(0, 0);
  DFS_REQUIRE_OK(h.chown(f->ino(), 5, 6));
  CHECK(h.getattr(f->ino())->uid() == 5);
  CHECK(h.getattr(f->ino())->gid() == 6);
}

TEST_CASE("mds/setattr: chown clears setuid, setgid and capabilities of files") {
  MdsHarness h;
  auto f = h.create(kRootIno, "f", 06755);
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "security.capability", "cap"));
  DFS_REQUIRE_OK(h.chown(f->ino(), 1, 1));
  auto after = h.getattr(f->ino());
  CHECK((after->mode() & 07777) == 0755);
  CHECK(after->xattrs().count("security.capability") == 0);
  // setgid without group-exec (a locking marker) stays.
  auto g = h.create(kRootIno, "g", 02644);
  DFS_REQUIRE_OK(h.chown(g->ino(), 1, 1));
  CHECK((h.getattr(g->ino())->mode() & 07777) == 02644);
  // Directories keep their bits.
  auto d = h.mkdir(kRootIno, "d", 02755);
  DFS_REQUIRE_OK(h.chown(d->ino(), 1, 1));
  CHECK((h.getattr(d->ino())->mode() & 07777) == 02755);
}

TEST_CASE("mds/mknod: setgid directories pass their group on") {
  MdsHarness h;
  auto d = h.mkdir(kRootIno, "shared", 02775);
  DFS_REQUIRE_OK(h.chown(d->ino(), 0, 500));
  DFS_REQUIRE_OK(h.chmod(d->ino(), 02775));  // the chown kept it (dir), but be explicit
  h.creds = user(1000, 100);
  auto f = h.create(d->ino(), "f", 0664);
  CHECK(f->gid() == 500);
  CHECK(f->uid() == 1000);
  CHECK((f->mode() & S_ISGID) == 0);
  auto sub = h.mkdir(d->ino(), "sub", 0755);
  CHECK(sub->gid() == 500);
  CHECK((sub->mode() & S_ISGID) != 0);
  // A non-member cannot create a setgid executable there.
  auto x = h.create(d->ino(), "x", 02755);
  CHECK((x->mode() & S_ISGID) == 0);
  // Outside, the caller's group.
  auto plain = h.create(kRootIno, "plain");
  CHECK(plain->gid() == 100);
}

TEST_CASE("mds/mknod: umask from the credentials") {
  MdsHarness h;
  h.creds.set_umask(022);
  auto f = h.create(kRootIno, "f", 0666);
  CHECK((f->mode() & 0777) == 0644);
  auto d = h.mkdir(kRootIno, "d", 0777);
  CHECK((d->mode() & 0777) == 0755);
}

TEST_CASE("mds/setattr: writes and truncates kill privileges (root keeps setuid/setgid)") {
  for (bool root : {true, false}) {
    for (int op = 0; op < 4; ++op) {
      CAPTURE(root);
      CAPTURE(op);
      MdsHarness h(Backend::kMem);
      auto f = h.create(kRootIno, "f", 06755);
      DFS_REQUIRE_OK(h.setxattr(f->ino(), "security.capability", "cap"));
      if (!root) h.creds = user(1000, 100);
      switch (op) {
        case 0: DFS_REQUIRE_OK(h.write_inline(f->ino(), 0, "x")); break;
        case 1: DFS_REQUIRE_OK(h.truncate(f->ino(), 0)); break;
        case 2: DFS_REQUIRE_OK(h.open(f->ino(), O_WRONLY | O_TRUNC)); break;
        default: DFS_REQUIRE_OK(h.commit_write(f->ino(), 10, true)); break;
      }
      auto after = h.getattr(f->ino());
      CHECK((after->mode() & 07777) == (root ? 06755 : 0755));
      CHECK(after->xattrs().count("security.capability") == 0);
    }
  }
}

TEST_CASE("mds/setattr: a commit without clear_privileges keeps them") {
  MdsHarness h;
  auto f = h.create(kRootIno, "f", 04755);
  DFS_REQUIRE_OK(h.commit_write(f->ino(), 10, false));
  CHECK((h.getattr(f->ino())->mode() & 07777) == 04755);
  // setgid without group-exec survives a write.
  auto g = h.create(kRootIno, "g", 02644);
  h.creds = user(1000, 100);
  DFS_REQUIRE_OK(h.write_inline(g->ino(), 0, "x"));
  CHECK((h.getattr(g->ino())->mode() & 07777) == 02644);
}

TEST_CASE("mds/setattr: times") {
  MdsHarness h;
  h.creds = user(1000, 100);
  auto f = h.create(kRootIno, "f");
  proto::SetAttrRequest req;
  req.set_ino(f->ino());
  req.set_valid(proto::SET_ATTR_ATIME | proto::SET_ATTR_MTIME);
  req.mutable_atime()->set_sec(1000);
  req.mutable_mtime()->set_sec(2000);
  req.mutable_mtime()->set_nsec(5);
  auto set = h.setattr(req);
  DFS_REQUIRE_OK(set);
  CHECK(set->atime().sec() == 1000);
  CHECK(set->mtime().sec() == 2000);
  CHECK(set->mtime().nsec() == 5);
  CHECK(set->ctime().sec() > 1600000000);
  h.creds = user(1001, 100);
  DFS_REQUIRE_CODE(h.setattr(req), ErrorCode::kNotPermitted);
  // "now": the kernel checked write access
  req.set_valid(proto::SET_ATTR_ATIME | proto::SET_ATTR_MTIME | proto::SET_ATTR_ATIME_NOW |
                proto::SET_ATTR_MTIME_NOW);
  auto now = h.setattr(req);
  DFS_REQUIRE_OK(now);
  CHECK(now->mtime().sec() > 1600000000);
  CHECK(now->mtime().SerializeAsString() == now->ctime().SerializeAsString());
  // An explicit ctime (FATTR_CTIME) wins.
  req.set_valid(proto::SET_ATTR_CTIME);
  req.mutable_ctime()->set_sec(42);
  CHECK(h.setattr(req)->ctime().sec() == 42);
}

TEST_CASE("mds/setattr: size of directories and specials") {
  MdsHarness h;
  auto d = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_CODE(h.truncate(d->ino(), 0), ErrorCode::kIsDirectory);
  auto fifo = h.mknod(kRootIno, "p", S_IFIFO | 0644);
  DFS_REQUIRE_CODE(h.truncate(fifo->ino(), 0), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.truncate(987654, 0), ErrorCode::kStale);
}

}  // namespace dfs::mds::test
