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

// A growing truncate the client answers itself (grow_only): rsync -S ends a file with a
// trailing hole so, while the kernel still holds its data. What the client predicts
// from the inode (and an inline file's bytes) is what the MDS makes of it.
TEST_CASE("mds/deferred setattr: a grow-only truncate is what the MDS makes of it") {
  constexpr uint32_t kSize = 8;
  const uint32_t threshold = MdsHarness::default_options().fs.inline_threshold;
  MdsHarness h;
  int n = 0;
  // Grows `file` (holding `data` inline, or an object file of its size) to `size` by the
  // client's rule and at the MDS, and compares.
  auto grow = [&](const proto::Inode& file, const std::string& data, uint64_t size) {
    INFO("inode ", file.ino(), " of ", file.size(), " bytes grown to ", size);
    proto::SetAttrRequest req = change(file.ino(), kSize | kMtime, 0, 0, 0, 500 + ++n);
    req.set_size(size);
    req.set_grow_only(true);
    req.set_inline_threshold(threshold);
    *req.mutable_header() = h.header();
    *req.mutable_header()->mutable_creds() = h.creds;
    *req.mutable_header()->mutable_client_time() = req.ctime();
    proto::Inode seed = file;
    if (seed.inline_()) seed.set_inline_data(data);
    auto predicted = client::predict_setattr(seed, req, req.ctime(), threshold);
    DFS_REQUIRE_OK(predicted);
    auto applied = h.call<proto::InodeReply>(rpc::kMdsSetAttr, req);
    DFS_REQUIRE_OK(applied);
    const proto::Inode& made = applied->inode();
    check_same_attrs(*predicted, made);
    CHECK(predicted->size() == size);
    CHECK(made.size() == size);
    CHECK(predicted->inline_() == made.inline_());
    CHECK(predicted->inline_data() == made.inline_data());
    return made;
  };

  auto empty = h.create(kRootIno, "empty");
  DFS_REQUIRE_OK(empty);
  CHECK(grow(*empty, "", 1000).inline_());
  auto to_objects = h.create(kRootIno, "to-objects");
  DFS_REQUIRE_OK(to_objects);
  CHECK_FALSE(grow(*to_objects, "", threshold + 1).inline_());
  auto small = h.create(kRootIno, "small");
  DFS_REQUIRE_OK(small);
  auto hello = h.write_inline(small->ino(), 0, "hello");
  DFS_REQUIRE_OK(hello);
  auto grown = grow(*hello, "hello", 4096);
  CHECK(grown.inline_data() == "hello" + std::string(4091, '\0'));
  auto big = h.create(kRootIno, "big");
  DFS_REQUIRE_OK(big);
  DFS_REQUIRE_OK(h.uninline(big->ino()));
  auto objects = h.commit_write(big->ino(), 1 << 20);
  DFS_REQUIRE_OK(objects);
  grow(*objects, "", 3 << 20);

  // What would need object work is refused, and changes nothing.
  auto refused = [&](const proto::Inode& file, uint64_t size, uint32_t predicted_with) {
    proto::SetAttrRequest req = change(file.ino(), kSize, 0, 0, 0, 600);
    req.set_size(size);
    req.set_grow_only(true);
    req.set_inline_threshold(predicted_with);
    *req.mutable_header() = h.header();
    INFO("inode ", file.ino(), " of ", file.size(), " bytes to ", size, ", predicted with ",
         predicted_with);
    DFS_REQUIRE_CODE(h.call<proto::InodeReply>(rpc::kMdsSetAttr, req), ErrorCode::kInvalidArgument);
    auto after = h.getattr(file.ino());
    DFS_REQUIRE_OK(after);
    CHECK(after->size() == file.size());
    CHECK(after->inline_() == file.inline_());
  };
  auto now_big = h.getattr(big->ino());
  DFS_REQUIRE_OK(now_big);
  refused(*now_big, 1 << 20, threshold);      // a cut of objects
  refused(grown, threshold + 1, threshold);   // inline bytes to object 0
  refused(grown, 10, threshold);              // an inline file cut
  // Predicted with another threshold: the client thought it would stay inline.
  auto other = h.create(kRootIno, "other-threshold");
  DFS_REQUIRE_OK(other);
  refused(*other, threshold + 1, threshold * 2);

  // In a batch it queues at once: one group with the changes around it.
  uint64_t groups_before = h.service().committer().stats().groups;
  proto::BatchRequest batch;
  proto::SetAttrRequest chmod = change(empty->ino(), kMode, 0600, 0, 0, 700);
  *chmod.mutable_header() = h.header();
  add_batch_item(batch, rpc::kMdsSetAttr, chmod);
  proto::SetAttrRequest longer = change(empty->ino(), kSize, 0, 0, 0, 701);
  longer.set_size(2000);
  longer.set_grow_only(true);
  longer.set_inline_threshold(threshold);
  *longer.mutable_header() = h.header();
  add_batch_item(batch, rpc::kMdsSetAttr, longer);
  proto::SetAttrRequest chmod_again = change(empty->ino(), kMode, 0640, 0, 0, 702);
  *chmod_again.mutable_header() = h.header();
  add_batch_item(batch, rpc::kMdsSetAttr, chmod_again);
  auto reply = h.call<proto::BatchReply>(rpc::kMdsBatch, batch);
  DFS_REQUIRE_OK(reply);
  REQUIRE(reply->results_size() == 3);
  for (const auto& r : reply->results()) CHECK_MESSAGE(r.code() == 0, r.message());
  CHECK(h.service().committer().stats().groups == groups_before + 1);
  auto after = h.getattr(empty->ino());
  DFS_REQUIRE_OK(after);
  CHECK(after->size() == 2000);
  CHECK((after->mode() & 07777) == 0640);
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
