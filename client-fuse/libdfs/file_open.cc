// FileClient: the lifecycle of open files. A held file (FileState) carries one MDS
// open from its first handle until `linger` after its last close; its buffered writes
// are pushed on flush/fsync/release and by the background flusher.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/rpc/methods.h"

namespace dfs::client {

bool FileClient::alone_handle(Fh fh) const {
  auto h = files_.find(fh);
  return h && alone(h->ino);
}

void FileClient::learn(const proto::Inode& inode) {
  known_.learn(inode);
}

const FileClient::Known* FileClient::known(Ino ino) const {
  if (!alone(ino)) return nullptr;
  return known_.find(ino);
}

void FileClient::forget(Ino ino) {
  if (!held(ino) && !known_.attrs_pending(ino)) {
    known_.erase(ino);
    // The kernel knows it no more; a later lookup learns it from the MDS, without the
    // history that made it ours. Its pages went with it: a read share of it is of no
    // more use here (the next open asks again; the MDS's recall, if one comes, is
    // answered as for any file not held).
    rights_.owned().file_left(ino);
    rights_.share_given_up(ino);
  }
  dirs_.forget(ino);
  listed_.drop(ino);
  walk_.drop_data(ino);
}

std::shared_ptr<FileState> FileClient::state_for(const proto::Inode& inode) {
  auto slot = held(inode.ino());
  // Shared: another mount may have changed the file since this state was made. What
  // the MDS just answered is the truth, unless this mount has writes of its own pending.
  bool refresh = slot && !alone(inode.ino()) && !slot->has_unrecorded_writes() &&
                 slot->deferred_pushes == 0;
  if (!slot) slot = files_.hold(inode.ino());
  else if (!refresh) return slot;
  slot->forget_cached_data();
  // Alone, every later write passes here; otherwise another mount may write anywhere.
  slot->high_water = alone(inode.ino()) ? inode.size() : FileState::kUnknownHighWater;
  slot->layout = layout_of(inode);
  slot->is_inline = inode.inline_();
  slot->size = inode.size();
  slot->mtime = inode.mtime();
  if (slot->is_inline) {
    std::string data = inode.inline_data();
    slot->mds_inline_bytes = data.size();
    data.resize(inode.size(), '\0');
    slot->inline_data = InlineBuffer(std::move(data));
  } else {
    slot->mds_inline_bytes = 0;
    slot->inline_data.clear();
  }
  return slot;
}

OpenFile FileClient::open_handle(const Creds& creds, proto::Inode inode, int flags, bool counted) {
  auto h = std::make_shared<Handle>();
  h->ino = inode.ino();
  h->flags = flags;
  h->creds = creds;
  if (S_ISREG(inode.mode())) {
    h->state = state_for(inode);
    ++h->state->handles;
    if (counted && h->state->mds_open) {
      // Two opens raced to the MDS; the state needs only one.
      spawn_checked(executor(), send_release(inode.ino(), creds));
    } else if (counted) {
      h->state->mds_open = true;
      h->state->opener = creds;
      h->state->data_pinned = false;  // the MDS keeps the file now
    }
  } else {
    h->mds_open = counted;
  }
  Fh fh = files_.add(std::move(h));
  overlay(inode);
  return OpenFile{fh, std::move(inode), false};
}

// Opens answered locally: the MDS's open does two things, it reads the inode with its
// inline data, and it counts the open so that the file outlives an unlink while open.
// For a read-only open of an inline file in exclusive mode neither needs the MDS: we
// know the inode exactly, the data came with the directory listing (or is held), and
// what we read is in memory, so an unlink (which only this client can make) takes
// nothing from the reader. A cold rsync of a tree saved an MDS round trip per file.
// The same holds for an object file whose whole data was fetched ahead: the state
// keeps that data (data_pinned) until its last handle closes, and its reads are served
// from it. A truncate, which would drop the data, first has the MDS count the open
// (unpin_data); a write needs a writable handle, whose open the MDS counts anyway.
std::optional<OpenFile> FileClient::open_locally(const Creds& creds, Ino ino, int flags) {
  if (!exclusive_now() || options_.readdir_inline_max == 0) return std::nullopt;
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) return std::nullopt;
  const Known* k = known(ino);
  if (!k || !k->exact || !S_ISREG(k->inode.mode()) || !k->inode.inline_()) return std::nullopt;
  if (auto st = held(ino)) {
    if (!st->is_inline) return std::nullopt;
    return open_handle(creds, k->inode, flags, false);
  }
  auto data = listed_.take(ino, k->inode.version());
  if (!data) return std::nullopt;
  proto::Inode inode = k->inode;
  inode.set_inline_data(std::move(*data));
  OpenFile opened = open_handle(creds, std::move(inode), flags, false);
  opened.inode.clear_inline_data();
  files_.at(opened.fh).offer_to_page_cache = true;
  return opened;
}

awaitable<std::optional<OpenFile>> FileClient::open_from_data_ahead(const Creds& creds, Ino ino,
                                                                    int flags) {
  if (!exclusive_now() || !walk_.data_enabled() || held(ino)) co_return std::nullopt;
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) co_return std::nullopt;
  const Known* k = known(ino);
  if (!k || !k->exact || !S_ISREG(k->inode.mode()) || k->inode.inline_()) co_return std::nullopt;
  const uint64_t version = k->inode.version();
  auto piece = walk_.take_data(ino, version);
  if (!piece) co_return std::nullopt;
  co_await piece->done.wait();
  // Anything may have happened meanwhile: only the same file, still unopened, is opened
  // from this data; otherwise the MDS opens it (the data is dropped).
  k = known(ino);
  if (!piece->data || held(ino) || !k || k->inode.version() != version) co_return std::nullopt;
  OpenFile file = open_handle(creds, k->inode, flags, false);
  auto st = held(ino);
  st->readahead[0] = std::move(piece);
  st->data_pinned = true;
  files_.at(file.fh).offer_to_page_cache = true;
  co_return file;
}

std::optional<std::string_view> FileClient::data_for_page_cache(Fh fh) {
  auto handle = files_.find(fh);
  if (!handle || !handle->offer_to_page_cache) return std::nullopt;
  Handle& h = *handle;
  h.offer_to_page_cache = false;
  const FileState* st = h.state.get();
  if (!st || st->handles != 1 || st->has_unrecorded_writes() || st->size == 0) {
    return std::nullopt;
  }
  if (st->is_inline) {
    if (st->inline_data.size() != st->size) return std::nullopt;
    return std::string_view(st->inline_data.data());
  }
  auto piece = st->readahead.find(0);
  if (!st->data_pinned || piece == st->readahead.end() || !piece->second->data ||
      piece->second->data->size() != st->size) {
    return std::nullopt;
  }
  return std::string_view(*piece->second->data);
}

awaitable<Status> FileClient::unpin_data(const std::shared_ptr<FileState>& st,
                                         const Creds& creds) {
  if (!st->data_pinned) co_return ok_status();
  if (!st->mds_open && st->handles > 0) {
    proto::OpenRequest request;
    request.set_ino(st->ino);
    request.set_flags(O_RDONLY);
    auto opened = co_await mds_inode(rpc::kMdsOpen, std::move(request), creds, true);
    if (!opened) co_return unexpected(std::move(opened).error());
    st->mds_open = true;
    st->opener = creds;
  }
  st->data_pinned = false;
  co_return ok_status();
}

awaitable<Result<OpenFile>> FileClient::open(Creds creds, Ino ino, int flags) {
  if (auto local = open_locally(creds, ino, flags)) co_return std::move(*local);
  if (auto ahead = co_await open_from_data_ahead(creds, ino, flags)) co_return std::move(*ahead);
  if (auto st = held(ino); st && st->mds_open && alone(ino)) {
    // Open or lingering here already: the MDS counts it, the state knows it. (Shared,
    // the MDS's open brings what other mounts changed, inline data included.)
    const Known* k = known(ino);
    if (k && k->inode.ino() == ino) co_return open_handle(creds, k->inode, flags, false);
    DFS_CO_AWAIT_TRY(auto inode, getattr(creds, ino));
    co_return open_handle(creds, std::move(inode), flags, false);
  }
  proto::OpenRequest request;
  request.set_ino(ino);
  // O_TRUNC arrives as a separate setattr (no atomic_o_trunc), which pushes buffered
  // writes first; the MDS truncating on open would skip that.
  request.set_flags(static_cast<uint32_t>(flags & ~(O_TRUNC | O_CREAT | O_EXCL)));
  request.set_own(asks_to_own_file(ino, flags));
  request.set_read_share(asks_to_share_file(ino, flags));
  // A writer ends this mount's read share before it is sent: the MDS ends it when it
  // serves the open, and opens of this mount meanwhile must not keep pages.
  const bool writes = (flags & O_ACCMODE) != O_RDONLY;
  const bool had_share = writes && rights_.owned().shares(ino);
  if (had_share) co_await give_up_share_to_write(ino);
  std::optional<OpenFiles::WriteOpen> write_open;
  if (writes) write_open.emplace(files_);
  const uint64_t epoch = rights_.ownership_epoch();
  const ShareAsked asked = share_asked();
  DFS_CO_AWAIT_TRY(auto reply,
                   mds_.call<proto::InodeReply>(rpc::kMdsOpen, std::move(request), creds, true));
  write_open.reset();
  learn_reply(reply);
  proto::Inode inode = std::move(*reply.mutable_inode());
  if (inode.ino() == 0) {  // an MDS that answers Open without the inode
    DFS_CO_AWAIT_TRY(inode, getattr(creds, ino));
  }
  prefer_newer(inode);
  overlay(inode);
  // Owned before the state is made: the state then starts from this answer, which is
  // the truth (nobody else has the file open), and its handle may use the page cache.
  if (reply.owned()) owned_granted(ino, Granted::kFile, epoch);
  if (reply.read_shared()) take_share(inode, asked);
  OpenFile opened = open_handle(creds, std::move(inode), flags, true);
  if (had_share) files_.at(opened.fh).state->kernel_pages = true;
  co_return opened;
}

void FileClient::take_share(const proto::Inode& inode, const ShareAsked& asked) {
  const Ino ino = inode.ino();
  if (auto st = held(ino); st && st->has_unrecorded_writes()) return;
  if (files_.no_write_open_since(asked.write_opens) &&
      rights_.share_claimed(ino, asked.epoch, S_ISREG(inode.mode()))) {
    spdlog::debug("inode {:#x} is shared by this mount from now on", ino);
  }
}

awaitable<void> FileClient::give_up_share_to_write(Ino ino) {
  rights_.share_given_up(ino);
  // Its attributes and pages, and its names in directories the kernel keeps: the next
  // lookup brings what other mounts change from here on. (The kernel holds no
  // directory's lock while it waits for FUSE_OPEN; the wait is bounded all the same.)
  if (kernel_invalidator_ && !stopping_) {
    CacheRights::KernelScope scope;
    scope.inos.push_back(ino);
    co_await invalidate_shared(std::move(scope));
  }
}

void FileClient::share_ended_by_write(Ino ino, FileState& st) {
  if (!rights_.owned().shares(ino)) return;
  rights_.share_given_up(ino);
  st.kernel_pages = true;
}

bool FileClient::asks_to_own_file(Ino ino, int flags) const {
  // Only an open that may write: a file read on several mounts would otherwise pass
  // from one to the next, a recall each time (reads share it instead,
  // asks_to_share_file). Only with no state held here: a state
  // made while shared may be older than what the MDS answers this open, and an owned
  // file's state is not refreshed from answers.
  return (flags & O_ACCMODE) != O_RDONLY && options_.exclusive && !stopping_ &&
         !rights_.lease_lapsed() && !alone(ino) && !held(ino);
}

bool FileClient::asks_to_share_file(Ino ino, int flags) const {
  // Only at the first open here: a state held may have a handle open for writing, which
  // the MDS would not know from this open.
  return (flags & O_ACCMODE) == O_RDONLY && options_.exclusive && !stopping_ &&
         !rights_.lease_lapsed() && !alone(ino) && !held(ino);
}

awaitable<Result<OpenFile>> FileClient::create(Creds creds, Ino parent, std::string name,
                                               uint32_t mode, int flags) {
  DFS_CO_TRY_STATUS(check_name(name));
  proto::MknodRequest request;
  request.set_parent(parent);
  request.set_name(name);
  request.set_mode(S_IFREG | (mode & 07777));
  request.set_exclusive((flags & O_EXCL) != 0);
  request.set_open(true);  // counts our open too: one round trip for create + open
  if (auto made = co_await defer_new_inode(creds, rpc::kMdsMknod, request)) {
    OpenFile file = open_handle(creds, std::move(*made->mutable_inode()), flags, true);
    file.created = true;
    co_return file;
  }
  // In a directory this mount does not own, the new file is asked for too: the MDS
  // gives it when the directory is shared (another mount works there).
  request.set_own_parent(asks_to_own(parent));
  request.set_own(request.own_parent());
  const uint64_t epoch = rights_.ownership_epoch();
  std::optional<OpenFiles::WriteOpen> write_open;
  write_open.emplace(files_);  // may open an existing file
  auto result =
      co_await mds_.call<proto::MknodReply>(rpc::kMdsMknod, std::move(request), creds, true);
  write_open.reset();
  after_add(parent, name, result);
  if (!result) co_return unexpected(std::move(result).error());
  proto::MknodReply made = std::move(*result);
  if (made.parent_owned()) owned_granted(parent, Granted::kDirectory, epoch);
  if (made.owned() && S_ISREG(made.inode().mode())) {
    owned_granted(made.inode().ino(), Granted::kFile, epoch);
  }
  if (!S_ISREG(made.inode().mode())) {
    // O_CREAT without O_EXCL on a name that is not a regular file: the MDS counted an
    // open we cannot use.
    co_await send_release(made.inode().ino(), creds);
    co_return make_error(
        S_ISDIR(made.inode().mode()) ? ErrorCode::kIsDirectory : ErrorCode::kAlreadyExists,
        "create over an existing non-file");
  }
  learn_reply(made);
  if (made.created()) rights_.owned().file_created(made.inode().ino(), parent);
  // The kernel's dentry said the name was free; an existing file means it was stale.
  bool created = made.created() || (flags & O_EXCL);
  const Ino ino = made.inode().ino();
  OpenFile file = open_handle(creds, std::move(*made.mutable_inode()), flags, true);
  if (!made.created()) share_ended_by_write(ino, *files_.at(file.fh).state);
  file.created = created;
  if (!created && (flags & O_TRUNC)) {
    SetAttrArgs args;
    args.valid = kSetSize;
    auto truncated = co_await truncate(creds, file.inode.ino(), args);
    if (!truncated) {
      ignore_error(co_await release(file.fh), "already failing with the truncate's error");
      co_return unexpected(std::move(truncated).error());
    }
    file.inode = std::move(*truncated);
  }
  co_return file;
}

awaitable<void> FileClient::send_release(Ino ino, Creds creds) {
  // Unmounting with the MDS gone (a cluster stopped right after the unmount): every
  // release would wait op_timeout; the MDS forgets an expired session's opens anyway.
  if (stopping_ && releases_unreachable_) co_return;
  proto::ReleaseRequest request;
  request.set_ino(ino);
  if (defers_in(ino)) {
    // Nobody waits for a release (the kernel sends RELEASE without waiting) and the MDS
    // logs nothing for it, so it rides with the next batch of deferred changes instead
    // of a round trip of its own: under an rsync that was one MDS call per file. Later
    // calls go after it, so a reopen or an unlink still finds it applied. It names the
    // inode: the last release of an unlinked file ends it, and a read of it must not
    // pass that.
    queue_deferred<proto::Empty>(
        rpc::kMdsRelease, std::move(request), creds, {}, {ino}, [](const proto::Empty&) {},
        [ino](const Error& error) {
          if (!is_gone(error)) spdlog::warn("release of inode {:#x}: {}", ino, error.to_string());
        });
    co_return;
  }
  auto released =
      co_await mds_.call<proto::Empty>(rpc::kMdsRelease, std::move(request), creds, true);
  if (released) co_return;
  if (stopping_ && is_retryable(released.error().code())) {
    if (!releases_unreachable_) {
      spdlog::warn("unmounting: the MDS is unreachable ({}); the remaining held files are "
                   "not released (the MDS forgets them with the session)",
                   released.error().to_string());
    }
    releases_unreachable_ = true;
    co_return;
  }
  spdlog::warn("release of inode {:#x}: {}", ino, released.error().to_string());
}

awaitable<Status> FileClient::release(Fh fh, bool flock_release, uint64_t lock_owner) {
  auto h = files_.remove(fh);
  if (!h) co_return ok_status();
  co_await release_locks_of(*h, flock_release, lock_owner);
  if (!h->state) {
    if (h->mds_open) co_await send_release(h->ino, h->creds);
    co_return ok_status();
  }
  auto st = h->state;
  if (--st->handles > 0) co_return ok_status();
  Status flushed = co_await flush_state(st);
  st->linger_until = Clock::now() + options_.linger;
  // A file that lost its last name goes at once, so its space is freed now; so does
  // data held for handles opened from it (no MDS open to keep for a reopen).
  const Known* k = known(st->ino);
  bool unlinked = k && k->inode.nlink() == 0;
  if (options_.linger.count() == 0 || !alone(st->ino) || stopping_ || unlinked ||
      (st->data_pinned && !st->mds_open)) {
    co_await drop_state(st);
  }
  take_grant_when_quiet();
  co_return flushed;
}

awaitable<void> FileClient::drop_state(std::shared_ptr<FileState> st) {
  if (st->handles > 0 || st->has_unrecorded_writes() || st->deferred_pushes > 0 ||
      st->flush_mu.locked()) {
    co_return;
  }
  if (!files_.drop(st)) co_return;
  if (st->mds_open) {
    st->mds_open = false;
    co_await send_release(st->ino, st->opener);
  }
}

void FileClient::drop_soon(const std::shared_ptr<FileState>& st) {
  if (st && st->handles == 0) spawn_checked(executor(), drop_state(st));
}

awaitable<void> FileClient::reopen_all(std::string why) {
  std::vector<std::pair<Ino, Creds>> opens;
  for (auto& [ino, st] : files_.states()) {
    if (st->mds_open) opens.emplace_back(ino, st->opener);
  }
  for (auto& [fh, h] : files_.handles()) {
    if (h->mds_open) opens.emplace_back(h->ino, h->creds);
  }
  spdlog::info("{}: re-opening {} held files", why, opens.size());
  // This runs ahead of the deferred changes still queued (see call_alone), so a file
  // whose create is among them is unknown to the MDS yet; the create opens it when it
  // applies. Those are counted, not reported one by one.
  size_t not_created_yet = 0;
  for (auto& [ino, creds] : opens) {
    proto::OpenRequest request;
    request.set_ino(ino);
    auto reopened = co_await mds_.call_alone<proto::InodeReply>(rpc::kMdsOpen, std::move(request),
                                                                creds, true);
    if (reopened) continue;
    if (is_gone(reopened.error()) && mds_.deferred_queue().pending()) {
      ++not_created_yet;
    } else {
      spdlog::warn("re-opening inode {:#x}: {}", ino, reopened.error().to_string());
    }
  }
  if (not_created_yet > 0) {
    spdlog::info("{} held files are not at the MDS yet: their creates are queued and open them",
                 not_created_yet);
  }
}

awaitable<Status> FileClient::sync_all() {
  Status pushed = co_await push_all();
  Status failed_changes = deferred_errors_.take_all();
  co_return pushed ? failed_changes : pushed;
}

awaitable<Status> FileClient::push_all() {
  co_await drain_all_object_writes();
  // Pushes a flush sent (a close's, the flusher's) left the dirty flags already.
  auto pushing = files_.states_where([](const FileState& st) { return st.pushes_running > 0; });
  for (auto& st : pushing) {
    while (st->pushes_running > 0) {
      auto settled = st->pushes_settled;
      co_await settled->wait();
    }
  }
  std::vector<awaitable<Status>> tasks;
  for (auto& [ino, st] : files_.states()) {
    if (st->dirty() || st->write_error) tasks.push_back(flush_state(st));
  }
  Status result;
  auto results = co_await gather_bounded(std::move(tasks), options_.max_parallel_objects);
  for (auto& s : results) {
    if (!s && result) result = std::move(s);
  }
  Status synced = co_await sync_metadata();
  if (!synced && result) result = std::move(synced);
  co_return result;
}

awaitable<Status> FileClient::shutdown() {
  stopping_ = true;
  rights_.stop();
  walk_.stop();
  if (flusher_timer_) flusher_timer_->cancel();
  if (deferred_timer_) deferred_timer_->cancel();
  Status synced = co_await sync_all();  // deferred changes ride along with its MDS sync
  bool unreachable = !synced && is_retryable(synced.error().code());  // gave up retrying
  if (unreachable) {
    // Releasing each held file would wait op_timeout once more per file: the MDS
    // forgets this session's opens when the session expires instead.
    spdlog::warn("unmounting with the MDS unreachable: {} held files not released",
                 files_.states().size());
  } else {
    std::vector<awaitable<int>> drops;
    for (auto& [ino, st] : files_.states()) {
      drops.push_back([](FileClient* self, std::shared_ptr<FileState> s) -> awaitable<int> {
        co_await self->drop_state(std::move(s));
        co_return 0;
      }(this, st));
    }
    co_await gather_bounded(std::move(drops), options_.max_parallel_objects);
  }
  // The releases above, and changes deferred meanwhile, may have been answered early:
  // the unmount returns once they are safe.
  if (!unreachable && mds_.unsafe_kept() > 0) {
    Status safe = co_await sync_metadata();
    if (!safe) spdlog::warn("unmounting: the last sync failed: {}", safe.error().to_string());
  }
  // Ends the session now: a mount left alone gets exclusive caching back at once.
  if (!unreachable) co_await mds_.close(Duration(2000));
  if (size_t unsent = mds_.deferred_queue().predicted(); unsent > 0) {
    spdlog::error("unmounting with the MDS unreachable: {} deferred change(s) never reached it",
                  unsent);
  }
  spdlog::info("MDS calls (method: count x mean latency): {}", mds_.stats_summary());
  spdlog::info("deferred changes sent: {} in {} batches ({} applied, {} failed)",
               mds_.deferred_sent(), mds_.batches_sent(), mds_.deferred_queue().settled(),
               mds_.deferred_queue().failed());
  spdlog::info("deferred changes the MDS sent back from a batch, sent again alone: {}",
               mds_.deferred_sent_back());
  spdlog::info("changes the MDS answered early: {}, resent to a new MDS leader: {}, not yet "
               "known safe: {}",
               mds_.early_replies(), mds_.unsafe_resent(), mds_.unsafe_kept());
  spdlog::info("listings, lookups and getattrs asked for ahead of deferred changes: {}",
               reads_ahead_of_deferred_);
  if (io_.behind_writes() > 0) {
    spdlog::info("object writes acknowledged before the OSDs had them: {}, of them failed: {}; "
                 "writes that joined one across a hole: {}",
                 io_.behind_writes(), io_.behind_failures(), io_.joined_writes());
  }
  if (walk_.data_enabled()) {
    spdlog::info("object files' data fetched ahead: {}, of them used: {}", walk_.data().fetched(),
                 walk_.data().used());
  }
  if (walk_.listings_enabled()) {
    spdlog::info("directory listings fetched ahead: {}, of them used: {}",
                 walk_.listings().fetched(), walk_.listings().hits());
  }
  co_return synced;
}

awaitable<void> FileClient::flusher_loop() {
  flusher_timer_ = std::make_shared<asio::steady_timer>(executor());
  while (!stopping_) {
    flusher_timer_->expires_after(std::min(options_.commit_interval, Duration(1000)));
    co_await flusher_timer_->async_wait(use_awaitable_tuple);
    if (stopping_) break;
    if (mds_.deferred_queue().returned_count() > 0) {
      schedule_deferred_flush();  // the MDS was away: try again
    }
    auto states = files_.states_where([](const FileState&) { return true; });
    auto now = Clock::now();
    for (auto& st : states) {
      if (st->dirty()) {
        auto flushed = co_await flush_state(st);
        if (!flushed) {
          spdlog::warn("background flush of inode {:#x}: {}", st->ino, flushed.error().to_string());
        }
      }
      if (st->handles == 0 && now >= st->linger_until) co_await drop_state(st);
      if (stopping_) break;
    }
  }
}

}  // namespace dfs::client
