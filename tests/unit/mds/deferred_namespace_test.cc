// The client's deferred creates and renames rest on one claim, checked here against the
// real MDS: predict_entry, run on what the client knows (the directory inodes, the
// moved inode and its name), gives what the MDS gives for the same request with the
// same inode number and time. And the MDS takes a client's inode number only from a
// range it delegated and only while free.
#include <doctest/doctest.h>
#include <google/protobuf/util/message_differencer.h>
#include <sys/stat.h>

#include "client-fuse/libdfs/attr_predict.h"
#include "mds/ops/inode_rules.h"
#include "mds_harness.h"

namespace dfs::mds::test {
namespace {

proto::Timespec at(int64_t sec, uint32_t nsec) {
  proto::Timespec t;
  t.set_sec(sec);
  t.set_nsec(nsec);
  return t;
}

Result<proto::AllocInosReply> alloc(MdsHarness& h, uint32_t count) {
  proto::AllocInosRequest req;
  *req.mutable_header() = h.header();
  req.set_count(count);
  return h.call<proto::AllocInosReply>(rpc::kMdsAllocInos, req);
}

proto::MknodRequest create_request(MdsHarness& h, uint64_t parent, const std::string& name,
                                   uint64_t want_ino, const proto::Timespec& now) {
  proto::MknodRequest req;
  *req.mutable_header() = h.header();
  req.mutable_header()->set_want_ino(want_ino);
  *req.mutable_header()->mutable_client_time() = now;
  req.set_parent(parent);
  req.set_name(name);
  req.set_mode(S_IFREG | 0640);
  req.set_exclusive(true);
  req.set_open(true);
  return req;
}

void check_same_inode(const proto::Inode& a, const proto::Inode& b) {
  INFO("predicted: ", a.ShortDebugString());
  INFO("the MDS's: ", b.ShortDebugString());
  // Field by field: serialized bytes of a map (xattrs) need not come out in one order.
  CHECK(google::protobuf::util::MessageDifferencer::Equals(a, b));
}

TEST_CASE("mds/deferred namespace: a predicted create is what the MDS makes of it") {
  MdsHarness h;
  h.creds.set_umask(022);
  auto dir = h.mkdir(kRootIno, "d", 02775);  // setgid: the new file takes its group
  DFS_REQUIRE_OK(dir);
  DFS_REQUIRE_OK(h.chown(dir->ino(), 0, 44));
  DFS_REQUIRE_OK(h.setxattr(dir->ino(), "dfs.layout", "object_size=1048576"));
  auto known_dir = h.getattr(dir->ino());
  DFS_REQUIRE_OK(known_dir);
  auto range = alloc(h, 16);
  DFS_REQUIRE_OK(range);
  CHECK(range->count() == 16);

  uint64_t ino = range->first() + 3;
  auto now = at(1700000000, 123456789);
  auto req = create_request(h, dir->ino(), "f", ino, now);
  proto::MdsLogEntry entry;
  *entry.mutable_mknod() = req;
  *entry.mutable_now() = now;
  entry.set_new_ino(ino);
  entry.set_index(1);
  *entry.mutable_layout() = h.service().committer().fs().default_layout;
  auto body = client::predict_entry(entry, {*known_dir}, {});
  DFS_REQUIRE_OK(body);
  proto::MknodReply predicted;
  REQUIRE(predicted.ParseFromString(*body));

  auto made = h.call<proto::MknodReply>(rpc::kMdsMknod, req);
  DFS_REQUIRE_OK(made);
  CHECK(made->inode().ino() == ino);
  CHECK(made->inode().gid() == 44);
  check_same_inode(predicted.inode(), made->inode());
  REQUIRE(predicted.changed_size() == 1);
  REQUIRE(made->changed_size() == 1);
  check_same_inode(predicted.changed(0), made->changed(0));
  auto stored = h.getattr(ino);
  DFS_REQUIRE_OK(stored);
  CHECK(stored->mtime().nsec() == 123456789u);

  SUBCASE("the MDS's own numbering goes on past the delegated range") {
    auto other = h.create(kRootIno, "g");
    DFS_REQUIRE_OK(other);
    CHECK(other->ino() >= range->first() + range->count());
  }
}

TEST_CASE("mds/deferred namespace: a wanted inode number must be delegated and free") {
  MdsHarness h;
  auto range = alloc(h, 4);
  DFS_REQUIRE_OK(range);
  auto now = at(1700000000, 1);

  auto beyond = h.call<proto::MknodReply>(
      rpc::kMdsMknod, create_request(h, kRootIno, "a", range->first() + 4, now));
  REQUIRE_FALSE(beyond);
  CHECK(beyond.error().code() == ErrorCode::kInvalidArgument);

  DFS_REQUIRE_OK(h.call<proto::MknodReply>(rpc::kMdsMknod,
                                           create_request(h, kRootIno, "b", range->first(), now)));
  auto again = h.call<proto::MknodReply>(rpc::kMdsMknod,
                                         create_request(h, kRootIno, "c", range->first(), now));
  REQUIRE_FALSE(again);
  CHECK(again.error().code() == ErrorCode::kAlreadyExists);
  CHECK_FALSE(h.lookup(kRootIno, "c"));

  auto zero = alloc(h, 0);
  REQUIRE_FALSE(zero);
  CHECK(zero.error().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("mds/deferred namespace: a predicted rename is what the MDS makes of it") {
  MdsHarness h;
  auto from = h.mkdir(kRootIno, "from");
  auto to = h.mkdir(kRootIno, "to");
  DFS_REQUIRE_OK(from);
  DFS_REQUIRE_OK(to);
  auto file = h.create(from->ino(), ".f.XXXX");
  DFS_REQUIRE_OK(file);
  DFS_REQUIRE_OK(h.create(to->ino(), "neighbour"));  // the target holds other names

  // First in place (".f.XXXX" -> "f", as rsync does), then across directories.
  for (bool across : {false, true}) {
    CAPTURE(across);
    uint64_t target = across ? to->ino() : from->ino();
    std::string name = across ? "f" : ".f.XXXX";
    std::string new_name = "f";
    auto src_dir = h.getattr(from->ino());
    auto dst_dir = h.getattr(to->ino());
    auto moved = h.getattr(file->ino());
    DFS_REQUIRE_OK(src_dir);
    DFS_REQUIRE_OK(dst_dir);
    DFS_REQUIRE_OK(moved);

    auto now = at(1700000100 + across, 42);
    proto::RenameRequest req;
    *req.mutable_header() = h.header();
    *req.mutable_header()->mutable_client_time() = now;
    req.set_parent(from->ino());
    req.set_name(name);
    req.set_new_parent(target);
    req.set_new_name(new_name);
    proto::MdsLogEntry entry;
    *entry.mutable_rename() = req;
    *entry.mutable_now() = now;
    entry.set_index(1);
    std::vector<proto::Inode> inodes{*src_dir, *moved};
    if (across) inodes.push_back(*dst_dir);
    auto body = client::predict_entry(entry, inodes,
                                      {client::SeedName{from->ino(), name, file->ino(), S_IFREG}});
    DFS_REQUIRE_OK(body);
    proto::RenameReply predicted;
    REQUIRE(predicted.ParseFromString(*body));

    auto renamed = h.call<proto::RenameReply>(rpc::kMdsRename, req);
    DFS_REQUIRE_OK(renamed);
    REQUIRE(predicted.changed_size() == renamed->changed_size());
    for (int i = 0; i < predicted.changed_size(); ++i) {
      check_same_inode(predicted.changed(i), renamed->changed(i));
    }
    CHECK_FALSE(renamed->did_replace());
  }
  auto found = h.lookup(to->ino(), "f");
  DFS_REQUIRE_OK(found);
  CHECK(found->ino() == file->ino());
}

TEST_CASE("mds/deferred namespace: a predicted setxattr (an ACL, a user attribute) is the MDS's") {
  MdsHarness h;
  auto f = h.create(kRootIno, "f", 0640);
  DFS_REQUIRE_OK(f);
  // user::rw- group::r-- other::r-- as tar --acls sets it (it only sets the mode), then
  // one with a named user and a mask (stored), then a user attribute.
  const std::string trivial("\2\0\0\0\1\0\6\0\377\377\377\377\4\0\4\0\377\377\377\377 \0\4\0\377\377\377\377",
                            28);
  const std::string named(
      "\2\0\0\0\1\0\6\0\377\377\377\377\2\0\4\0\350\3\0\0\4\0\4\0\377\377\377\377"
      "\20\0\6\0\377\377\377\377 \0\0\0\377\377\377\377",
      44);
  int64_t second = 1700000300;
  for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"system.posix_acl_access", trivial},
           {"system.posix_acl_access", named},
           {"user.checksum.sha1", "abc"}}) {
    CAPTURE(name);
    auto known = h.getattr(f->ino());
    DFS_REQUIRE_OK(known);
    auto now = at(++second, 5);
    proto::SetXattrRequest req;
    *req.mutable_header() = h.header();
    *req.mutable_header()->mutable_client_time() = now;
    req.set_ino(f->ino());
    req.set_name(name);
    req.set_value(value);
    proto::MdsLogEntry entry;
    *entry.mutable_setxattr() = req;
    *entry.mutable_now() = now;
    entry.set_index(1);
    auto body = client::predict_entry(entry, {*known}, {});
    DFS_REQUIRE_OK(body);
    proto::InodeReply predicted;
    REQUIRE(predicted.ParseFromString(*body));
    auto applied = h.call<proto::InodeReply>(rpc::kMdsSetXattr, req);
    DFS_REQUIRE_OK(applied);
    check_same_inode(predicted.inode(), applied->inode());
  }
}

// An access ACL of the three base entries with these permissions (rwx bits each).
std::string base_acl(uint16_t user, uint16_t group, uint16_t other) {
  std::string out("\2\0\0\0", 4);
  using TagPerm = std::pair<uint16_t, uint16_t>;
  for (auto [tag, perm] : {TagPerm{0x01, user}, TagPerm{0x04, group}, TagPerm{0x20, other}}) {
    char entry[8] = {static_cast<char>(tag), 0, static_cast<char>(perm), 0, -1, -1, -1, -1};
    out.append(entry, sizeof entry);
  }
  return out;
}

TEST_CASE("mds/deferred namespace: an ACL changing only the ctime is told from one changing more") {
  // The client sends such an ACL as a ctime change merged into the file's deferred
  // attribute change: the MDS must then make nothing else of it.
  MdsHarness h;
  const std::string named(
      "\2\0\0\0\1\0\6\0\377\377\377\377\2\0\4\0\350\3\0\0\4\0\4\0\377\377\377\377"
      "\20\0\6\0\377\377\377\377 \0\0\0\377\377\377\377",
      44);
  struct Case {
    const char* what;
    uint32_t mode;
    uint32_t gid;
    bool acl_stored;
    std::string name;
    std::string value;
    uint32_t flags;
    bool only_ctime;
  };
  const std::vector<Case> cases = {
      {"tar's ACL, the mode's permissions", 0640, 0, false, kAclAccessXattr, base_acl(6, 4, 0),
       0, true},
      {"the same with XATTR_CREATE", 0640, 0, false, kAclAccessXattr, base_acl(6, 4, 0), 1, true},
      {"a directory's", S_IFDIR | 0755, 0, false, kAclAccessXattr, base_acl(7, 5, 5), 0, true},
      {"other permissions than the mode's", 0640, 0, false, kAclAccessXattr, base_acl(6, 4, 4), 0,
       false},
      {"a named user and a mask", 0640, 0, false, kAclAccessXattr, named, 0, false},
      {"an ACL stored before, removed by it", 0640, 0, true, kAclAccessXattr, base_acl(6, 4, 0), 0,
       false},
      {"set-group-ID, the owner outside the group", 02750, 100, false, kAclAccessXattr,
       base_acl(7, 5, 0), 0, false},
      {"XATTR_REPLACE with none stored", 0640, 0, false, kAclAccessXattr, base_acl(6, 4, 0), 2,
       false},
      {"a user attribute", 0640, 0, false, "user.a", "x", 0, false},
      {"not an ACL", 0640, 0, false, kAclAccessXattr, "junk", 0, false},
  };
  int n = 0;
  for (const auto& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    const std::string name = "f" + std::to_string(n++);
    auto made = (c.mode & S_IFMT) ? h.mknod(kRootIno, name, c.mode)
                                  : h.mknod(kRootIno, name, S_IFREG | c.mode);
    DFS_REQUIRE_OK(made);
    const uint64_t ino = made->ino();
    if (c.mode & S_ISGID) {  // root keeps it; the ACL comes from an owner outside the group
      DFS_REQUIRE_OK(h.chown(ino, 1000, c.gid));
      DFS_REQUIRE_OK(h.chmod(ino, c.mode & 07777));
      h.creds.set_uid(1000);
      h.creds.set_gid(1000);
    }
    if (c.acl_stored) {
      DFS_REQUIRE_OK(h.setxattr(ino, kAclAccessXattr, named));
      DFS_REQUIRE_OK(h.chmod(ino, c.mode & 07777));  // the mode back; the ACL stays
    }
    auto before = h.getattr(ino);
    DFS_REQUIRE_OK(before);
    proto::SetXattrRequest req;
    req.set_ino(ino);
    req.set_name(c.name);
    req.set_value(c.value);
    req.set_flags(c.flags);
    const bool only_ctime = client::setxattr_only_touches_ctime(*before, req, h.creds);
    CHECK(only_ctime == c.only_ctime);
    Status applied = h.setxattr(ino, c.name, c.value, c.flags);
    auto after = h.getattr(ino);
    DFS_REQUIRE_OK(after);
    proto::Inode was = *before, is = *after;
    for (proto::Inode* inode : {&was, &is}) {
      inode->clear_ctime();
      inode->clear_version();
    }
    const bool same_but_ctime =
        applied.has_value() && google::protobuf::util::MessageDifferencer::Equals(was, is);
    CHECK(same_but_ctime == c.only_ctime);
    h.creds.set_uid(0);
    h.creds.set_gid(0);
  }
}

TEST_CASE("mds/deferred namespace: a predicted inline data push is what the MDS makes of it") {
  MdsHarness h;
  auto f = h.create(kRootIno, "f", 0755);
  DFS_REQUIRE_OK(f);
  DFS_REQUIRE_OK(h.chmod(f->ino(), 06755));
  DFS_REQUIRE_OK(h.setxattr(f->ino(), "security.capability", "cap"));
  int64_t second = 1700000400;
  struct Push {
    uint64_t offset;
    std::string data;
    uint32_t uid;  // root keeps setuid and setgid; anyone else loses them
  };
  // First bytes, an overwrite inside, a write past the end leaving a gap (zeros), and
  // one by a non-root writer.
  for (const auto& push : std::vector<Push>{
           {0, "first bytes", 0}, {2, "XY", 0}, {100, "after a gap", 0}, {5, "user", 1000}}) {
    CAPTURE(push.offset);
    auto known = h.getattr(f->ino());
    DFS_REQUIRE_OK(known);
    // What the client seeds: the inode it knows, and as many bytes as its size (which
    // bytes does not matter: the reply has none).
    proto::Inode seed = *known;
    seed.set_inline_data(std::string(seed.size(), '\0'));
    auto now = at(++second, 7);
    proto::WriteInlineRequest req;
    *req.mutable_header() = h.header();
    req.mutable_header()->mutable_creds()->set_uid(push.uid);
    *req.mutable_header()->mutable_client_time() = now;
    req.set_ino(f->ino());
    req.set_offset(push.offset);
    req.set_data(push.data);
    *req.mutable_mtime() = at(second, 1);
    proto::MdsLogEntry entry;
    *entry.mutable_write_inline() = req;
    *entry.mutable_now() = now;
    entry.set_index(1);
    auto body = client::predict_entry(entry, {seed}, {});
    DFS_REQUIRE_OK(body);
    proto::InodeReply predicted;
    REQUIRE(predicted.ParseFromString(*body));
    auto applied = h.call<proto::InodeReply>(rpc::kMdsWriteInline, req);
    DFS_REQUIRE_OK(applied);
    check_same_inode(predicted.inode(), applied->inode());
  }
  auto last = h.getattr(f->ino());
  DFS_REQUIRE_OK(last);
  CHECK(last->size() == 111);
  CHECK((last->mode() & 07777) == 0755);
  CHECK(last->xattrs().count("security.capability") == 0);
}

TEST_CASE("mds/deferred namespace: a predicted unlink or rmdir is what the MDS makes of it") {
  MdsHarness h;
  auto dir = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(dir);
  auto file = h.create(dir->ino(), "f");
  DFS_REQUIRE_OK(file);
  DFS_REQUIRE_OK(h.link(file->ino(), dir->ino(), "g"));  // two names: the first unlink keeps it
  auto sub = h.mkdir(dir->ino(), "sub");
  DFS_REQUIRE_OK(sub);
  int64_t second = 1700000400;
  for (auto [name, is_dir] : std::vector<std::pair<std::string, bool>>{
           {"f", false}, {"g", false}, {"sub", true}}) {
    CAPTURE(name);
    auto parent = h.getattr(dir->ino());
    auto target = h.lookup(dir->ino(), name);
    DFS_REQUIRE_OK(parent);
    DFS_REQUIRE_OK(target);
    auto now = at(++second, 9);
    proto::UnlinkRequest req;
    *req.mutable_header() = h.header();
    *req.mutable_header()->mutable_client_time() = now;
    req.set_parent(dir->ino());
    req.set_name(name);
    req.set_directory(is_dir);
    proto::MdsLogEntry entry;
    *entry.mutable_unlink() = req;
    *entry.mutable_now() = now;
    entry.set_index(1);
    auto body = client::predict_entry(
        entry, {*parent, *target}, {client::SeedName{dir->ino(), name, target->ino(), target->mode()}});
    DFS_REQUIRE_OK(body);
    proto::UnlinkReply predicted;
    REQUIRE(predicted.ParseFromString(*body));
    auto applied = h.call<proto::UnlinkReply>(rpc::kMdsUnlink, req);
    DFS_REQUIRE_OK(applied);
    check_same_inode(predicted.inode(), applied->inode());
    REQUIRE(predicted.changed_size() == 1);
    REQUIRE(applied->changed_size() == 1);
    check_same_inode(predicted.changed(0), applied->changed(0));
  }
  CHECK(h.list(dir->ino()).empty());
}

TEST_CASE("mds/deferred namespace: a batch of deferred changes applies in order as one group") {
  MdsHarness h;
  auto dir = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(dir);
  auto range = alloc(h, 8);
  DFS_REQUIRE_OK(range);
  auto now = at(1700000200, 7);
  uint64_t groups_before = h.service().committer().stats().groups;

  proto::BatchRequest batch;
  add_batch_item(batch, rpc::kMdsMknod, create_request(h, dir->ino(), ".t.1", range->first(), now));
  proto::SetAttrRequest chmod;
  *chmod.mutable_header() = h.header();
  chmod.set_ino(range->first());
  chmod.set_valid(proto::SET_ATTR_MODE | proto::SET_ATTR_CTIME);
  chmod.set_mode(0600);
  *chmod.mutable_ctime() = now;
  add_batch_item(batch, rpc::kMdsSetAttr, chmod);
  proto::RenameRequest rename;
  *rename.mutable_header() = h.header();
  *rename.mutable_header()->mutable_client_time() = now;
  rename.set_parent(dir->ino());
  rename.set_name(".t.1");
  rename.set_new_parent(dir->ino());
  rename.set_new_name("t");
  add_batch_item(batch, rpc::kMdsRename, rename);
  auto reply = h.call<proto::BatchReply>(rpc::kMdsBatch, batch);
  DFS_REQUIRE_OK(reply);
  REQUIRE(reply->results_size() == 3);
  for (const auto& r : reply->results()) CHECK_MESSAGE(r.code() == 0, r.message());
  CHECK(h.service().committer().stats().groups == groups_before + 1);
  auto t = h.lookup(dir->ino(), "t");
  DFS_REQUIRE_OK(t);
  CHECK(t->ino() == range->first());
  CHECK((t->mode() & 07777) == 0600);
  CHECK_FALSE(h.lookup(dir->ino(), ".t.1"));
}

// rm -rf of files this mount held: each deferred unlink is followed by the release of
// the file, and the releases must not split the batch into a group per item (a Raft
// round each on a replicated rank). Nor may a release be served before the create
// ahead of it has counted its open: the orphan would then never be purged.
TEST_CASE("mds/deferred namespace: releases among deferred unlinks keep the batch one group") {
  MdsHarness h;
  auto dir = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(dir);
  auto range = alloc(h, 8);
  DFS_REQUIRE_OK(range);
  auto now = at(1700000300, 9);
  proto::BatchRequest batch;
  auto unlink = [&](const std::string& name) {
    proto::UnlinkRequest req;
    *req.mutable_header() = h.header();
    *req.mutable_header()->mutable_client_time() = now;
    req.set_parent(dir->ino());
    req.set_name(name);
    add_batch_item(batch, rpc::kMdsUnlink, req);
  };
  auto release = [&](uint64_t ino) {
    proto::ReleaseRequest req;
    *req.mutable_header() = h.header();
    req.set_ino(ino);
    add_batch_item(batch, rpc::kMdsRelease, req);
  };
  auto send = [&](int items) {
    auto reply = h.call<proto::BatchReply>(rpc::kMdsBatch, batch);
    DFS_REQUIRE_OK(reply);
    REQUIRE(reply->results_size() == items);
    for (const auto& r : reply->results()) CHECK_MESSAGE(r.code() == 0, r.message());
    batch.clear_items();
  };

  const std::vector<std::string> names{"a", "b", "c"};
  for (size_t i = 0; i < names.size(); ++i) {
    add_batch_item(batch, rpc::kMdsMknod,
                   create_request(h, dir->ino(), names[i], range->first() + i, now));
  }
  send(3);
  uint64_t groups_before = h.service().committer().stats().groups;
  for (size_t i = 0; i < names.size(); ++i) {
    unlink(names[i]);
    release(range->first() + i);
  }
  send(6);
  CHECK(h.service().committer().stats().groups == groups_before + 1);
  CHECK(h.list(dir->ino()).empty());

  // Created, released and unlinked in one batch.
  add_batch_item(batch, rpc::kMdsMknod,
                 create_request(h, dir->ino(), "e", range->first() + 4, now));
  release(range->first() + 4);
  unlink("e");
  send(3);

  // One change and its release, served item by item as any request: one group, and the
  // file is purged below.
  add_batch_item(batch, rpc::kMdsMknod,
                 create_request(h, dir->ino(), "f", range->first() + 5, now));
  send(1);
  groups_before = h.service().committer().stats().groups;
  unlink("f");
  release(range->first() + 5);
  send(2);
  CHECK(h.service().committer().stats().groups == groups_before + 1);
  CHECK(h.list(dir->ino()).empty());

  h.run_for(Duration(100));
  for (int i = 0; i < 200; ++i) {
    auto fs = h.statfs();
    REQUIRE(fs);
    if (fs->orphans() == 0) return;
    h.run_for(Duration(50));
  }
  FAIL("the unlinked files were not purged within 10 s");
}

}  // namespace
}  // namespace dfs::mds::test
