// KnownInodes: one rule for what the mount knows of an inode. A reply never takes it
// back to an older version; a prediction of this mount replaces it at once; pending
// attribute changes stand against replies until they settle, and what came meanwhile
// (a newer reply, or the prediction of a change queued after them) wins then.
#include "client-fuse/libdfs/known_inodes.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include "client-fuse/libdfs/attr_predict.h"
#include "client-fuse/libdfs/file_client.h"  // SetAttrField

namespace dfs::client {
namespace {

proto::Inode inode(uint64_t ino, uint64_t version, uint32_t mode, int64_t mtime = 0) {
  proto::Inode i;
  i.set_ino(ino);
  i.set_version(version);
  i.set_mode(mode);
  i.mutable_mtime()->set_sec(mtime);
  return i;
}

TEST_CASE("client/known_inodes: replies never go back, predictions replace at once") {
  KnownInodes known;
  auto v5 = inode(10, 5, S_IFREG | 0644);
  v5.set_inline_data("bytes");
  known.learn(v5);
  REQUIRE(known.find(10));
  CHECK(known.find(10)->inode.inline_data().empty());  // data is not what it knows
  CHECK(known.find(10)->exact);
  known.learn(inode(10, 4, S_IFREG | 0600));  // an older reply that came late
  CHECK(known.find(10)->inode.mode() == (S_IFREG | 0644));
  known.learn(inode(10, 6, S_IFREG | 0600));
  CHECK(known.find(10)->inode.mode() == (S_IFREG | 0600));
  known.mark_inexact(10);
  CHECK_FALSE(known.find(10)->exact);
  known.adopt_prediction(inode(10, 3, S_IFREG | 0700));  // ours: whatever its version
  CHECK(known.find(10)->inode.mode() == (S_IFREG | 0700));
  CHECK(known.find(10)->exact);
  known.learn(inode(0, 9, 0));  // no inode: ignored
  CHECK(known.size() == 1);

  proto::Inode reply = inode(10, 2, S_IFREG | 0644);
  reply.set_inline_data("abc");
  known.prefer_newer(reply);  // older than what is known exactly: replaced, data kept
  CHECK(reply.mode() == (S_IFREG | 0700));
  CHECK(reply.inline_data() == "abc");

  known.learn(inode(11, 1, S_IFDIR | 0755));
  known.retain_if([](uint64_t ino) { return ino == 11; });
  CHECK_FALSE(known.find(10));
  CHECK(known.find(11));
  known.erase(11);
  CHECK(known.size() == 0);
}

TEST_CASE("client/known_inodes: attribute changes merge per inode and stand until settled") {
  KnownInodes known;
  known.learn(inode(10, 5, S_IFREG | 0644));
  known.learn(inode(20, 7, S_IFDIR | 0755));
  Creds root;
  known.predict_attrs(10, inode(10, 5, S_IFREG | 0600), kSetMode, root);
  known.predict_attrs(20, inode(20, 7, S_IFDIR | 0700, 100), kSetMode | kSetMtime, root);
  known.predict_attrs(10, inode(10, 5, S_IFREG | 0400, 200), kSetMtime, root);
  CHECK(known.attrs_queued());
  CHECK(known.attrs_pending(10));
  CHECK(known.find(10)->inode.mode() == (S_IFREG | 0400));

  auto changes = known.take_attr_changes();
  REQUIRE(changes.size() == 2);  // one per inode, in the order first queued
  CHECK(changes[0].ino == 10);
  CHECK(changes[1].ino == 20);
  CHECK((changes[0].request.valid() & (kSetMode | kSetMtime)) == (kSetMode | kSetMtime));
  CHECK((changes[0].request.mode() & 07777) == 0400);  // absolute: the merged result
  CHECK(changes[0].request.mtime().sec() == 200);
  CHECK_FALSE(known.attrs_queued());

  // A reply meanwhile (another request's, older than the change) does not replace it.
  known.learn(inode(10, 6, S_IFREG | 0644));
  CHECK(known.find(10)->inode.mode() == (S_IFREG | 0400));
  proto::Inode raced = inode(10, 9, S_IFREG | 0644);
  known.prefer_newer(raced);  // pending: what is known wins
  CHECK(raced.mode() == (S_IFREG | 0400));
  // The change's reply: the MDS's inode, the newest, is what it knows now.
  auto applied = inode(10, 7, S_IFREG | 0400, 200);
  known.attrs_answered(10, &applied);
  CHECK_FALSE(known.attrs_pending(10));
  CHECK(known.find(10)->inode.version() == 7);

  // A prediction of a change queued after the pending one (a create in the directory)
  // wins when the pending one settles, even with a lower version.
  known.adopt_prediction(inode(20, 7, S_IFDIR | 0700, 300));
  auto dir_applied = inode(20, 8, S_IFDIR | 0700, 100);
  known.attrs_answered(20, &dir_applied);
  CHECK(known.find(20)->inode.mtime().sec() == 300);
  CHECK(known.find(20)->inode.version() == 8);  // at least the reply's
}

TEST_CASE("client/known_inodes: a change queued again while in flight keeps it pending") {
  KnownInodes known;
  known.learn(inode(10, 5, S_IFREG | 0644));
  Creds root;
  known.predict_attrs(10, inode(10, 5, S_IFREG | 0600), kSetMode, root);
  auto first = known.take_attr_changes();
  known.predict_attrs(10, inode(10, 5, S_IFREG | 0400), kSetMode, root);
  auto v6 = inode(10, 6, S_IFREG | 0600);
  known.attrs_answered(10, &v6);  // the first is applied; the second is still queued
  CHECK(known.attrs_pending(10));
  CHECK(known.find(10)->inode.mode() == (S_IFREG | 0400));
  auto second = known.take_attr_changes();
  REQUIRE(second.size() == 1);
  known.attrs_answered(10, nullptr);  // failed: nothing learned; the caller decides
  CHECK_FALSE(known.attrs_pending(10));
  CHECK(known.find(10)->inode.mode() == (S_IFREG | 0400));
  known.learn(inode(10, 6, S_IFREG | 0600));  // what the MDS has, once asked again
  CHECK(known.find(10)->inode.mode() == (S_IFREG | 0600));
}

}  // namespace
}  // namespace dfs::client
