// Namespace ops through the MdsService on a real RocksMetaStore: mknod of every type,
// lookup, symlink, hard links and nlink accounting, unlink and rmdir errors, names.
#include <doctest/doctest.h>

#include "mds_harness.h"

namespace dfs::mds::test {

TEST_CASE("mds/mknod: creates every file type with the caller's owner") {
  MdsHarness h;
  h.creds.set_uid(1000);
  h.creds.set_gid(100);
  auto f = h.create(kRootIno, "file", 0640);
  DFS_REQUIRE_OK(f);
  CHECK(f->mode() == (S_IFREG | 0640));
  CHECK(f->uid() == 1000);
  CHECK(f->gid() == 100);
  CHECK(f->nlink() == 1);
  CHECK(f->inline_());
  CHECK(f->size() == 0);
  CHECK(f->layout().object_size() == 4u << 20);
  CHECK(f->layout().pool() == "data");
  CHECK(f->ino() >= 2);

  auto d = h.mkdir(kRootIno, "dir", 0755);
  DFS_REQUIRE_OK(d);
  CHECK(d->nlink() == 2);
  CHECK(d->parent() == kRootIno);

  auto fifo = h.mknod(kRootIno, "fifo", S_IFIFO | 0600);
  DFS_REQUIRE_OK(fifo);
  CHECK(S_ISFIFO(fifo->mode()));
  auto sock = h.mknod(kRootIno, "sock", S_IFSOCK | 0600);
  DFS_REQUIRE_OK(sock);
  CHECK(S_ISSOCK(sock->mode()));
  auto chr = h.mknod(kRootIno, "null", S_IFCHR | 0666, makedev(1, 3));
  DFS_REQUIRE_OK(chr);
  CHECK(chr->rdev() == makedev(1, 3));
  auto blk = h.mknod(kRootIno, "loop0", S_IFBLK | 0660, makedev(7, 0));
  DFS_REQUIRE_OK(blk);
  CHECK(S_ISBLK(blk->mode()));
  CHECK(blk->rdev() == makedev(7, 0));

  DFS_REQUIRE_CODE(h.mknod(kRootIno, "bad", 0170000 | 0644), ErrorCode::kInvalidArgument);

  auto root = h.getattr(kRootIno);
  DFS_REQUIRE_OK(root);
  CHECK(root->nlink() == 3);  // "." , ".." and dir's ".."
  auto found = h.lookup(kRootIno, "file");
  DFS_REQUIRE_OK(found);
  CHECK(found->ino() == f->ino());
  auto st = h.statfs();
  DFS_REQUIRE_OK(st);
  CHECK(st->inodes() == 7);
}

TEST_CASE("mds/mknod: existing names") {
  MdsHarness h;
  auto f = h.create(kRootIno, "f");
  DFS_REQUIRE_OK(f);
  DFS_REQUIRE_OK(h.mkdir(kRootIno, "d"));
  DFS_REQUIRE_CODE(h.create(kRootIno, "f"), ErrorCode::kAlreadyExists);
  DFS_REQUIRE_CODE(h.mkdir(kRootIno, "f"), ErrorCode::kAlreadyExists);
  DFS_REQUIRE_CODE(h.mkdir(kRootIno, "d"), ErrorCode::kAlreadyExists);
  // O_CREAT without O_EXCL returns the existing file.
  auto again = h.mknod(kRootIno, "f", S_IFREG | 0600, 0, /*exclusive=*/false);
  DFS_REQUIRE_OK(again);
  CHECK(again->ino() == f->ino());
  DFS_REQUIRE_CODE(h.mknod(kRootIno, "d", S_IFREG | 0600, 0, false), ErrorCode::kIsDirectory);
  DFS_REQUIRE_CODE(h.create(f->ino(), "x"), ErrorCode::kNotDirectory);
  DFS_REQUIRE_CODE(h.create(999999, "x"), ErrorCode::kNotFound);
}

TEST_CASE("mds/names: length and characters") {
  MdsHarness h;
  DFS_REQUIRE_OK(h.create(kRootIno, std::string(255, 'a')));
  DFS_REQUIRE_CODE(h.create(kRootIno, std::string(256, 'a')), ErrorCode::kNameTooLong);
  DFS_REQUIRE_CODE(h.lookup(kRootIno, std::string(256, 'a')), ErrorCode::kNameTooLong);
  DFS_REQUIRE_CODE(h.create(kRootIno, "a/b"), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.create(kRootIno, std::string("a\0b", 3)), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.create(kRootIno, "."), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.create(kRootIno, ".."), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.create(kRootIno, ""), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.lookup(kRootIno, "missing"), ErrorCode::kNotFound);
  auto d = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(d);
  auto dot = h.lookup(d->ino(), ".");
  DFS_REQUIRE_OK(dot);
  CHECK(dot->ino() == d->ino());
  auto dotdot = h.lookup(d->ino(), "..");
  DFS_REQUIRE_OK(dotdot);
  CHECK(dotdot->ino() == kRootIno);
}

TEST_CASE("mds/names: any bytes but '/' and NUL, including ones that are not UTF-8") {
  MdsHarness h;
  std::vector<std::string> names = {"\x01\x7f\xff", "new\nline", "\xe2\x9c\x93 utf8", "...", " "};
  for (const auto& n : names) {
    CAPTURE(n);
    DFS_REQUIRE_OK(h.create(kRootIno, n));
    DFS_REQUIRE_OK(h.lookup(kRootIno, n));
  }
  auto listed = h.list(kRootIno);
  std::sort(listed.begin(), listed.end());
  std::sort(names.begin(), names.end());
  CHECK(listed == names);
  DFS_REQUIRE_OK(h.rename(kRootIno, "\x01\x7f\xff", kRootIno, "\xfe\xfd"));
  DFS_REQUIRE_OK(h.lookup(kRootIno, "\xfe\xfd"));
  auto f = h.lookup(kRootIno, " ");
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "user.\xe2\x9c\x93", "utf8 name"));
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "user.\xff", "x"), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.setxattr(f->ino(), "user.\xe2\x9c", "x"), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.getxattr(f->ino(), "user.\xff"), ErrorCode::kNoAttribute);
  DFS_REQUIRE_CODE(h.removexattr(f->ino(), "user.\xff"), ErrorCode::kNoAttribute);
  CHECK(*h.getxattr(f->ino(), "user.\xe2\x9c\x93") == "utf8 name");
}

TEST_CASE("mds/symlink: target, readlink and errors") {
  MdsHarness h;
  auto l = h.symlink(kRootIno, "l", "../some/where");
  DFS_REQUIRE_OK(l);
  CHECK(S_ISLNK(l->mode()));
  CHECK((l->mode() & 0777) == 0777);
  CHECK(l->size() == 13);
  proto::ReadlinkRequest req;
  *req.mutable_header() = h.header(false);
  req.set_ino(l->ino());
  auto target = h.call<proto::ReadlinkReply>(rpc::kMdsReadlink, req);
  DFS_REQUIRE_OK(target);
  CHECK(target->target() == "../some/where");
  auto f = h.create(kRootIno, "f");
  req.set_ino(f->ino());
  DFS_REQUIRE_CODE(h.call<proto::ReadlinkReply>(rpc::kMdsReadlink, req),
                   ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.symlink(kRootIno, "l", "x"), ErrorCode::kAlreadyExists);
  DFS_REQUIRE_CODE(h.symlink(kRootIno, "long", std::string(4096, 'x')), ErrorCode::kNameTooLong);
}

TEST_CASE("mds/link: hard links count and keep the inode") {
  MdsHarness h;
  auto f = h.create(kRootIno, "f");
  DFS_REQUIRE_OK(f);
  auto d = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(d);
  auto linked = h.link(f->ino(), d->ino(), "g");
  DFS_REQUIRE_OK(linked);
  CHECK(linked->nlink() == 2);
  CHECK(h.lookup(d->ino(), "g")->ino() == f->ino());
  DFS_REQUIRE_CODE(h.link(f->ino(), d->ino(), "g"), ErrorCode::kAlreadyExists);
  DFS_REQUIRE_CODE(h.link(d->ino(), kRootIno, "dlink"), ErrorCode::kNotPermitted);
  DFS_REQUIRE_CODE(h.link(f->ino(), f->ino(), "x"), ErrorCode::kNotDirectory);

  auto after = h.unlink(kRootIno, "f");
  DFS_REQUIRE_OK(after);
  CHECK(after->nlink() == 1);
  auto still = h.getattr(f->ino());
  DFS_REQUIRE_OK(still);
  CHECK(still->nlink() == 1);
  auto gone = h.unlink(d->ino(), "g");
  DFS_REQUIRE_OK(gone);
  CHECK(gone->nlink() == 0);
  h.run_for(Duration(100));  // the orphan (not open) is purged
  DFS_REQUIRE_CODE(h.getattr(f->ino()), ErrorCode::kStale);
  DFS_REQUIRE_CODE(h.link(f->ino(), kRootIno, "back"), ErrorCode::kNotFound);
}

TEST_CASE("mds/link: maximum link count") {
  auto options = MdsHarness::default_options();
  options.fs.max_links = 3;
  MdsHarness h(Backend::kMem, options);
  auto f = h.create(kRootIno, "f");
  DFS_REQUIRE_OK(h.link(f->ino(), kRootIno, "f2"));
  DFS_REQUIRE_OK(h.link(f->ino(), kRootIno, "f3"));
  DFS_REQUIRE_CODE(h.link(f->ino(), kRootIno, "f4"), ErrorCode::kTooManyLinks);
}

TEST_CASE("mds/unlink: types and emptiness") {
  MdsHarness h;
  auto d = h.mkdir(kRootIno, "d");
  auto f = h.create(d->ino(), "f");
  DFS_REQUIRE_OK(f);
  DFS_REQUIRE_CODE(h.unlink(kRootIno, "d"), ErrorCode::kIsDirectory);
  DFS_REQUIRE_CODE(h.rmdir(d->ino(), "f"), ErrorCode::kNotDirectory);
  DFS_REQUIRE_CODE(h.rmdir(kRootIno, "d"), ErrorCode::kNotEmpty);
  DFS_REQUIRE_CODE(h.unlink(kRootIno, "nothing"), ErrorCode::kNotFound);
  DFS_REQUIRE_OK(h.unlink(d->ino(), "f"));
  auto sub = h.mkdir(d->ino(), "sub");
  CHECK(h.getattr(d->ino())->nlink() == 3);
  DFS_REQUIRE_OK(h.rmdir(d->ino(), "sub"));
  CHECK(h.getattr(d->ino())->nlink() == 2);
  auto removed = h.rmdir(kRootIno, "d");
  DFS_REQUIRE_OK(removed);
  CHECK(removed->nlink() == 0);
  CHECK(h.getattr(kRootIno)->nlink() == 2);
  DFS_REQUIRE_CODE(h.lookup(kRootIno, "d"), ErrorCode::kNotFound);
  h.run_for(Duration(100));
  DFS_REQUIRE_CODE(h.create(d->ino(), "late"), ErrorCode::kNotFound);
  auto st = h.statfs();
  DFS_REQUIRE_OK(st);
  CHECK(st->inodes() == 1);
  CHECK(st->orphans() == 0);
}

TEST_CASE("mds/times: parent mtime and ctime follow entry changes") {
  MdsHarness h;
  auto d = h.mkdir(kRootIno, "d");
  auto before = h.getattr(d->ino());
  DFS_REQUIRE_OK(h.create(d->ino(), "f"));
  auto after = h.getattr(d->ino());
  CHECK(after->mtime().SerializeAsString() != before->mtime().SerializeAsString());
  CHECK(after->ctime().SerializeAsString() == after->mtime().SerializeAsString());
  CHECK(after->version() > before->version());
  auto f = h.lookup(d->ino(), "f");
  auto linked = h.link(f->ino(), d->ino(), "g");
  CHECK(linked->ctime().SerializeAsString() != f->ctime().SerializeAsString());
  CHECK(linked->mtime().SerializeAsString() == f->mtime().SerializeAsString());
}

TEST_CASE("mds/session: root, layout and instance") {
  MdsHarness h;
  proto::SessionRequest req;
  req.set_client("client.x");
  auto r = h.call<proto::SessionReply>(rpc::kMdsSession, req);
  DFS_REQUIRE_OK(r);
  CHECK(r->root().ino() == kRootIno);
  CHECK(r->root().mode() == (S_IFDIR | 0755));
  CHECK(r->root().uid() == 0);
  CHECK(r->inline_threshold() == 4096);
  CHECK(r->default_layout().object_size() == 4u << 20);
  CHECK(r->mds_instance() == h.service().instance());
}

TEST_CASE("mds/session: a client of another cluster is refused, one naming none is served") {
  MdsOptions options = MdsHarness::default_options();
  options.cluster_fsid = "fsid-a";
  MdsHarness h(Backend::kRocks, options);
  proto::SessionRequest req;
  req.set_client("client.x");
  req.set_fsid("fsid-b");
  auto refused = h.call<proto::SessionReply>(rpc::kMdsSession, req);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == ErrorCode::kWrongCluster);
  CHECK(refused.error().context() ==
        "mds.a refused the session of client.x: it belongs to cluster fsid-b, this is cluster "
        "fsid-a");
  CHECK(h.service().sessions().size() == 0);  // refused before it was registered
  req.set_fsid("fsid-a");
  DFS_CHECK_OK(h.call<proto::SessionReply>(rpc::kMdsSession, req));
  req.clear_fsid();  // a client without a config
  DFS_CHECK_OK(h.call<proto::SessionReply>(rpc::kMdsSession, req));
}

TEST_CASE("mds/dedup: a resent request returns the first reply") {
  MdsHarness h;
  proto::MknodRequest req;
  *req.mutable_header() = h.header();
  req.set_parent(kRootIno);
  req.set_name("once");
  req.set_mode(S_IFREG | 0644);
  req.set_exclusive(true);
  auto first = h.call<proto::MknodReply>(rpc::kMdsMknod, req);
  DFS_REQUIRE_OK(first);
  auto again = h.call<proto::MknodReply>(rpc::kMdsMknod, req);
  DFS_REQUIRE_OK(again);  // not kAlreadyExists
  CHECK(again->inode().ino() == first->inode().ino());
  CHECK(again->created());
  // Unlink resent after success: still success, applied once.
  proto::UnlinkRequest un;
  *un.mutable_header() = h.header();
  un.set_parent(kRootIno);
  un.set_name("once");
  DFS_REQUIRE_OK(h.call<proto::UnlinkReply>(rpc::kMdsUnlink, un));
  DFS_REQUIRE_OK(h.call<proto::UnlinkReply>(rpc::kMdsUnlink, un));
  size_t unlinks = 0;
  for (const auto& e : h.log()) unlinks += e.has_unlink();
  CHECK(unlinks == 1);
}

TEST_CASE("mds/dedup: replies survive a restart, an ended session forgets them") {
  auto options = MdsHarness::default_options();
  MdsHarness h(Backend::kRocks, options);
  proto::MknodRequest req;
  *req.mutable_header() = h.header();
  req.set_parent(kRootIno);
  req.set_name("made-before-crash");
  req.set_mode(S_IFREG | 0644);
  req.set_exclusive(true);
  auto first = h.call<proto::MknodReply>(rpc::kMdsMknod, req);
  DFS_REQUIRE_OK(first);
  auto dir = h.mkdir(kRootIno, "d");
  h.restart(options);
  // Everything acknowledged is there, and the resend gets the original answer.
  CHECK(h.lookup(kRootIno, "d")->ino() == dir->ino());
  auto resent = h.call<proto::MknodReply>(rpc::kMdsMknod, req);
  DFS_REQUIRE_OK(resent);
  CHECK(resent->inode().ino() == first->inode().ino());
  CHECK(resent->created());
  // New inode numbers continue after the old ones.
  auto after = h.create(kRootIno, "after");
  CHECK(after->ino() > dir->ino());

  // The session ends (no connection, timeout passed): its replies go.
  auto short_sessions = MdsHarness::default_options();
  short_sessions.idle_session_expiry = Duration(1);
  h.restart(short_sessions);
  auto remembered = [&] {
    return h.store().scan(request_prefix(), prefix_end(request_prefix()), 100)->size();
  };
  CHECK(remembered() > 0);
  for (int i = 0; i < 100 && remembered() > 0; ++i) h.run_for(Duration(20));
  CHECK(remembered() == 0);
}

}  // namespace dfs::mds::test
