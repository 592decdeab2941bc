// The client's deferred attribute changes rest on two claims, checked here against the
// real MDS: (1) predict_setattr gives what the MDS gives, and (2) one merged SetAttr
// (merged_setattr) leaves an inode exactly as the changes one by one do. And kMdsBatch
// applies its items in order, each deduplicated on a resend.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include "client-fuse/libdfs/attr_predict.h"
#include "mds_harness.h"

namespace dfs::mds::test {
namespace {

constexpr uint32_t kMode = 1, kUid = 2, kGid = 4, kAtime = 16, kMtime = 32, kCtime = 1024;

proto::Timespec at(int64_t sec, uint32_t nsec = 0) {
  proto::Timespec t;
  t.set_sec(sec);
  t.set_nsec(nsec);
  return t;
}

// A change as the client states it: explicit values and its own ctime.
proto::SetAttrRequest change(uint64_t ino, uint32_t valid, uint32_t mode, uint32_t uid,
                             uint32_t gid, int64_t time) {
  proto::SetAttrRequest req;
  req.set_ino(ino);
  req.set_valid(valid | kCtime);
  req.set_mode(mode);
  req.set_uid(uid);
  req.set_gid(gid);
  *req.mutable_atime() = at(time, 1);
  *req.mutable_mtime() = at(time, 2);
  *req.mutable_ctime() = at(time, 3);
  return req;
}

void check_same_attrs(const proto::Inode& a, const proto::Inode& b) {
  CHECK(a.mode() == b.mode());
  CHECK(a.uid() == b.uid());
  CHECK(a.gid() == b.gid());
  CHECK(a.atime().SerializeAsString() == b.atime().SerializeAsString());
  CHECK(a.mtime().SerializeAsString() == b.mtime().SerializeAsString());
  CHECK(a.ctime().SerializeAsString() == b.ctime().SerializeAsString());
  CHECK(a.xattrs().size() == b.xattrs().size());
  for (const auto& [name, value] : a.xattrs()) {
    auto it = b.xattrs().find(name);
    REQUIRE_MESSAGE(it != b.xattrs().end(), name);
    CHECK(it->second == value);
  }
}

// Runs `changes` (root) on one MDS one by one, predicts them from the starting inode,
// applies the merged request on a second MDS, and checks all three agree.
void check_sequence(uint32_t start_mode, const std::vector<proto::SetAttrRequest>& changes) {
  MdsHarness one_by_one, merged;
  for (MdsHarness* h : {&one_by_one, &merged}) {
    auto f = h->create(kRootIno, "f", start_mode);
    DFS_REQUIRE_OK(f);
    DFS_REQUIRE_OK(h->chmod(f->ino(), start_mode));  // past the umask
    proto::SetXattrRequest cap;
    *cap.mutable_header() = h->header();
    cap.set_ino(f->ino());
    cap.set_name("security.capability");
    cap.set_value(std::string("\x01\x00\x00\x02", 4) + std::string(16, '\0'));
    DFS_REQUIRE_OK(h->call<proto::InodeReply>(rpc::kMdsSetXattr, cap));
  }
  auto start = one_by_one.lookup(kRootIno, "f");
  DFS_REQUIRE_OK(start);
  proto::Inode predicted = *start;
  uint32_t valid = 0;
  proto::Inode last;
  for (auto req : changes) {
    req.set_ino(start->ino());
    auto applied = one_by_one.setattr(req);
    DFS_REQUIRE_OK(applied);
    auto p = client::predict_setattr(predicted, req, req.ctime());
    DFS_REQUIRE_OK(p);
    check_same_attrs(*p, *applied);  // claim 1
    CHECK(p->version() == applied->version());
    predicted = *p;
    valid |= req.valid() & ~kCtime;
    last = *applied;
  }
  auto m = merged.lookup(kRootIno, "f");
  DFS_REQUIRE_OK(m);
  REQUIRE(m->ino() == start->ino());
  auto once = merged.setattr(client::merged_setattr(predicted, valid));
  DFS_REQUIRE_OK(once);
  check_same_attrs(*once, last);  // claim 2
}

}  // namespace

TEST_CASE("mds/deferred setattr: rsync's chmod, chown, chmod, utimes") {
  check_sequence(0600, {change(0, kMode, 0600, 0, 0, 100), change(0, kUid | kGid, 0, 1000, 100, 101),
                        change(0, kMode, 04755, 0, 0, 102), change(0, kAtime | kMtime, 0, 0, 0, 103)});
}

TEST_CASE("mds/deferred setattr: chown after setuid clears it, as one by one") {
  check_sequence(0644, {change(0, kMode, 06755, 0, 0, 200), change(0, kUid, 0, 1000, 0, 201)});
}

TEST_CASE("mds/deferred setattr: times alone keep the capability, a chgrp drops it") {
  check_sequence(0755, {change(0, kAtime | kMtime, 0, 0, 0, 300)});
  check_sequence(0755, {change(0, kMode, 0700, 0, 0, 301), change(0, kGid, 0, 0, 55, 302),
                        change(0, kMode, 02750, 0, 0, 303)});
}

TEST_CASE("mds/batch: items apply in order, fail alone, and a resend is deduplicated") {
  MdsHarness h;
  auto f = h.create(kRootIno, "a", 0644);
  DFS_REQUIRE_OK(f);
  auto batch_of = [&](std::vector<std::pair<uint32_t, std::string>> items) {
    proto::BatchRequest batch;
    for (auto& [method, body] : items) {
      auto* item = batch.add_items();
      item->set_method(method);
      item->set_body(std::move(body));
    }
    return batch;
  };
  auto chmod = [&](uint64_t ino, uint32_t mode) {
    auto req = change(ino, kMode, mode, 0, 0, 400);
    *req.mutable_header() = h.header();
    return std::make_pair(uint32_t(rpc::kMdsSetAttr), req.SerializeAsString());
  };
  proto::RenameRequest rename;
  *rename.mutable_header() = h.header();
  rename.set_parent(kRootIno);
  rename.set_name("a");
  rename.set_new_parent(kRootIno);
  rename.set_new_name("b");

  // Attribute changes ahead of a request (they start together): two chmods of one
  // inode end with the second's mode; a failing item fails alone.
  auto batch = batch_of({chmod(f->ino(), 0600), chmod(999999, 0600), chmod(f->ino(), 0640),
                         {rpc::kMdsRename, rename.SerializeAsString()}});
  auto reply = h.call<proto::BatchReply>(rpc::kMdsBatch, batch);
  DFS_REQUIRE_OK(reply);
  REQUIRE(reply->results_size() == 4);
  CHECK(reply->results(0).code() == 0);
  CHECK(reply->results(1).code() != 0);
  CHECK(reply->results(2).code() == 0);
  CHECK(reply->results(3).code() == 0);
  auto b = h.lookup(kRootIno, "b");
  DFS_REQUIRE_OK(b);
  CHECK((b->mode() & 07777) == 0640);

  // A read behind deferred changes sees them.
  proto::LookupRequest lookup;
  *lookup.mutable_header() = h.header(/*mutating=*/false);
  lookup.set_parent(kRootIno);
  lookup.set_name("b");
  auto read = h.call<proto::BatchReply>(
      rpc::kMdsBatch, batch_of({chmod(f->ino(), 0604), chmod(f->ino(), 0600),
                                {rpc::kMdsLookup, lookup.SerializeAsString()}}));
  DFS_REQUIRE_OK(read);
  REQUIRE(read->results_size() == 3);
  proto::InodeReply seen;
  REQUIRE(seen.ParseFromString(read->results(2).body()));
  CHECK((seen.inode().mode() & 07777) == 0600);

  // The first batch again (a resend after a lost reply): nothing applies twice.
  uint64_t index = h.service().committer().last_index();
  auto again = h.call<proto::BatchReply>(rpc::kMdsBatch, batch);
  DFS_REQUIRE_OK(again);
  CHECK(again->results(0).code() == 0);
  CHECK(again->results(3).code() == 0);
  CHECK(h.service().committer().last_index() == index);

  // Other requests run one after the other: a name made by the first item is there
  // for the second.
  proto::MknodRequest mknod;
  *mknod.mutable_header() = h.header();
  mknod.set_parent(kRootIno);
  mknod.set_name("c");
  mknod.set_mode(S_IFREG | 0644);
  mknod.set_exclusive(true);
  proto::RenameRequest rename_c;
  *rename_c.mutable_header() = h.header();
  rename_c.set_parent(kRootIno);
  rename_c.set_name("c");
  rename_c.set_new_parent(kRootIno);
  rename_c.set_new_name("d");
  auto seq = h.call<proto::BatchReply>(
      rpc::kMdsBatch, batch_of({{rpc::kMdsMknod, mknod.SerializeAsString()},
                                {rpc::kMdsRename, rename_c.SerializeAsString()}}));
  DFS_REQUIRE_OK(seq);
  CHECK(seq->results(0).code() == 0);
  CHECK(seq->results(1).code() == 0);
  CHECK(h.lookup(kRootIno, "d").has_value());

  // A batch inside a batch is refused.
  DFS_REQUIRE_CODE(h.call<proto::BatchReply>(
                       rpc::kMdsBatch, batch_of({{rpc::kMdsBatch, batch.SerializeAsString()}})),
                   ErrorCode::kInvalidArgument);
}

}  // namespace dfs::mds::test
