// Read shares through MdsService::handle() (docs/capabilities.md, "Read shares"): the
// rules MdsService applies around DirRights at an open, a lookup, a getattr and every
// change. Mount sessions without connections: a recall reaches its holder only as the
// renewal's pending recall, which the test acknowledges for it.
#include <doctest/doctest.h>
#include <fcntl.h>

#include <optional>
#include <string>

#include "tests/unit/mds/mds_harness.h"

namespace dfs::mds::test {
namespace {

constexpr const char* kA = "client.a.1";
constexpr const char* kB = "client.b.1";

// A request header of `client`'s (mutations get a fresh request id).
proto::MdsRequestHeader header_of(MdsHarness& h, const std::string& client,
                                  bool mutating = true) {
  proto::MdsRequestHeader header = h.header(mutating);
  header.mutable_reqid()->set_client(client);
  return header;
}

proto::OpenRequest open_request(MdsHarness& h, const std::string& client, uint64_t ino,
                                int flags, bool read_share) {
  proto::OpenRequest req;
  *req.mutable_header() = header_of(h, client);
  req.set_ino(ino);
  req.set_flags(static_cast<uint32_t>(flags));
  req.set_read_share(read_share);
  return req;
}

// `client` opens `ino` read-only asking to share it: whether the MDS shared it.
bool open_to_read(MdsHarness& h, const std::string& client, uint64_t ino) {
  auto reply =
      h.call<proto::InodeReply>(rpc::kMdsOpen, open_request(h, client, ino, O_RDONLY, true));
  REQUIRE_MESSAGE(reply, reply.error().to_string());
  return reply->read_shared();
}

void release(MdsHarness& h, const std::string& client, uint64_t ino) {
  proto::ReleaseRequest req;
  *req.mutable_header() = header_of(h, client);
  req.set_ino(ino);
  DFS_REQUIRE_OK(h.call<proto::Empty>(rpc::kMdsRelease, req));
}

// The recall `client` has not acknowledged yet (0: none), as its renewal says.
uint64_t pending_recall(MdsHarness& h, const std::string& client) {
  proto::RenewRequest renew;
  *renew.mutable_header() = header_of(h, client, false);
  auto reply = h.call<proto::RenewReply>(rpc::kMdsRenew, renew);
  REQUIRE_MESSAGE(reply, reply.error().to_string());
  return reply->dirs_recall();
}

void acknowledge(MdsHarness& h, const std::string& client, uint64_t seq) {
  proto::CacheAckRequest ack;
  *ack.mutable_header() = header_of(h, client, false);
  ack.add_seqs(seq);
  DFS_REQUIRE_OK(h.call<proto::CacheAckReply>(rpc::kMdsCacheAck, ack));
}

// Runs `p` until it is answered, acknowledging `holder`'s recall when one comes.
void answer_recall_of(MdsHarness& h, const std::string& holder, PendingReply& p) {
  h.run_for(Duration(50));
  REQUIRE_FALSE(p.done());  // it waits for the holder
  const uint64_t seq = pending_recall(h, holder);
  REQUIRE(seq != 0);
  acknowledge(h, holder, seq);
  for (int i = 0; i < 100 && !p.done(); ++i) h.run_for(Duration(10));
  REQUIRE(p.done());
  REQUIRE_MESSAGE(p.reply->has_value(), p.reply->error().to_string());
}

// `client` looks `name` up in `parent` asking to share it: whether the MDS shared it.
bool lookup_shared(MdsHarness& h, const std::string& client, uint64_t parent,
                   const std::string& name) {
  proto::LookupRequest req;
  *req.mutable_header() = header_of(h, client, false);
  req.set_parent(parent);
  req.set_name(name);
  req.set_share(true);
  auto reply = h.call<proto::InodeReply>(rpc::kMdsLookup, req);
  REQUIRE_MESSAGE(reply, reply.error().to_string());
  return reply->read_shared();
}

// The same for a getattr of `ino`.
proto::GetAttrRequest getattr_request(MdsHarness& h, const std::string& client, uint64_t ino) {
  proto::GetAttrRequest req;
  *req.mutable_header() = header_of(h, client, false);
  req.set_ino(ino);
  req.set_share(true);
  return req;
}
bool getattr_shared(MdsHarness& h, const std::string& client, uint64_t ino) {
  auto reply = h.call<proto::InodeReply>(rpc::kMdsGetAttr, getattr_request(h, client, ino));
  REQUIRE_MESSAGE(reply, reply.error().to_string());
  return reply->read_shared();
}

struct Fixture {
  MdsHarness h;
  uint64_t file = 0;
  Fixture() {
    DFS_REQUIRE_OK(h.open_session(kA, false, false, true));
    DFS_REQUIRE_OK(h.open_session(kB, false, false, true));
    auto made = h.create(kRootIno, "shared");
    DFS_REQUIRE_OK(made);
    file = made->ino();
  }
};

}  // namespace

TEST_CASE("mds/read shares: readers share, a writer's open recalls them and blocks new ones") {
  Fixture f;
  auto& h = f.h;
  CHECK(open_to_read(h, kA, f.file));
  CHECK(open_to_read(h, kB, f.file));  // both at once
  release(h, kA, f.file);
  release(h, kB, f.file);
  CHECK(open_to_read(h, kB, f.file));  // still shared after the close: pages across opens
  release(h, kB, f.file);

  // A opens for writing: its own share ends at once, B's is recalled first.
  PendingReply writer;
  start_request(h, rpc::kMdsOpen, open_request(h, kA, f.file, O_WRONLY, false), &writer);
  answer_recall_of(h, kB, writer);
  CHECK(pending_recall(h, kA) == 0);  // its own share went without a recall
  // Nobody is given a share while A has it open for writing, A included.
  CHECK_FALSE(open_to_read(h, kB, f.file));
  release(h, kB, f.file);
  CHECK_FALSE(open_to_read(h, kA, f.file));  // a second open of its own
  release(h, kA, f.file);
  release(h, kA, f.file);  // the writer's
  CHECK(open_to_read(h, kB, f.file));  // the writer is gone
  release(h, kB, f.file);
}

TEST_CASE("mds/read shares: a truncate, a touch, a write and an O_CREAT open recall them") {
  Fixture f;
  auto& h = f.h;
  CHECK(open_to_read(h, kB, f.file));
  release(h, kB, f.file);

  h.set_client(kA);
  proto::SetAttrRequest truncate;
  *truncate.mutable_header() = h.header();
  truncate.set_ino(f.file);
  truncate.set_valid(proto::SET_ATTR_SIZE);
  truncate.set_size(100);
  PendingReply setattr;
  start_request(h, rpc::kMdsSetAttr, truncate, &setattr);
  answer_recall_of(h, kB, setattr);

  // A change of times: the attributes B's kernel keeps go.
  CHECK(open_to_read(h, kB, f.file));
  release(h, kB, f.file);
  proto::SetAttrRequest touch;
  *touch.mutable_header() = h.header();
  touch.set_ino(f.file);
  touch.set_valid(proto::SET_ATTR_MTIME);
  touch.mutable_mtime()->set_sec(1'700'000'000);
  PendingReply touched;
  start_request(h, rpc::kMdsSetAttr, touch, &touched);
  answer_recall_of(h, kB, touched);

  // A write of another mount's (to an inline file: the data goes to the MDS).
  CHECK(open_to_read(h, kB, f.file));
  release(h, kB, f.file);
  proto::WriteInlineRequest write;
  *write.mutable_header() = h.header();
  write.set_ino(f.file);
  write.set_offset(0);
  write.set_data("written");
  PendingReply written;
  start_request(h, rpc::kMdsWriteInline, write, &written);
  answer_recall_of(h, kB, written);

  CHECK(open_to_read(h, kB, f.file));
  release(h, kB, f.file);
  proto::MknodRequest create;
  *create.mutable_header() = h.header();
  create.set_parent(kRootIno);
  create.set_name("shared");
  create.set_mode(S_IFREG | 0644);
  create.set_open(true);  // O_CREAT without O_EXCL on the existing name
  PendingReply created;
  start_request(h, rpc::kMdsMknod, create, &created);
  answer_recall_of(h, kB, created);
  CHECK_FALSE(open_to_read(h, kB, f.file));  // A holds it open as a writer
}

TEST_CASE("mds/read shares: an owned file is not shared, and a shared file is not owned") {
  Fixture f;
  auto& h = f.h;
  // A's writing open asking to own it, with nobody else there: A owns it.
  auto own = open_request(h, kA, f.file, O_RDWR, false);
  own.set_own(true);
  auto owned = h.call<proto::InodeReply>(rpc::kMdsOpen, own);
  DFS_REQUIRE_OK(owned);
  CHECK(owned->owned());
  release(h, kA, f.file);
  // B's read recalls A's ownership first, then shares it.
  PendingReply reader;
  start_request(h, rpc::kMdsOpen, open_request(h, kB, f.file, O_RDONLY, true), &reader);
  answer_recall_of(h, kA, reader);
  proto::InodeReply shared;
  REQUIRE(shared.ParseFromString((*reader.reply)->body));
  CHECK(shared.read_shared());
  CHECK_FALSE(shared.owned());
  release(h, kB, f.file);
  // The file stays shared: A's next writing open recalls B and is not given the file.
  auto again = open_request(h, kA, f.file, O_RDWR, false);
  again.set_own(true);
  PendingReply writer;
  start_request(h, rpc::kMdsOpen, again, &writer);
  answer_recall_of(h, kB, writer);
  proto::InodeReply written;
  REQUIRE(written.ParseFromString((*writer.reply)->body));
  CHECK_FALSE(written.owned());  // contested: recalled lately
}

TEST_CASE("mds/read shares: lookups and getattrs share, every change of a shared inode recalls") {
  Fixture f;
  auto& h = f.h;
  auto dir = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(dir);
  auto other = h.mkdir(kRootIno, "e");
  DFS_REQUIRE_OK(other);
  h.set_client(kA);
  auto ino = [&](const char* name) {
    auto found = h.lookup(dir->ino(), name);
    REQUIRE_MESSAGE(found, found.error().to_string());
    return found->ino();
  };
  // Each step: B shares what it looks at; A's change waits until B gave it up.
  auto recalled_by = [&](uint32_t method, const auto& req) {
    PendingReply change;
    start_request(h, method, req, &change);
    answer_recall_of(h, kB, change);
  };

  for (const char* name : {"f1", "f2", "f3"}) DFS_REQUIRE_OK(h.create(dir->ino(), name));

  // A create in a directory B shares (its names are what B caches).
  CHECK(getattr_shared(h, kB, dir->ino()));
  proto::MknodRequest create;
  *create.mutable_header() = h.header();
  create.set_parent(dir->ino());
  create.set_name("f");
  create.set_mode(S_IFREG | 0644);
  recalled_by(rpc::kMdsMknod, create);
  // Just changed: not shared again for a while (each change would wait for a recall).
  CHECK_FALSE(getattr_shared(h, kB, dir->ino()));

  // A chmod of a file B shares.
  CHECK(lookup_shared(h, kB, dir->ino(), "f1"));
  proto::SetAttrRequest chmod;
  *chmod.mutable_header() = h.header();
  chmod.set_ino(ino("f1"));
  chmod.set_valid(proto::SET_ATTR_MODE);
  chmod.set_mode(0600);
  recalled_by(rpc::kMdsSetAttr, chmod);

  // A rename of a file B shares, in a directory B does not share now: the moved inode
  // goes.
  CHECK(lookup_shared(h, kB, dir->ino(), "f2"));
  proto::RenameRequest rename;
  *rename.mutable_header() = h.header();
  rename.set_parent(dir->ino());
  rename.set_name("f2");
  rename.set_new_parent(dir->ino());
  rename.set_new_name("g");
  recalled_by(rpc::kMdsRename, rename);

  // An unlink of a name whose file B shares (its link count changes).
  CHECK(lookup_shared(h, kB, dir->ino(), "f3"));
  proto::UnlinkRequest unlink;
  *unlink.mutable_header() = h.header();
  unlink.set_parent(dir->ino());
  unlink.set_name("f3");
  recalled_by(rpc::kMdsUnlink, unlink);

  // What B shares and nobody changes stays: a change elsewhere recalls nothing.
  CHECK(getattr_shared(h, kB, other->ino()));
  DFS_REQUIRE_OK(h.create(dir->ino(), "elsewhere"));
  CHECK(pending_recall(h, kB) == 0);
  // A change by the holder itself recalls nothing either (its kernel learns it from the
  // answer).
  h.set_client(kB);
  DFS_REQUIRE_OK(h.create(other->ino(), "own"));
  CHECK(pending_recall(h, kB) == 0);
  CHECK(getattr_shared(h, kB, other->ino()));  // held still
}

TEST_CASE("mds/read shares: none while a change is in flight or a writer has the file open") {
  Fixture f;
  auto& h = f.h;
  auto dir = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(dir);
  DFS_REQUIRE_OK(h.create(dir->ino(), "x"));
  constexpr const char* kC = "client.c.1";
  DFS_REQUIRE_OK(h.open_session(kC, false, false, true));
  // A's rename in the directory waits for B's share of the file it moves. Meanwhile
  // nobody is given a share of the directory, which nobody held (no recall, no hold-off):
  // the answer would be read before the rename lands.
  CHECK(lookup_shared(h, kB, dir->ino(), "x"));
  h.set_client(kA);
  proto::RenameRequest rename;
  *rename.mutable_header() = h.header();
  rename.set_parent(dir->ino());
  rename.set_name("x");
  rename.set_new_parent(dir->ino());
  rename.set_new_name("y");
  PendingReply moved;
  start_request(h, rpc::kMdsRename, rename, &moved);
  h.run_for(Duration(50));
  REQUIRE_FALSE(moved.done());
  CHECK_FALSE(getattr_shared(h, kC, dir->ino()));
  const uint64_t seq = pending_recall(h, kB);
  REQUIRE(seq != 0);
  acknowledge(h, kB, seq);
  for (int i = 0; i < 100 && !moved.done(); ++i) h.run_for(Duration(10));
  REQUIRE(moved.done());
  CHECK(getattr_shared(h, kC, dir->ino()));  // landed: shared now

  // A file another session holds open for writing is not shared by a getattr.
  auto writer = h.call<proto::InodeReply>(rpc::kMdsOpen,
                                          open_request(h, kA, f.file, O_WRONLY, false));
  DFS_REQUIRE_OK(writer);
  CHECK_FALSE(getattr_shared(h, kB, f.file));
  release(h, kA, f.file);
  CHECK(getattr_shared(h, kB, f.file));
  // Nor one the asker holds open without sharing it (its open may write).
  CHECK(getattr_shared(h, kA, f.file));
  PendingReply write_open;
  start_request(h, rpc::kMdsOpen, open_request(h, kA, f.file, O_RDWR, false), &write_open);
  answer_recall_of(h, kB, write_open);
  CHECK_FALSE(getattr_shared(h, kA, f.file));
  release(h, kA, f.file);
}

}  // namespace dfs::mds::test
