// FileClient: libdfs's file system API. Metadata operations go to the MDS (MdsSession);
// file data is striped over objects by the file's layout (ObjectClient), or, for a
// small file, kept inline in its inode. Open files have client-side state: buffered
// small inline writes and the not-yet-recorded end of file / mtime of object writes,
// pushed to the MDS on flush, fsync, release, setattr, sync_all() and every
// commit_interval. Everything runs on the ObjectClient's single I/O thread: call the
// awaitable API there (run() does that for blocking callers); it needs no locks.
//
// Its parts, each the one owner of its state: MdsSession (the session, its calls and
// the DeferredQueue of changes answered here and not yet applied), CacheRights (what the
// MDS granted, and giving it back), KnownInodes, DirCache and ListedData (what the mount
// knows of inodes, names and listed inline data), ObjectIo (files' bytes in their
// objects), WalkAhead (what a tree walk gets fetched ahead) and MountLocks (cluster-wide
// locks). The FileClient holds the open files and decides, per inode, which fast path
// a right allows (alone()), over the table of open files (OpenFiles).
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "client-fuse/libdfs/async_sync.h"
#include "client-fuse/libdfs/cache_rights.h"
#include "client-fuse/libdfs/creds.h"
#include "client-fuse/libdfs/deferred_errors.h"
#include "client-fuse/libdfs/delegated_inos.h"
#include "client-fuse/libdfs/dir_cache.h"
#include "client-fuse/libdfs/known_inodes.h"
#include "client-fuse/libdfs/listed_data.h"
#include "client-fuse/libdfs/recent_listings.h"
#include "client-fuse/libdfs/mds_session.h"
#include "client-fuse/libdfs/mount_locks.h"
#include "client-fuse/libdfs/object_client.h"
#include "client-fuse/libdfs/object_io.h"
#include "client-fuse/libdfs/open_files.h"
#include "client-fuse/libdfs/pending_touches.h"
#include "client-fuse/libdfs/striping.h"
#include "client-fuse/libdfs/walk_ahead.h"

namespace dfs::client {

struct FileClientOptions {
  ClientOptions objects;                // monitors, name, op_timeout (EIO after it), ...
  Duration commit_interval{1000};       // how long buffered writes may stay client-only
  uint64_t readahead_bytes = 8u << 20;  // sequential-read prefetch window (0: off)
  uint32_t max_parallel_objects = 16;   // object requests in flight per operation
  Duration linger{2000};  // a closed file's MDS open and cached state are kept this long
  // Ask the MDS for exclusive caching (docs/capabilities.md, "Exclusive caching"): while
  // this mount is the only one, it answers negative lookups in directories it created,
  // xattrs and held files' attributes from what it knows, defers changes, writes behind
  // and lets closed files linger ("exclusive mode" below). The MDS recalls the right
  // when another mount opens a session. Off: never ask (every question goes to the MDS).
  bool exclusive = true;
  // In exclusive mode, answer creates and renames whose outcome this client can compute
  // itself and send them later, in order, with the deferred attribute changes.
  bool defer_namespace = true;
  // In exclusive mode, directory listings (readdirplus) bring the data of inline files
  // up to this size, and a read-only open of such a file is answered from it without
  // asking the MDS (0: off). See file_open.cc, "Opens answered locally".
  uint32_t readdir_inline_max = 64u << 10;
  // In exclusive mode, once a directory is listed, the first batch of each of its
  // subdirectories is listed ahead of the kernel asking, this many at a time (0: off).
  uint32_t prefetch_listings = 16;
  // In exclusive mode, object writes from the kernel's page cache are acknowledged
  // once they are on their way to the OSDs, up to this many bytes in flight; fsync,
  // reads of the file and unmount wait for them (write_behind.cc). 0: every write
  // waits for its OSDs.
  uint64_t write_behind_bytes = 64u << 20;
  // In exclusive mode, listed object files' data fetched ahead of a walk that reads
  // them, up to this many bytes held (data_ahead.h; 0: off).
  uint64_t data_ahead_bytes = 32u << 20;
};

// Which SetAttr fields apply (mds.proto's SetAttrBit, FUSE's FUSE_SET_ATTR_* values).
enum SetAttrField : uint32_t {
  kSetMode = proto::SET_ATTR_MODE,
  kSetUid = proto::SET_ATTR_UID,
  kSetGid = proto::SET_ATTR_GID,
  kSetSize = proto::SET_ATTR_SIZE,
  kSetAtime = proto::SET_ATTR_ATIME,
  kSetMtime = proto::SET_ATTR_MTIME,
  kSetAtimeNow = proto::SET_ATTR_ATIME_NOW,
  kSetMtimeNow = proto::SET_ATTR_MTIME_NOW,
  kSetCtime = proto::SET_ATTR_CTIME,
};

// rename() flags (as renameat2).
inline constexpr uint32_t kRenameNoReplace = 1;
inline constexpr uint32_t kRenameExchange = 2;

struct SetAttrArgs {
  uint32_t valid = 0;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  proto::Timespec atime;
  proto::Timespec mtime;
  proto::Timespec ctime;
};

// The SetAttr request carrying `args` for inode `ino` (header left to the session).
proto::SetAttrRequest setattr_request(uint64_t ino, const SetAttrArgs& args);

struct OpenFile {
  Fh fh = 0;
  proto::Inode inode;
  bool created = false;  // create(): false when an existing file was opened
};

struct FsStat {
  uint64_t total_bytes = 0;  // usable capacity: raw OSD capacity / replicas
  uint64_t available_bytes = 0;
  uint64_t inodes = 0;
  uint64_t purge_backlog_bytes = 0;
};

class FileClient {
 public:
  // Connects to the monitors, waits for an MDS and opens the session, all within
  // objects.connect_timeout. Errors: kUnavailable (no monitor or no MDS answered),
  // kInvalidArgument.
  static Result<std::unique_ptr<FileClient>> connect(FileClientOptions options);
  // Stops the background flusher and the I/O thread. Call shutdown() first: anything
  // still buffered is lost otherwise.
  ~FileClient();

  asio::any_io_executor executor() { return objects_->executor(); }
  ObjectClient& objects() { return *objects_; }
  const FileClientOptions& options() const { return options_; }
  const proto::SessionReply& session() const { return mds_.session(); }
  // Whether this mount holds exclusive caching now (granted by the MDS; it changes when
  // the MDS recalls or grants it).
  bool exclusive() const { return rights_.exclusive(); }
  // Whether this mount may cache and defer for `ino` as if it were the only mount:
  // it holds exclusive caching, or `ino` is a directory it owns or a file it created in
  // one (CacheRights), and its lease holds. Every fast path asks this, on the I/O thread.
  // The lease is read from the clock here, not only when the lease watch lapses the
  // rights: after a pause the watch waits a moment for the renewal's answer before it
  // acts, and the fast paths must not answer meanwhile (the MDS may have evicted this
  // mount and let another change what it caches).
  bool alone(Ino ino) const {
    return rights_.alone(ino) && Clock::now() < mds_.lease_expires();
  }
  // alone() for the file of an open handle (false for an unknown handle).
  bool alone_handle(Fh fh) const;
  // This mount shares `ino` for reading (docs/capabilities.md, "Read shares") and the
  // lease holds: an open may keep the kernel's pages of it.
  bool read_shared(Ino ino) const {
    return rights_.read_shared(ino) && Clock::now() < mds_.lease_expires();
  }
  // The kernel may keep `ino`'s attributes (and a directory's names) with the long
  // timeouts: nobody changes it without recalling the right first.
  bool kernel_may_cache(Ino ino) const { return alone(ino) || read_shared(ino); }
  // Exclusive caching is held and the lease holds: what the fast paths that need the
  // whole file system (listings and data fetched ahead, local opens) ask.
  bool exclusive_now() const {
    return rights_.exclusive() && Clock::now() < mds_.lease_expires();
  }
  // What the kernel caches must be dropped when a right is recalled: the owner (the
  // FUSE layer) invalidates what the scope names, off the I/O thread, and the returned
  // task ends when the kernel has done so (its dirty pages written back through this
  // client).
  using KernelInvalidator = std::function<awaitable<void>(CacheRights::KernelScope)>;
  void set_kernel_invalidator(KernelInvalidator invalidate) {
    kernel_invalidator_ = std::move(invalidate);
  }
  // Has the kernel drop its pages of [offset, offset + length) of file `ino`, off the I/O
  // thread; the returned task ends when it has (FileClient::write, FileState::kernel_pages).
  using PageDropper = std::function<awaitable<void>(Ino ino, uint64_t offset, uint64_t length)>;
  void set_page_dropper(PageDropper drop) { page_dropper_ = std::move(drop); }
  // Called (on the I/O thread) just before exclusive caching is taken up after a shared
  // period: the owner makes the kernel drop what it may hold stale from that period.
  void set_on_exclusive(std::function<void()> hook) { on_exclusive_ = std::move(hook); }
  Ino root_ino() const { return mds_.session().root().ino(); }
  // The changes this mount answered itself and queued for the MDS (docs/architecture.md,
  // "Deferred changes"): those waiting to be sent, and of those sent so far how many the
  // MDS applied and refused (sent - settled - failed are in flight). I/O thread only.
  struct DeferredCounts {
    uint64_t predicted = 0;
    uint64_t sent = 0;
    uint64_t settled = 0;
    uint64_t failed = 0;
  };
  DeferredCounts deferred_counts() const {
    const DeferredQueue& q = mds_.deferred_queue();
    return {q.predicted(), mds_.deferred_sent(), q.settled(), q.failed()};
  }
  // Listings, lookups and getattrs that went to the MDS alone, ahead of deferred changes
  // that could not change their answers. I/O thread only.
  uint64_t reads_ahead_of_deferred() const { return reads_ahead_of_deferred_; }
  // The calls of MDS method `method` (common/rpc/methods.h) made so far. I/O thread only.
  uint64_t mds_calls(uint32_t method) const {
    auto it = mds_.stats().find(method);
    return it == mds_.stats().end() ? 0 : it->second.calls;
  }

  // Runs `task` on the I/O thread and waits for it (not from the I/O thread).
  template <class T>
  T run(awaitable<T> task) {
    return objects_->run(std::move(task));
  }
  bool on_io_thread() { return objects_->on_io_thread(); }

  // --- metadata (errors: the MDS's, see mds.proto; kTimeout/kUnavailable = EIO) ---
  awaitable<Result<proto::Inode>> lookup(Creds creds, Ino parent, std::string name);
  awaitable<Result<proto::Inode>> getattr(Creds creds, Ino ino);
  // A size change truncates or extends the file (the MDS removes objects past the new
  // end before it records the size). Buffered writes are pushed first. In exclusive mode
  // an extension that moves no data, and root's chmod, chown and utimes, are answered
  // here and sent later (deferred_attrs.cc); their failures reach the next fsync.
  awaitable<Result<proto::Inode>> setattr(Creds creds, Ino ino, SetAttrArgs args);
  // Any node type; `mode` carries the type and the final permission bits.
  awaitable<Result<proto::Inode>> mknod(Creds creds, Ino parent, std::string name, uint32_t mode,
                                        uint64_t rdev);
  awaitable<Result<proto::Inode>> symlink(Creds creds, Ino parent, std::string name,
                                          std::string target);
  awaitable<Result<std::string>> readlink(Creds creds, Ino ino);
  awaitable<Result<proto::Inode>> link(Creds creds, Ino ino, Ino new_parent, std::string new_name);
  // Returns the inode after the unlink (nlink may be 0).
  awaitable<Result<proto::Inode>> unlink(Creds creds, Ino parent, std::string name, bool directory);
  awaitable<Result<proto::RenameReply>> rename(Creds creds, Ino parent, std::string name,
                                               Ino new_parent, std::string new_name,
                                               uint32_t flags);
  awaitable<Result<proto::ReaddirReply>> readdir(Creds creds, Ino ino, uint64_t cookie,
                                                 uint32_t max_entries, bool plus);
  awaitable<Result<std::string>> getxattr(Creds creds, Ino ino, std::string name);
  awaitable<Status> setxattr(Creds creds, Ino ino, std::string name, std::string value,
                             uint32_t flags);
  awaitable<Result<std::vector<std::string>>> listxattr(Creds creds, Ino ino);
  awaitable<Status> removexattr(Creds creds, Ino ino, std::string name);
  awaitable<Result<FsStat>> statfs(Creds creds);
  // Resolves a path ("/a/b", relative to the root) without following symlinks.
  // Errors: kNotFound, kNotDirectory.
  awaitable<Result<proto::Inode>> resolve(Creds creds, std::string path);

  // The kernel no longer holds `ino`: forget what we cached about it.
  void forget(Ino ino);

  // --- file data ---
  // Opens a regular file (O_TRUNC is the caller's business: setattr size 0).
  awaitable<Result<OpenFile>> open(Creds creds, Ino ino, int flags);
  // The whole data of a file that open() answered from data this client held already
  // (file_open.cc, "Opens answered locally"), for the FUSE layer to place in the
  // kernel's page cache before it answers the open. Given once per handle, and only
  // while that handle is the file's only one and nothing written is pending: no other
  // handle means no dirty page in the kernel for this data to overwrite. The view is
  // valid until the I/O thread runs anything else; nullopt otherwise.
  std::optional<std::string_view> data_for_page_cache(Fh fh);
  // Creates (or with !O_EXCL opens an existing) regular file and opens it.
  awaitable<Result<OpenFile>> create(Creds creds, Ino parent, std::string name, uint32_t mode,
                                     int flags);
  // Reads up to `length` bytes; short only at the end of file. Holes read as zeros.
  awaitable<Result<std::string>> read(Fh fh, uint64_t offset, uint64_t length);
  // Writes all of `data` at `offset` (at the end of file when `append`). Small writes
  // to an inline file are buffered; object writes are on the OSDs when this returns,
  // unless `from_page_cache` allows write-behind (FileClientOptions::write_behind_bytes),
  // and the new size and mtime reach the MDS only with the next flush.
  // Errors: kNoSpace, kFileTooBig, kTimeout/kUnavailable.
  awaitable<Result<uint64_t>> write(Fh fh, uint64_t offset, std::string data, bool append,
                                    bool from_page_cache = false);
  // Pushes the file's buffered writes and size to the MDS; reports (once) an earlier
  // failed background write. When it returns, the data is durable on the OSDs and the
  // MDS has applied the size (durable once the MDS's log is: see sync_metadata()), or,
  // in exclusive mode, an inline file's bytes are queued for the MDS in order with the
  // other deferred changes (deferred_push.cc); either way every later MDS call sees them.
  awaitable<Status> flush(Fh fh);
  // flush(), then sync_metadata(): everything written through `fh` is durable. Also
  // reports (once) a failed deferred change of the file (DeferredErrors).
  awaitable<Status> fsync(Fh fh);
  // Waits until every metadata change the MDS has acknowledged is durable: the MDS
  // replies to mutations once applied and logged, before the disk has them.
  awaitable<Status> sync_metadata();
  // fsyncdir: sync_metadata(), and a failed deferred change of entries of `dir`, once.
  awaitable<Status> fsync_dir(Ino dir);
  // Flushes (when the last handle of the file goes) and tells the MDS the file is closed.
  // The record locks taken through `fh` go with it, and its flock lock when
  // `flock_release` (the kernel says it took one; `lock_owner` names it).
  awaitable<Status> release(Fh fh, bool flock_release = false, uint64_t lock_owner = 0);

  // --- cluster-wide locks (file_locks.cc): held by the MDS for every client ---
  // kMdsLock for `lock` (its ino is the file's) taken through `fh`: op 0 tests
  // (F_GETLK), 1 sets, 2 sets and waits until granted or cancel_lock(wait_id). Before an
  // unlock the file's buffered writes are pushed, so the next holder finds them; after a
  // grant what this client cached of the file is dropped. Errors: the MDS's; kFenced.
  awaitable<Result<proto::LockReply>> lock(Creds creds, Fh fh, proto::FileLock lock, uint32_t op,
                                           uint64_t wait_id);
  // Ends a wait of lock() (the waiting process got a signal): it answers "cancelled".
  awaitable<void> cancel_lock(uint64_t wait_id);
  // A close by lock owner `owner` (FUSE flush): its record locks on the file of `fh` go.
  awaitable<void> release_record_locks(Fh fh, uint64_t owner);
  // Pushes every open file's buffered state, then sync_metadata(); reports the first
  // failure, a failed deferred change of any file included (umount).
  awaitable<Status> sync_all();
  // sync_all(), then stops the background flusher.
  awaitable<Status> shutdown();

 private:
  explicit FileClient(FileClientOptions options, std::unique_ptr<ObjectClient> objects);

  template <class Req>
  awaitable<Result<proto::Inode>> mds_inode(uint32_t method, Req request, const Creds& creds,
                                            bool mutating);
  // What an inode-returning reply says (learned, with this mount's newer knowledge
  // applied); takes the inode out of `reply`.
  proto::Inode inode_answered(proto::InodeReply& reply) {
    learn_reply(reply);
    proto::Inode inode = std::move(*reply.mutable_inode());
    prefer_newer(inode);
    overlay(inode);
    return inode;
  }
  // A lookup or getattr sent to the MDS, asking to share what it answers (asks_to_share).
  template <class Req>
  awaitable<Result<proto::Inode>> mds_inode_shared(uint32_t method, Req request,
                                                   const Creds& creds);
  // Applies this client's newer knowledge of an open file (size, mtime) to `inode`:
  // while alone on it, or while writes of this mount's own are on their way.
  void overlay(proto::Inode& inode) const;
  // Keeps the directory name cache in step with a namespace operation's outcome.
  template <class T>
  void after_add(Ino parent, const std::string& name, const Result<T>& result);
  // Records an inode the MDS returned (newest version wins).
  void learn(const proto::Inode& inode);
  // Records a reply's inode and the other inodes it says the mutation changed.
  template <class Reply>
  void learn_reply(const Reply& reply) {
    learn(reply.inode());
    for (const auto& other : reply.changed()) learn(other);
  }
  using Known = KnownInodes::Known;
  // What is known of `ino`, when this mount may answer from it (alone on it).
  const Known* known(Ino ino) const;
  // A reply that raced with a newer change of ours (a deferred one, or one whose reply
  // came first) carries older attributes: replace them with what we know.
  void prefer_newer(proto::Inode& inode) const;
  // Alone on an inode, every change of it passes through this client and comes back in
  // a reply, also the side effects (a parent's mtime and nlink, a renamed inode's
  // ctime: `changed` in the replies), so what it learned stays exact.
  bool attrs_fresh(const Known& k) const { return alone(k.inode.ino()) && k.exact; }
  // The inode as the MDS has it plus what we buffer, when we know it exactly and hold
  // no unpushed writes of it; nullopt: ask the MDS.
  std::optional<proto::Inode> known_exactly(Ino ino) const;
  // The held state of a regular file, if any.
  std::shared_ptr<FileState> held(Ino ino) const { return files_.held(ino); }
  std::shared_ptr<FileState> state_for(const proto::Inode& inode);
  Result<std::shared_ptr<Handle>> handle(Fh fh) { return files_.handle(fh); }
  // A handle on `inode`; `counted`: an MDS open was just made for it.
  OpenFile open_handle(const Creds& creds, proto::Inode inode, int flags, bool counted);
  // Tells the MDS a held file is closed (after the linger, or at once when its last
  // name went) and forgets its state, if nothing is open or buffered.
  awaitable<void> drop_state(std::shared_ptr<FileState> st);
  void drop_soon(const std::shared_ptr<FileState>& st);
  awaitable<void> send_release(Ino ino, Creds creds);
  StripeLayout layout_of(const proto::Inode& inode) const;
  uint64_t inline_threshold() const { return mds_.session().inline_threshold(); }

  // Data paths (file_io.cc; the objects' side is ObjectIo). Write-behind
  // (write_behind.cc): whether a write may be acknowledged before its OSDs answer, and
  // the task that runs it; `guard` is the file's shared io lock, held until it ends.
  awaitable<void> drain_all_object_writes();
  bool may_write_behind(const FileState& st, uint64_t length) const;
  awaitable<void> write_behind(std::shared_ptr<FileState> st, ReadGuard guard, uint64_t offset,
                               std::string data);
  // A closed file whose last write-behind ended: its size goes to the MDS, and the state
  // goes if nothing keeps it.
  awaitable<void> settle_closed(std::shared_ptr<FileState> st);
  // Both require st->flush_mu held. With `made_durable`, the last push asks for a
  // durable reply, and *made_durable says whether one was sent and succeeded.
  awaitable<Status> flush_locked(std::shared_ptr<FileState> st, bool* made_durable = nullptr);
  // The size commit of flush_locked alone: records at the MDS how far finished object
  // writes reach (deferred to ride ahead of the next MDS call where allowed). Requires:
  // flush_mu held; never takes the io lock, so the caller may hold it.
  awaitable<Status> commit_size_locked(std::shared_ptr<FileState> st,
                                       bool* made_durable = nullptr);
  awaitable<Status> uninline_locked(std::shared_ptr<FileState> st);
  // Shared, an O_APPEND write of `length` bytes: the MDS grows the file by them at its end
  // (other mounts may append at once) and the result is where they go. The file moves to
  // objects first. A crash between this and the write leaves zeros there.
  awaitable<Result<uint64_t>> reserve_append(std::shared_ptr<FileState> st, const Creds& creds,
                                             uint64_t length);
  awaitable<Status> flush_state(std::shared_ptr<FileState> st);
  awaitable<Result<proto::Inode>> truncate(Creds creds, Ino ino, SetAttrArgs args);
  awaitable<void> flusher_loop();
  // The locks taken through a handle that is being released (file_locks.cc).
  awaitable<void> release_locks_of(const Handle& h, bool flock_release, uint64_t lock_owner);
  // Re-sends kMdsOpen for every open handle (the MDS restarted, or a new session).
  awaitable<void> reopen_all(std::string why);
  // Eviction (eviction.cc): the MDS fenced this mount's session (it did not renew in
  // time, or an operator evicted it). Files with writes not yet on the OSDs or the MDS,
  // and the deferred changes, are lost: they fail with EIO (kFenced) and are never sent
  // under the next session. Everything known exactly is forgotten (others changed
  // things meanwhile), and the mount continues under a new entity and session.
  void on_evicted(const Error& why);
  void on_evicted_notice(const rpc::Frame& frame);
  // Exclusive caching (exclusive_cache.cc). A grant or recall from the MDS, pushed or in
  // a session reply; notices older than the last applied are ignored.
  void on_mds_push(const rpc::Frame& frame);
  void on_cache_rights(bool exclusive, uint64_t seq, const std::string& reason,
                       bool from_session_reply);
  // A recall of owned directories (docs/capabilities.md, "Directory rights"): they and
  // the files created in them stop being covered at once, then give_up_rights runs.
  void on_dirs_recalled(const std::vector<Ino>& dirs, uint64_t seq, const std::string& reason);
  // Runs the give-up rights_ just started: round by round, pushes what was deferred and
  // buffered, has the kernel drop what it cached when a right actually went, forgets
  // what is no longer covered, and acknowledges the round's recalls. A round while
  // exclusive caching is still held (directories recalled for the MDS's bound) only
  // acknowledges: everything stays covered.
  awaitable<void> give_up_rights(CacheRights::GiveUp give_up, std::string reason);
  // kMdsCacheAck for the recalls `seqs` (a failure is logged: the MDS resends);
  // `behind_changes`: after this mount's deferred changes in flight, carrying those
  // queued (a round that pushed), else alone.
  awaitable<void> acknowledge(const std::vector<uint64_t>& seqs, bool behind_changes);
  // Whether a create in `parent` asks the MDS to own it (MknodRequest.own_parent): an
  // existing directory nobody owns becomes this mount's, as if it had created it.
  bool asks_to_own(Ino parent) const;
  // What an answer of the MDS gave this mount: the parent directory of a create
  // (MknodReply.parent_owned) or a file (InodeReply.owned, MknodReply.owned).
  enum class Granted { kDirectory, kFile };
  // The MDS gave `ino` to a request asked for at ownership epoch `epoch`. It is owned
  // here once the answers to calls started before this reply are in (they may predate
  // the grant), at once when no other call is running (an open's handle then uses the
  // page cache), and only if no recall came meanwhile.
  void owned_granted(Ino ino, Granted what, uint64_t epoch);
  awaitable<void> settle_owned(Ino ino, Granted what, uint64_t epoch, uint64_t mark);
  // Takes up the grant (CacheRights::own_claimed or own_file_claimed), unless a recall
  // or an eviction came since `epoch`.
  void take_owned(Ino ino, Granted what, uint64_t epoch);
  // Whether an open of `ino` with `flags` asks the MDS to own the file
  // (OpenRequest.own): a file nobody else has open becomes this mount's
  // (docs/capabilities.md, "File rights").
  bool asks_to_own_file(Ino ino, int flags) const;
  // Whether an open of `ino` with `flags` asks to share the file for reading
  // (OpenRequest.read_share): a read-only first open here of a file it is not alone on.
  bool asks_to_share_file(Ino ino, int flags) const;
  // The MDS answered a create that opened `ino`, an existing file, which ended this
  // mount's read share of it there: the share ends here too, and the file's state `st`
  // learns that the kernel may hold pages of it (FileState::kernel_pages); the answer
  // gives the kernel the file's attributes without a timeout. (An open of a known file
  // ends the share before it is sent: give_up_share_to_write.)
  void share_ended_by_write(Ino ino, FileState& st);
  // Has the kernel drop what a recall of shares alone took (no dirty pages: nothing is
  // buffered under a share). Waits at most kSharedInvalidationPatience: dropping a
  // directory's names needs the directory's lock, which the kernel holds while a request
  // of this mount in that directory waits for the MDS, and that request may wait for
  // another mount's recall, whose mount may wait the same way for this one's
  // acknowledgement. Past it the acknowledgement goes first; the kernel drops the rest
  // once the request is answered.
  awaitable<void> invalidate_shared(CacheRights::KernelScope scope);
  static constexpr Duration kSharedInvalidationPatience{200};
  // This mount ends its share of `ino` itself before a writing open: nobody recalls it
  // from here on, so the kernel drops what it keeps under it first (attributes, pages,
  // the names of the file in directories whose names it keeps).
  awaitable<void> give_up_share_to_write(Ino ino);
  // What this mount had done when it sent a request asking to share an inode: the
  // answer's share is taken up only if nothing since could have ended it (take_share):
  // a recall or an eviction (the epoch), or a writing open of this mount's, which the
  // MDS may have served after the grant and ended the share at.
  struct ShareAsked {
    uint64_t epoch = 0;  // CacheRights::ownership_epoch()
    OpenFiles::WriteOpenMark write_opens;
  };
  ShareAsked share_asked() const {
    return {rights_.ownership_epoch(), files_.write_open_mark()};
  }
  // Whether a lookup or a getattr asks to share the inode it answers (LookupRequest.share,
  // GetAttrRequest.share; docs/capabilities.md, "Read shares"). Not while the mount
  // holds exclusive caching (alone everywhere), nor with `cache=shared`.
  bool asks_to_share() const {
    return options_.exclusive && !stopping_ && !rights_.lease_lapsed() && !exclusive_now();
  }
  // Takes up the share of `inode` an answer to a request sent at `asked` gave
  // (InodeReply.read_shared). Not for a file with writes of this mount not yet
  // recorded by the MDS: their record would change it under the share.
  void take_share(const proto::Inode& inode, const ShareAsked& asked);
  // The write of `data` itself (write() adds the kernel's dropping of pages).
  awaitable<Result<uint64_t>> write_data(std::shared_ptr<Handle> h, uint64_t offset,
                                         std::string data, bool append, bool from_page_cache);
  // Takes up a granted right once no file is open here: an open file's state was last
  // refreshed at its open, and another mount may have changed the file since.
  void take_grant_when_quiet();
  // Others may have changed things since (a recall, a grant after a shared period, an
  // eviction): what was known exactly, the names of directories it created, and the
  // listings fetched ahead are no longer trusted, except for what owned directories
  // still cover.
  void forget_exact_knowledge();
  // The lease (MdsSession::lease_expires): a mount that has not heard from the MDS for
  // most of the session timeout (cut off, or the MDS away) stops every fast path and
  // drops what its kernel caches, before the MDS could evict it and let another mount
  // change what it caches. What it deferred stays queued. An answered renewal that says
  // nothing happened to the right since (no recall, no newer grant) takes it up again.
  awaitable<void> lease_watch_loop();
  void on_renewed(const proto::RenewReply& reply);
  std::shared_ptr<asio::steady_timer> lease_timer_;
  std::function<void()> on_exclusive_;
  KernelInvalidator kernel_invalidator_;
  PageDropper page_dropper_;
  // Deferred attribute changes (deferred_attrs.cc). In exclusive mode a chmod, chown or
  // utimes by root on an inode known exactly is answered at once with the MDS's own
  // op's outcome (attr_predict.h) and sent later, merged with the inode's other
  // pending changes into one SetAttr, ahead of the next MDS call (MdsSession batches)
  // or after a short delay. Errors reach the next fsync / sync, like writeback errors.
  std::optional<proto::Inode> defer_setattr(const Creds& creds, Ino ino, const SetAttrArgs& args);
  // A truncate that moves no data (the file grows, an inline one within the threshold or
  // from empty), in exclusive mode on an inode known exactly, with nothing of `st` (the
  // held state, if any: flushed, under its locks) unrecorded: answered with the MDS's
  // op's outcome and sent later as a grow_only SetAttr, in order with the other deferred
  // changes. rsync -S ends every file with a trailing hole so (lxc-create: 4,000 files).
  // The inode has its inline data, if any, from `st`. Nullopt: the synchronous path.
  // A refusal (an MDS with another inline threshold) marks the growth dirty in `st`, so
  // that its next push makes it; without a held state it is reported by the next fsync.
  std::optional<proto::Inode> defer_growth(const Creds& creds, Ino ino, const SetAttrArgs& args,
                                           const std::shared_ptr<FileState>& st);
  // What a truncate to `size` leaves of the held state; `inode`: the file after it, with
  // an inline file's data (any bytes past `size` dropped, missing ones zero).
  void resized(FileState& st, uint64_t size, const proto::Inode& inode);
  // The queued attribute changes as requests, each inode's merged into one: the late
  // source of the MDS session's DeferredQueue.
  std::vector<DeferredOp> take_attr_changes();
  void schedule_deferred_flush();
  void on_deferred_reply(Ino ino, Result<rpc::Frame> reply);
  awaitable<void> flush_deferred_soon();
  // sync_all() without reporting failed deferred changes: they stay for the fsync of
  // the files they concern (a recall pushes everything, and nobody asked for errors).
  awaitable<Status> push_all();
  // Deferred namespace changes (deferred_namespace.cc). In exclusive mode a create or a
  // rename (not of a directory, not replacing anything) in directories this client
  // created, so that it knows every name in them, on inodes it knows exactly, is
  // answered with the MDS's own op's outcome (predict_entry) and sent later, in order
  // with the attribute changes; a create takes its inode number from a range the MDS
  // delegated. nullopt: not deferrable, do it synchronously.
  //
  // A create, mknod or symlink: `request` (MknodRequest or SymlinkRequest, sent as
  // `method`) gets a delegated inode number and the time, its outcome is predicted and
  // adopted, and it is queued. Returns the predicted reply (MknodReply's fields).
  template <class Req>
  awaitable<std::optional<proto::MknodReply>> defer_new_inode(const Creds& creds, uint32_t method,
                                                              Req request);
  std::optional<proto::RenameReply> defer_rename(const Creds& creds, Ino parent,
                                                 const std::string& name, Ino new_parent,
                                                 const std::string& new_name, uint32_t flags);
  // An unlink of a name, or rmdir of an empty directory, this client knows (in a
  // directory it created, the inode known exactly): predicted and queued. Returns the
  // inode after the unlink.
  std::optional<proto::Inode> defer_unlink(const Creds& creds, Ino parent,
                                           const std::string& name, bool directory);
  // A setxattr by root of a user., trusted. or ACL attribute (tar -x sets an ACL on
  // every file) on an inode known exactly, with nothing buffered for it: predicted and
  // queued like the rest; an access ACL that only touches the ctime (tar's, equal to the
  // mode) joins the inode's deferred attribute change instead. security.* goes to the
  // MDS (a later data push clears security.capability). Returns false when it went
  // nowhere.
  bool defer_setxattr(const Creds& creds, const proto::SetXattrRequest& request);
  // Moves the queued attribute changes into the ordered queue, so that a change made
  // after the op deferred next is not merged into a request that goes ahead of it.
  void seal_attr_changes();
  // Whether changes of `ino` (an inode, or a directory for the names in it) may be
  // answered now and queued for the MDS: alone on it with deferral on, and not
  // unmounting (unmount sends what it does itself).
  bool defers_in(Ino ino) const { return alone(ino) && options_.defer_namespace && !stopping_; }
  // A directory whose inode we know exactly.
  bool known_dir(Ino ino) const;
  // Makes a predicted inode what we know, also over a pending change's coming reply.
  void adopt_prediction(const proto::Inode& inode);
  // A deferred namespace change failed at the MDS: what we predicted about `dirs` and
  // `inodes` is no longer trusted, and the next sync reports the error.
  void deferred_op_failed(const Error& error, const std::vector<Ino>& dirs,
                          const std::vector<Ino>& inodes);
  // Seals the attribute changes, queues `request` and schedules the flush. Its reply
  // goes to `on_reply`; a failure to `on_failure` if given, else to deferred_op_failed
  // with `dirs` and `inodes`.
  template <class Reply, class Req>
  void queue_deferred(uint32_t method, Req request, const Creds& creds, std::vector<Ino> dirs,
                      std::vector<Ino> inodes, std::function<void(const Reply&)> on_reply,
                      std::function<void(const Error&)> on_failure = nullptr);
  // Deferred data pushes (deferred_push.cc). In exclusive mode a flush that is not an
  // fsync queues an inline file's buffered bytes (kMdsWriteInline), or the commit of
  // object writes (kMdsCommitWrite), like the changes above instead of waiting for the
  // MDS, with the inode the op will make adopted. Require st->flush_mu held. Return
  // false when the push must go synchronously.
  bool defer_inline_push(const std::shared_ptr<FileState>& st);
  bool defer_commit(const std::shared_ptr<FileState>& st);
  // What we know of the file when a push of it may be deferred at all.
  const Known* push_deferrable(const FileState& st) const;
  void push_settled(FileState& st, uint64_t bytes);

  // Listings (readdir_ahead.cc).
  // What could change a directory's names without this mount learning the effect: its
  // own changes of names sent as calls (whose replies may pass a listing's), and its
  // rights (CacheRights::generation: a recall lets others change it).
  DirCache::ListingStamp listing_stamp() const;
  // A batch of `dir`'s listing asked for at `cookie` when the stamp was `stamp`, alone
  // on the directory then (`alone_at_ask`) and now with nothing changed in between: its
  // names go to the DirCache, which knows them all once a listing from the start
  // reaches the end (DirCache::listed).
  void learn_names(Ino dir, uint64_t cookie, bool alone_at_ask,
                   const DirCache::ListingStamp& stamp, const proto::ReaddirReply& reply);
  proto::ReaddirRequest readdir_request(Ino ino, uint64_t cookie, uint32_t max_entries,
                                        bool plus) const;
  // Whether no deferred change of this mount awaiting the MDS names `ino` (PendingTouches,
  // and attribute changes answered here): a read of it may go ahead of them.
  bool untouched(Ino ino) const { return !touched_.touched(ino) && !known_.attrs_pending(ino); }
  // A listing of `dir` asked for alone, ahead of the deferred changes awaiting the MDS,
  // when none of them changes its names or creates or removes it (an error is the
  // answer too); nullopt when it may not go alone, or when a change names one of the
  // entries it shows (their attributes there may be older than this mount's): the
  // caller asks with the changes.
  awaitable<std::optional<Result<proto::ReaddirReply>>> readdir_ahead_of_deferred(
      const Creds& creds, Ino dir, uint64_t cookie, uint32_t max_entries, bool plus);
  // Moves whenever something may have changed through this client whose reach WalkAhead
  // is not told (a call of its own): a listing fetched ahead is used only if it has not
  // moved since the listing was asked for. Deferred changes and attribute changes tell
  // WalkAhead what they touch instead.
  uint64_t changes() const { return mds_.direct_visible_changes(); }
  // A listing fetched ahead for a walk: alone if no deferred change touches it
  // (readdir_ahead_of_deferred), else with them.
  awaitable<Result<proto::ReaddirReply>> list_ahead(Creds creds, Ino dir, uint32_t max_entries);
  // RecentListings' counter: moves when a change a listing could show starts here (not
  // when one is answered) and when this mount's rights move.
  uint64_t started_changes() const {
    return mds_.changes_started() + setattr_calls_ + rights_.generation();
  }
  // Whether RecentListings may keep or hand out listings now: in exclusive mode, and
  // never after a change whose outcome is unknown (the MDS may apply it at any moment).
  bool listings_reusable() const { return exclusive_now() && mds_.uncertain_changes() == 0; }
  // A read from the start of a file that has no pieces yet: its data fetched ahead.
  void take_data_ahead(FileState& st);

  FileClientOptions options_;
  std::unique_ptr<ObjectClient> objects_;
  ObjectIo io_;  // files' bytes in their objects: reads, readahead, writes, write-behind
  MdsSession mds_;
  // The rights the MDS granted this mount and the state of giving them back.
  CacheRights rights_;
  MountLocks locks_;  // the cluster-wide locks this mount takes and holds
  OpenFiles files_;  // held files' states, open handles, writing opens sent
  // What the MDS last told us about each inode the kernel holds, and the attribute
  // changes answered here and not yet applied (queued ones follow the changes already in
  // mds_.deferred_queue()). Xattrs are answered from it (all xattr changes pass through
  // this client or come back in a reply).
  KnownInodes known_;
  uint64_t deferred_push_bytes_ = 0;  // data in queued or unanswered deferred pushes
  DeferredErrors deferred_errors_;  // failed deferred changes, until an fsync asks
  PendingTouches touched_;  // what the queued and unanswered deferred changes name
  // Listings, lookups and getattrs asked for alone, ahead of deferred changes that could
  // not change their answers (readdir_ahead_of_deferred, mds_inode_shared): for the log.
  uint64_t reads_ahead_of_deferred_ = 0;
  bool deferred_flush_scheduled_ = false;
  std::shared_ptr<asio::steady_timer> deferred_timer_;
  DirCache dirs_;  // names of directories we created: negative lookups answered here
  WalkAhead walk_;  // listings and data fetched ahead of a tree walk
  DelegatedInos delegated_;  // inode numbers for the creates this mount answers itself
  uint64_t setattr_calls_ = 0;
  ListedData listed_;  // inline files' data from listings, for their first open
  RecentListings recent_;  // first batches of listings from the start, to be listed again
  // A read-only open in exclusive mode of an inline file whose data we hold (a held
  // state, or a listing's): answered here, nothing for the MDS to count.
  std::optional<OpenFile> open_locally(const Creds& creds, Ino ino, int flags);
  // The same for an object file whose whole data was fetched ahead (data_ahead.h).
  awaitable<std::optional<OpenFile>> open_from_data_ahead(const Creds& creds, Ino ino, int flags);
  // A state opened from data fetched ahead is about to lose that data (a truncate):
  // the MDS counts its open from now on, as if it had been opened there.
  awaitable<Status> unpin_data(const std::shared_ptr<FileState>& st, const Creds& creds);
  bool stopping_ = false;
  bool releases_unreachable_ = false;  // shutdown: a release found the MDS gone
  std::shared_ptr<asio::steady_timer> flusher_timer_;
};

template <class T>
void FileClient::after_add(Ino parent, const std::string& name, const Result<T>& result) {
  if (!result) {
    dirs_.forget(parent);  // whatever happened there, we no longer know
    return;
  }
  if constexpr (std::is_same_v<T, proto::Inode>) {
    dirs_.added(parent, name, result->ino());
  } else {
    dirs_.added(parent, name, result->inode().ino());
  }
}

template <class Req>
awaitable<Result<proto::Inode>> FileClient::mds_inode(uint32_t method, Req request,
                                                      const Creds& creds, bool mutating) {
  // Every inode-returning reply (InodeReply, MknodReply, UnlinkReply) has the inode as
  // field 1 and the other changed inodes as field 15, so one parser serves them all.
  DFS_CO_AWAIT_TRY(auto reply,
                   mds_.call<proto::InodeReply>(method, std::move(request), creds, mutating));
  co_return inode_answered(reply);
}

template <class Req>
awaitable<Result<proto::Inode>> FileClient::mds_inode_shared(uint32_t method, Req request,
                                                             const Creds& creds) {
  request.set_share(asks_to_share());
  const ShareAsked asked = share_asked();
  std::optional<Result<proto::InodeReply>> answered;
  // Ahead of the deferred changes when none names the name looked up (or the inode asked
  // about) nor the inode answered, and none creates or removes the directory looked in:
  // they cannot change the answer. (Changes of the directory's other names or of its
  // attributes do not show in it; the MDS checks no permissions on a read.)
  const bool ahead = [this, &request] {
    if (!mds_.deferred_queue().pending()) return false;
    if constexpr (std::is_same_v<Req, proto::LookupRequest>) {
      return !touched_.changed(request.parent()) &&
             !touched_.named(request.parent(), request.name());
    } else {
      return untouched(request.ino());
    }
  }();
  if (ahead) {
    auto alone = co_await mds_.call_alone<proto::InodeReply>(method, request, creds, false);
    // An error is the answer too (a missing name stays missing whatever is pending).
    if (!alone || untouched(alone->inode().ino())) {
      answered = std::move(alone);
      ++reads_ahead_of_deferred_;
    }
  }
  if (!answered) {
    answered = co_await mds_.call<proto::InodeReply>(method, std::move(request), creds, false);
  }
  if (!*answered) co_return unexpected(std::move(*answered).error());
  proto::InodeReply& reply = **answered;
  proto::Inode inode = inode_answered(reply);
  if (reply.read_shared()) take_share(inode, asked);
  co_return inode;
}

}  // namespace dfs::client
