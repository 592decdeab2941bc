// libdfs's FileClient, two at once, against real daemons (dfs-mon, three dfs-osd and a
// dfs-mds on loopback): the open-file table across clients (close-to-open, a size
// written and not closed, a handle used after release), the deferred changes one
// client answers alone and their states (predicted, then settled when the other
// client's arrival recalls them), what a directory listing teaches (DirCache::listed)
// and when it must not, and the cluster-wide locks of MountLocks.
#include "client-fuse/libdfs/file_client.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "common/rpc/methods.h"
#include "tests/support/mds_process.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {
namespace {

using client::Creds;
using client::FileClient;

// A cluster with an MDS, and FileClients connected to it.
struct FsCluster {
  TestCluster cluster;
  std::unique_ptr<MdsProcess> mds;

  FsCluster() {
    DFS_REQUIRE_OK(cluster.boot());
    DFS_REQUIRE_OK(cluster.create_pool("data", 3, 2, 16));
    mds = std::make_unique<MdsProcess>(cluster);
    DFS_REQUIRE_OK(mds->mkfs());
    DFS_REQUIRE_OK(mds->start());
  }

  std::unique_ptr<FileClient> connect(const std::string& name) {
    client::FileClientOptions options;
    options.objects.mon_addrs = cluster.mon_addrs();
    options.objects.fsid = cluster.fsid();
    options.objects.name = name;
    options.objects.op_timeout = Duration(30000);
    options.objects.attempt_timeout = Duration(10000);
    options.objects.connect_timeout = Duration(30000);
    auto c = FileClient::connect(options);
    DFS_REQUIRE_OK(c);
    return std::move(*c);
  }
};

// Shuts a client down (pushing what it holds) before it is destroyed.
void close_client(std::unique_ptr<FileClient>& c) {
  if (!c) return;
  CHECK(c->run(c->shutdown()).has_value());
  c.reset();
}

// Waits up to `patience` for `holds` to become true.
template <class Pred>
bool eventually(Pred holds, Duration patience = Duration(10000)) {
  auto until = Clock::now() + patience;
  while (!holds()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

const Creds kRoot{};

awaitable<bool> alone_on(FileClient& c, uint64_t fh) { co_return c.alone_handle(fh); }
awaitable<bool> exclusive(FileClient& c) { co_return c.exclusive_now(); }
awaitable<FileClient::DeferredCounts> deferred(FileClient& c) { co_return c.deferred_counts(); }
awaitable<uint64_t> mds_calls(FileClient& c, uint32_t method) { co_return c.mds_calls(method); }

// A client, once it holds exclusive caching (alone on the file system).
std::unique_ptr<FileClient> connect_alone(FsCluster& fs, const std::string& name) {
  auto c = fs.connect(name);
  REQUIRE(eventually([&] { return c->run(exclusive(*c)); }));
  return c;
}

// The whole listing of `dir`, asked for `batch` names at a time; `between` runs after
// the first batch.
Status list_all(FileClient& c, uint64_t dir, uint32_t batch,
                const std::function<void()>& between = nullptr) {
  uint64_t cookie = 0;
  for (bool first = true;; first = false) {
    auto part = c.run(c.readdir(kRoot, dir, cookie, batch, true));
    if (!part) return part.error();
    if (part->entries_size() > 0) cookie = part->entries(part->entries_size() - 1).cookie();
    if (first && between) between();
    if (part->eof()) return ok_status();
  }
}

// Whether an unlink of `name` in `dir` was answered by `c` itself and queued (deferred)
// rather than sent to the MDS alone.
bool unlink_deferred(FileClient& c, uint64_t dir, const std::string& name) {
  const auto before = c.run(deferred(c));
  auto gone = c.run(c.unlink(kRoot, dir, name, false));
  DFS_REQUIRE_OK(gone);
  const auto after = c.run(deferred(c));
  return after.predicted + after.sent > before.predicted + before.sent;
}

// The names of `dir`'s listing from its start (one batch: small directories only).
Result<std::set<std::string>> names_in(FileClient& c, uint64_t dir) {
  auto listed = DFS_TRY(c.run(c.readdir(kRoot, dir, 0, 512, true)));
  std::set<std::string> names;
  for (const auto& e : listed.entries()) {
    if (e.name() != "." && e.name() != "..") names.insert(e.name());
  }
  REQUIRE(listed.eof());
  return names;
}

Result<std::string> read_whole(FileClient& c, uint64_t parent, const std::string& name) {
  auto inode = DFS_TRY(c.run(c.lookup(kRoot, parent, name)));
  auto file = DFS_TRY(c.run(c.open(kRoot, inode.ino(), O_RDONLY)));
  auto data = c.run(c.read(file.fh, 0, 1 << 20));
  (void)c.run(c.release(file.fh));
  return data;
}

TEST_CASE("integration/file_client: two clients see each other's files through their open-file tables") {
  FsCluster fs;
  auto a = fs.connect("a");
  auto b = fs.connect("b");
  const uint64_t root = a->root_ino();

  // Close-to-open: written and closed on A, whole on B's next open.
  auto made = a->run(a->create(kRoot, root, "f", 0644, O_WRONLY | O_CREAT | O_EXCL));
  DFS_REQUIRE_OK(made);
  CHECK(made->created);
  DFS_REQUIRE_OK(a->run(a->write(made->fh, 0, "hello", false)));
  DFS_REQUIRE_OK(a->run(a->release(made->fh)));
  auto seen = read_whole(*b, root, "f");
  DFS_REQUIRE_OK(seen);
  CHECK(*seen == "hello");

  // A size written on A and not closed: B's stat sees it.
  auto inode = b->run(b->lookup(kRoot, root, "f"));
  DFS_REQUIRE_OK(inode);
  auto open = a->run(a->open(kRoot, inode->ino(), O_WRONLY));
  DFS_REQUIRE_OK(open);
  DFS_REQUIRE_OK(a->run(a->write(open->fh, 5, std::string(70000, 'x'), false)));
  // As the FUSE layer does (Vfs::write): a write not alone on its file records its size.
  if (!a->run(alone_on(*a, open->fh))) DFS_REQUIRE_OK(a->run(a->flush(open->fh)));
  auto stat = b->run(b->getattr(kRoot, inode->ino()));
  DFS_REQUIRE_OK(stat);
  CHECK(stat->size() == 70005);
  DFS_REQUIRE_OK(a->run(a->release(open->fh)));
  seen = read_whole(*b, root, "f");
  DFS_REQUIRE_OK(seen);
  CHECK(*seen == "hello" + std::string(70000, 'x'));

  // A released handle is gone from the table: using it again is an error, not a crash,
  // and a second release is harmless.
  auto stale = a->run(a->read(open->fh, 0, 10));
  REQUIRE_FALSE(stale);
  CHECK(stale.error().code() == ErrorCode::kInvalidArgument);
  DFS_CHECK_OK(a->run(a->release(open->fh)));

  // An O_EXCL create of a name the other client made loses.
  auto again = b->run(b->create(kRoot, root, "f", 0644, O_WRONLY | O_CREAT | O_EXCL));
  REQUIRE_FALSE(again);
  CHECK(again.error().code() == ErrorCode::kAlreadyExists);

  close_client(b);
  close_client(a);
}

TEST_CASE("integration/file_client: changes answered alone are predicted, then settle at a recall") {
  FsCluster fs;
  auto a = connect_alone(fs, "a");
  const uint64_t root = a->root_ino();

  auto dir = a->run(a->mknod(kRoot, root, "d", S_IFDIR | 0755, 0));
  DFS_REQUIRE_OK(dir);
  constexpr int kFiles = 20;
  for (int i = 0; i < kFiles; ++i) {
    auto f = a->run(a->create(kRoot, dir->ino(), "f" + std::to_string(i), 0644,
                              O_WRONLY | O_CREAT | O_EXCL));
    DFS_REQUIRE_OK(f);
    DFS_REQUIRE_OK(a->run(a->write(f->fh, 0, "data " + std::to_string(i), false)));
    DFS_REQUIRE_OK(a->run(a->release(f->fh)));
  }
  // Alone, A answered the creates and the pushes of their bytes itself and queued them
  // for the MDS, which they reach ahead of A's next call or after a short delay.
  const auto queued = a->run(deferred(*a));
  CHECK(queued.predicted + queued.sent >= static_cast<uint64_t>(2 * kFiles));

  // B's session recalls A's exclusive caching: A pushes everything first, so B finds
  // every file with its bytes, and every change A queued settled.
  auto b = fs.connect("b");
  for (int i = 0; i < kFiles; ++i) {
    auto seen = read_whole(*b, dir->ino(), "f" + std::to_string(i));
    DFS_REQUIRE_OK(seen);
    CHECK(*seen == "data " + std::to_string(i));
  }
  const auto after = a->run(deferred(*a));
  CHECK(after.predicted == 0);
  CHECK(after.settled == after.sent);
  CHECK(after.failed == 0);
  CHECK_FALSE(a->run(exclusive(*a)));

  close_client(b);
  close_client(a);
}

TEST_CASE("integration/file_client: a missing attribute's removal is answered alone, an existing "
          "one's by the MDS") {
  FsCluster fs;
  auto a = connect_alone(fs, "a");
  const uint64_t root = a->root_ino();
  auto f = a->run(a->create(kRoot, root, "f", 0644, O_WRONLY | O_CREAT | O_EXCL));
  DFS_REQUIRE_OK(f);
  const uint64_t ino = f->inode.ino();
  DFS_REQUIRE_OK(a->run(a->release(f->fh)));

  // A knows f exactly (it made it, alone): tar --acls' removal of a default ACL nobody
  // set needs no MDS.
  const uint64_t before = a->run(mds_calls(*a, rpc::kMdsRemoveXattr));
  auto missing = a->run(a->removexattr(kRoot, ino, "system.posix_acl_default"));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code() == ErrorCode::kNoAttribute);
  CHECK(a->run(mds_calls(*a, rpc::kMdsRemoveXattr)) == before);

  // B's arrival ends A's exclusive knowledge, and B sets an attribute: A's removal of it
  // must reach the MDS and remove it, not be answered from what A knew before.
  auto b = fs.connect("b");
  DFS_REQUIRE_OK(b->run(b->setxattr(kRoot, ino, "user.x", "1", 0)));
  DFS_REQUIRE_OK(a->run(a->removexattr(kRoot, ino, "user.x")));
  auto gone = b->run(b->getxattr(kRoot, ino, "user.x"));
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().code() == ErrorCode::kNoAttribute);

  close_client(b);
  close_client(a);
}

TEST_CASE("integration/file_client: a directory is listed again from memory only while nothing "
          "changed") {
  FsCluster fs;
  auto a = connect_alone(fs, "a");
  const uint64_t root = a->root_ino();
  auto dir = a->run(a->mknod(kRoot, root, "d", S_IFDIR | 0755, 0));
  DFS_REQUIRE_OK(dir);
  for (const char* name : {"f0", "f1", "f2"}) {
    DFS_REQUIRE_OK(a->run(a->mknod(kRoot, dir->ino(), name, S_IFREG | 0644, 0)));
  }
  auto readdirs = [&] { return a->run(mds_calls(*a, rpc::kMdsReaddir)); };
  const std::set<std::string> three{"f0", "f1", "f2"};

  // rm -rf lists each directory twice in a row: the second listing needs no call.
  const uint64_t before = readdirs();
  auto first = names_in(*a, dir->ino());
  DFS_REQUIRE_OK(first);
  CHECK(*first == three);
  CHECK(readdirs() == before + 1);
  auto second = names_in(*a, dir->ino());
  DFS_REQUIRE_OK(second);
  CHECK(*second == three);
  CHECK(readdirs() == before + 1);

  // A change of this mount's (deferred, answered at once) makes it stale.
  DFS_REQUIRE_OK(a->run(a->unlink(kRoot, dir->ino(), "f0", false)));
  auto after_unlink = names_in(*a, dir->ino());
  DFS_REQUIRE_OK(after_unlink);
  CHECK(*after_unlink == std::set<std::string>{"f1", "f2"});
  CHECK(readdirs() == before + 2);

  // Another mount's arrival moves A's rights: A asks the MDS again and sees B's file.
  auto b = fs.connect("b");
  DFS_REQUIRE_OK(b->run(b->mknod(kRoot, dir->ino(), "g", S_IFREG | 0644, 0)));
  auto after_b = names_in(*a, dir->ino());
  DFS_REQUIRE_OK(after_b);
  CHECK(*after_b == std::set<std::string>{"f1", "f2", "g"});
  CHECK(readdirs() > before + 2);

  close_client(b);
  close_client(a);
}

TEST_CASE("integration/file_client: a listing teaches names only if nothing could change them") {
  FsCluster fs;
  uint64_t dir = 0;
  {
    auto maker = fs.connect("maker");
    auto d = maker->run(maker->mknod(kRoot, maker->root_ino(), "d", S_IFDIR | 0755, 0));
    DFS_REQUIRE_OK(d);
    dir = d->ino();
    for (int i = 0; i < 8; ++i) {
      DFS_REQUIRE_OK(maker->run(maker->mknod(kRoot, dir, "f" + std::to_string(i),
                                             S_IFREG | 0644, 0)));
    }
    close_client(maker);
  }
  // A new client alone: the directory is not its own creation, so it knows its names
  // only from a listing.
  auto a = connect_alone(fs, "a");
  DFS_REQUIRE_OK(a->run(a->lookup(kRoot, a->root_ino(), "d")));
  CHECK_FALSE(unlink_deferred(*a, dir, "f0"));  // not listed yet: the MDS decides

  SUBCASE("a whole listing, alone throughout: its names are known") {
    DFS_REQUIRE_OK(list_all(*a, dir, 2));
    CHECK(unlink_deferred(*a, dir, "f1"));
    auto missing = a->run(a->lookup(kRoot, dir, "never"));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code() == ErrorCode::kNotFound);
  }
  SUBCASE("a change of the mount's own between two batches: nothing learned") {
    DFS_REQUIRE_OK(list_all(*a, dir, 2, [&] {
      DFS_REQUIRE_OK(a->run(a->rename(kRoot, dir, "f7", dir, "g7", 0)));
    }));
    CHECK_FALSE(unlink_deferred(*a, dir, "f1"));
    DFS_CHECK_OK(a->run(a->lookup(kRoot, dir, "g7")));
  }
  SUBCASE("another mount came, changed the directory and left between two batches") {
    DFS_REQUIRE_OK(list_all(*a, dir, 2, [&] {
      auto b = fs.connect("b");
      DFS_REQUIRE_OK(b->run(b->mknod(kRoot, dir, "from-b", S_IFREG | 0644, 0)));
      DFS_REQUIRE_OK(b->run(b->unlink(kRoot, dir, "f6", false)));
      close_client(b);
      REQUIRE(eventually([&] { return a->run(exclusive(*a)); }));  // alone again
    }));
    CHECK_FALSE(unlink_deferred(*a, dir, "f1"));
    DFS_CHECK_OK(a->run(a->lookup(kRoot, dir, "from-b")));
    auto gone = a->run(a->lookup(kRoot, dir, "f6"));
    REQUIRE_FALSE(gone);
    CHECK(gone.error().code() == ErrorCode::kNotFound);
  }
  close_client(a);
}

awaitable<uint64_t> reads_ahead(FileClient& c) { co_return c.reads_ahead_of_deferred(); }

// The mode `name` has in `dir`'s listing (readdirplus), or 0 when it is not listed.
uint32_t listed_mode(FileClient& c, uint64_t dir, const std::string& name) {
  auto listed = c.run(c.readdir(kRoot, dir, 0, 512, true));
  DFS_REQUIRE_OK(listed);
  for (const auto& e : listed->entries()) {
    if (e.name() == name) return e.inode().mode() & 07777;
  }
  return 0;
}

TEST_CASE("integration/file_client: a read no deferred change touches goes ahead of them, any "
          "other carries them") {
  FsCluster fs;
  auto a = connect_alone(fs, "a");
  const uint64_t root = a->root_ino();
  auto quiet = a->run(a->mknod(kRoot, root, "quiet", S_IFDIR | 0755, 0));
  DFS_REQUIRE_OK(quiet);
  uint64_t chmodded = 0;
  for (const std::string name : {"f", "g"}) {
    auto f = a->run(a->create(kRoot, quiet->ino(), name, 0644, O_WRONLY | O_CREAT | O_EXCL));
    DFS_REQUIRE_OK(f);
    DFS_REQUIRE_OK(a->run(a->release(f->fh)));
    if (name == "f") chmodded = f->inode.ino();
  }
  DFS_REQUIRE_OK(a->run(a->sync_all()));

  // Each round, B comes and goes (A forgets what it knew alone: its reads of quiet/ ask
  // the MDS), A changes quiet/f's mode, creates a directory and defers a create there,
  // then reads: what the pending create touches is read with it (the listing shows it),
  // the rest may go ahead of it.
  constexpr int kRounds = 10;
  for (int i = 0; i < kRounds; ++i) {
    CAPTURE(i);
    auto b = fs.connect("b");
    close_client(b);
    REQUIRE(eventually([&] { return a->run(exclusive(*a)); }));
    const uint32_t mode = 0600 | (i % 8);
    client::SetAttrArgs chmod;
    chmod.valid = client::kSetMode;
    chmod.mode = S_IFREG | mode;
    DFS_REQUIRE_OK(a->run(a->setattr(kRoot, chmodded, chmod)));
    auto busy = a->run(a->mknod(kRoot, root, "busy" + std::to_string(i), S_IFDIR | 0755, 0));
    DFS_REQUIRE_OK(busy);
    auto x = a->run(a->create(kRoot, busy->ino(), "x", 0640, O_WRONLY | O_CREAT | O_EXCL));
    DFS_REQUIRE_OK(x);
    DFS_REQUIRE_OK(a->run(a->release(x->fh)));

    auto g = a->run(a->lookup(kRoot, quiet->ino(), "g"));
    DFS_REQUIRE_OK(g);
    CHECK((g->mode() & 07777) == 0644);
    // g's second name, removed by a pending unlink: the lookup of its first name answers
    // an inode that unlink changes, and shows the unlink (asked again with it; what A
    // predicted for g would correct an answer from before it too).
    DFS_REQUIRE_OK(a->run(a->link(kRoot, g->ino(), busy->ino(), "g2")));
    CHECK(unlink_deferred(*a, busy->ino(), "g2"));
    g = a->run(a->lookup(kRoot, quiet->ino(), "g"));
    DFS_REQUIRE_OK(g);
    CHECK(g->nlink() == 1);
    CHECK(listed_mode(*a, quiet->ino(), "f") == mode);
    CHECK(listed_mode(*a, busy->ino(), "x") == 0640);
    // A chmod of what A knows now is answered by A, and with a create pending too, the
    // next listing of quiet/ carries them.
    chmod.mode = S_IFREG | 0604;
    DFS_REQUIRE_OK(a->run(a->setattr(kRoot, chmodded, chmod)));
    auto y = a->run(a->create(kRoot, busy->ino(), "y", 0640, O_WRONLY | O_CREAT | O_EXCL));
    DFS_REQUIRE_OK(y);
    DFS_REQUIRE_OK(a->run(a->release(y->fh)));
    CHECK(listed_mode(*a, quiet->ino(), "f") == 0604);
  }
  DFS_REQUIRE_OK(a->run(a->sync_all()));
  const auto counts = a->run(deferred(*a));
  CHECK(counts.failed == 0);
  // The lookup of quiet/g goes ahead whenever the round's create is still pending.
  const uint64_t ahead = a->run(reads_ahead(*a));
  MESSAGE("reads ahead of deferred changes: " << ahead << " in " << kRounds << " rounds");
  CHECK(ahead > 0);
  close_client(a);
}

TEST_CASE("integration/file_client: one client's lock is the other's conflict until it is released") {
  FsCluster fs;
  auto a = fs.connect("a");
  auto b = fs.connect("b");
  const uint64_t root = a->root_ino();
  auto made = a->run(a->create(kRoot, root, "locked", 0644, O_RDWR | O_CREAT));
  DFS_REQUIRE_OK(made);
  auto on_b = b->run(b->lookup(kRoot, root, "locked"));
  DFS_REQUIRE_OK(on_b);
  auto b_file = b->run(b->open(kRoot, on_b->ino(), O_RDWR));
  DFS_REQUIRE_OK(b_file);

  auto record_lock = [](uint64_t ino, uint64_t owner, uint32_t type) {
    proto::FileLock lock;
    lock.set_ino(ino);
    lock.set_kind(0);  // fcntl
    lock.set_owner(owner);
    lock.set_type(type);  // 0 read, 1 write, 2 unlock
    lock.set_start(0);
    lock.set_end(UINT64_MAX);
    lock.set_pid(100 + owner);
    return lock;
  };
  const uint64_t ino = made->inode.ino();
  auto taken = a->run(a->lock(kRoot, made->fh, record_lock(ino, 1, 1), 1, 0));
  DFS_REQUIRE_OK(taken);
  CHECK(taken->outcome() == 0);

  auto tested = b->run(b->lock(kRoot, b_file->fh, record_lock(ino, 2, 1), 0, 0));
  DFS_REQUIRE_OK(tested);
  REQUIRE(tested->has_conflict());
  CHECK(tested->conflict().pid() == 101);
  auto refused = b->run(b->lock(kRoot, b_file->fh, record_lock(ino, 2, 1), 1, 0));
  DFS_REQUIRE_OK(refused);
  CHECK(refused->outcome() == 1);  // EAGAIN

  // A's close by the lock's owner frees it.
  a->run(a->release_record_locks(made->fh, 1));
  auto granted = b->run(b->lock(kRoot, b_file->fh, record_lock(ino, 2, 1), 1, 0));
  DFS_REQUIRE_OK(granted);
  CHECK(granted->outcome() == 0);
  tested = a->run(a->lock(kRoot, made->fh, record_lock(ino, 1, 0), 0, 0));
  DFS_REQUIRE_OK(tested);
  REQUIRE(tested->has_conflict());
  CHECK(tested->conflict().pid() == 102);

  DFS_CHECK_OK(b->run(b->release(b_file->fh)));
  DFS_CHECK_OK(a->run(a->release(made->fh)));
  close_client(b);
  close_client(a);
}

}  // namespace
}  // namespace dfs::test
