// FileClient: connection set-up and the metadata operations. The data paths (open,
// read, write, flush, truncate) are in file_io.cc.
#include "client-fuse/libdfs/file_client.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "client-fuse/libdfs/file_state.h"
#include "common/capacity/cluster_space.h"
#include "common/rpc/methods.h"

namespace dfs::client {
namespace {

constexpr size_t kMaxNameBytes = 255;

}  // namespace

Status check_name(const std::string& name) {
  if (name.size() > kMaxNameBytes) {
    return make_error(ErrorCode::kNameTooLong, "name of " + std::to_string(name.size()) + " bytes");
  }
  if (name.empty() || name.find('/') != std::string::npos) {
    return make_error(ErrorCode::kInvalidArgument, "bad name '" + name + "'");
  }
  return ok_status();
}

proto::Timespec now_timespec() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  proto::Timespec t;
  t.set_sec(ns / 1000000000);
  t.set_nsec(static_cast<uint32_t>(ns % 1000000000));
  return t;
}

FileClient::FileClient(FileClientOptions options, std::unique_ptr<ObjectClient> objects)
    : options_(std::move(options)),
      objects_(std::move(objects)),
      io_(*objects_, ObjectIo::Options{options_.readahead_bytes, options_.max_parallel_objects,
                                       options_.write_behind_bytes}),
      mds_(*objects_),
      rights_(options_.exclusive),
      locks_(mds_),
      walk_(objects_->executor(),
            [this](Ino dir, Creds creds, uint32_t max_entries) {
              return list_ahead(std::move(creds), dir, max_entries);
            },
            io_,
            WalkAhead::Options{options_.exclusive ? options_.prefetch_listings : 0,
                               options_.exclusive ? options_.data_ahead_bytes : 0},
            [this] { return changes(); }),
      // Handing out numbers checks no permission: the mount's own credentials do.
      delegated_([this](uint32_t count) -> awaitable<Result<proto::AllocInosReply>> {
        proto::AllocInosRequest request;
        request.set_count(count);
        co_return co_await mds_.call<proto::AllocInosReply>(rpc::kMdsAllocInos,
                                                            std::move(request), Creds{}, true);
      }) {
  mds_.on_new_instance([this]() -> awaitable<void> {
    co_await locks_.reassert();
    co_await reopen_all("the MDS restarted");
  });
  mds_.on_fenced([this](const Error& why) { on_evicted(why); });
  objects_->on_fenced([this](const Error& why) { on_evicted(why); });
  objects_->on_mds_push([this](const rpc::Frame& frame) { on_mds_push(frame); });
  mds_.set_wants_cache(options_.exclusive);
  mds_.on_session_reply([this](const proto::SessionReply& reply) {
    on_cache_rights(reply.exclusive(), reply.cache_seq(), "session reply", true);
  });
  mds_.set_cache_claims([this](proto::SessionRequest& request) {
    request.set_holds_exclusive(rights_.exclusive());
    for (Ino dir : rights_.owned().dirs()) request.add_owned_dirs(dir);
    for (Ino file : rights_.owned().files()) request.add_owned_files(file);
    for (Ino file : rights_.owned().shared()) request.add_read_files(file);
    request.set_reasserts_locks(locks_.holds_any());
  });
  mds_.on_renewed([this](const proto::RenewReply& reply) { on_renewed(reply); });
  mds_.deferred_queue().set_late_source([this] { return take_attr_changes(); });
}

Result<std::unique_ptr<FileClient>> FileClient::connect(FileClientOptions options) {
  auto objects = DFS_TRY(ObjectClient::connect(options.objects));
  std::unique_ptr<FileClient> client(new FileClient(std::move(options), std::move(objects)));
  FileClient* c = client.get();
  auto session = c->run([](FileClient* self) -> awaitable<Result<proto::SessionReply>> {
    // A mount that caches alone must push its changes before this session is answered
    // (a recall), which may take up to the MDS's session timeout if it does not answer.
    co_return co_await self->mds_.open(
        std::max(self->options_.objects.connect_timeout, self->options_.objects.op_timeout));
  }(c));
  if (!session) return unexpected(std::move(session).error());
  spdlog::info("mds session open: fs '{}', root inode {}, inline threshold {} bytes",
               session->fs_name(), session->root().ino(), session->inline_threshold());
  asio::post(c->executor(), [c] {
    spawn_checked(c->executor(), c->flusher_loop());
    spawn_checked(c->executor(), c->lease_watch_loop());
  });
  return client;
}

FileClient::~FileClient() {
  // The flusher must not outlive us: stop it on the I/O thread, then the thread.
  run([](FileClient* self) -> awaitable<void> {
    self->stopping_ = true;
    self->rights_.stop();
    if (self->flusher_timer_) self->flusher_timer_->cancel();
    if (self->lease_timer_) self->lease_timer_->cancel();
    if (self->deferred_timer_) self->deferred_timer_->cancel();
    self->walk_.stop();
    co_return;
  }(this));
  // The I/O thread stops and what waits on it goes while every part it may refer to
  // exists; the parts, whose timers are tied to the I/O context, go before objects_
  // (declared before them), and the context with it.
  objects_->stop();
}

void FileClient::overlay(proto::Inode& inode) const {
  auto held_state = held(inode.ino());
  if (!held_state || !S_ISREG(inode.mode())) return;
  const FileState& st = *held_state;
  // Shared, with nothing of this mount's own on its way: the MDS's answer is newer than
  // what the state learned at its open (another mount may have changed the file since,
  // and a closed handle's state lives until the kernel's release arrives).
  if (!alone(inode.ino()) && !st.has_unrecorded_writes() && st.deferred_pushes == 0) return;
  if (st.size > inode.size()) {
    inode.set_blocks(inode.blocks() + (st.size - inode.size() + 511) / 512);
  }
  inode.set_size(st.size);
  if (st.has_unrecorded_writes()) {
    *inode.mutable_mtime() = st.mtime;
    *inode.mutable_ctime() = st.mtime;
  }
}

StripeLayout FileClient::layout_of(const proto::Inode& inode) const {
  return effective_layout(inode.layout(), mds_.session().default_layout());
}

awaitable<Result<proto::Inode>> FileClient::lookup(Creds creds, Ino parent, std::string name) {
  DFS_CO_TRY_STATUS(check_name(name));
  std::optional<bool> listed =
      alone(parent) ? dirs_.contains(parent, name) : std::optional<bool>();
  if (listed == false) {
    co_return make_error(ErrorCode::kNotFound, "no entry '" + name + "' (known directory)");
  }
  // A name of a directory we track whose inode we know exactly: nothing but this
  // client changes either (alone on the directory), so the answer needs no MDS. The kernel asks
  // again for names it already had when their dentry times out (rsync's O_PATH walks
  // did, once per directory, and each such lookup waited for the deferred queue).
  if (listed == true) {
    if (auto ino = dirs_.ino_of(parent, name)) {
      if (auto inode = known_exactly(*ino)) co_return std::move(*inode);
    }
  }
  proto::LookupRequest request;
  request.set_parent(parent);
  request.set_name(name);
  auto inode = co_await mds_inode_shared(rpc::kMdsLookup, std::move(request), creds);
  if (!inode && inode.error().code() == ErrorCode::kNotFound) dirs_.forget(parent);
  co_return inode;
}

std::optional<proto::Inode> FileClient::known_exactly(Ino ino) const {
  const Known* k = known(ino);
  if (!k || !attrs_fresh(*k) || k->inode.ino() != ino) return std::nullopt;
  if (auto st = held(ino); st && st->dirty()) return std::nullopt;
  proto::Inode inode = k->inode;
  overlay(inode);
  return inode;
}

awaitable<Result<proto::Inode>> FileClient::getattr(Creds creds, Ino ino) {
  if (auto inode = known_exactly(ino)) co_return std::move(*inode);
  proto::GetAttrRequest request;
  request.set_ino(ino);
  co_return co_await mds_inode_shared(rpc::kMdsGetAttr, std::move(request), creds);
}

proto::SetAttrRequest setattr_request(uint64_t ino, const SetAttrArgs& args) {
  proto::SetAttrRequest request;
  request.set_ino(ino);
  request.set_valid(args.valid);
  request.set_mode(args.mode);
  request.set_uid(args.uid);
  request.set_gid(args.gid);
  request.set_size(args.size);
  *request.mutable_atime() = args.atime;
  *request.mutable_mtime() = args.mtime;
  *request.mutable_ctime() = args.ctime;
  return request;
}

awaitable<Result<proto::Inode>> FileClient::setattr(Creds creds, Ino ino, SetAttrArgs args) {
  ++setattr_calls_;  // a deferred one reaches the session's counter only when sent
  walk_.touched({}, {ino});  // and again once a deferred change is predicted
  if (args.valid & kSetSize) co_return co_await truncate(std::move(creds), ino, std::move(args));
  // With the writeback cache the kernel keeps a regular file's times itself and sends
  // them as MTIME|CTIME (or MTIME) after writes and namespace changes (`sync` reaches
  // buffered data through this too), and so does utimensat(UTIME_OMIT, t).
  bool times_only = args.valid == (kSetMtime | kSetCtime) || args.valid == kSetMtime;
  auto st = held(ino);
  if (st && st->object_writes_running > 0) {
    // Write-behind: the writes still running are recorded later, by a CommitWrite that
    // sets the mtime it carries and clears setuid/setgid for a non-root writer; an
    // explicit mtime becomes the one it carries, and a mode change waits for it.
    if ((args.valid & kSetMode) && !st->writer.is_root()) co_await io_.drain(st);
    if (args.valid & kSetMtime) {
      st->mtime = (args.valid & kSetMtimeNow) ? now_timespec() : args.mtime;
    }
  }
  if (st && times_only && st->has_unrecorded_writes()) {
    // The mtime rides on the WriteInline or CommitWrite that pushes the buffered
    // writes (which sets ctime): one round trip.
    st->mtime = args.mtime;
    DFS_CO_AWAIT_CHECK(flush_state(st));
    if (const Known* k = known(ino); k && attrs_fresh(*k)) {
      proto::Inode inode = k->inode;
      overlay(inode);
      co_return inode;
    }
  } else if (st) {
    // Buffered writes first, so the MDS sees them before (and its mtime is overridden
    // by) an explicit time change.
    DFS_CO_AWAIT_CHECK(flush_state(st));
  }
  if ((args.valid & (kSetAtime | kSetMtime)) && !(args.valid & (kSetMode | kSetUid | kSetGid)) &&
      !creds.is_root()) {
    // The kernel (default_permissions) lets a non-owner set times only to "now", but
    // with the writeback cache it sends "now" as its own clock's time: say it is now.
    uint32_t owner;
    if (const Known* k = known(ino)) {
      owner = k->inode.uid();
    } else {
      DFS_CO_AWAIT_TRY(auto current, getattr(creds, ino));
      owner = current.uid();
    }
    if (owner != creds.uid) {
      if (args.valid & kSetAtime) args.valid |= kSetAtimeNow;
      if (args.valid & kSetMtime) args.valid |= kSetMtimeNow;
      times_only = false;
    }
  }
  if (times_only && (!st || !st->dirty())) {
    // An mtime the MDS already has, with only ctime "changing": the kernel repeating
    // times it got from us (after unlink, rename, close). Nothing to store.
    const Known* k = known(ino);
    if (k && k->inode.mtime().sec() == args.mtime.sec() &&
        k->inode.mtime().nsec() == args.mtime.nsec()) {
      proto::Inode inode = k->inode;
      overlay(inode);
      co_return inode;
    }
  }
  if (auto deferred = defer_setattr(creds, ino, args)) co_return std::move(*deferred);
  auto inode = co_await mds_inode(rpc::kMdsSetAttr, setattr_request(ino, args), creds, true);
  constexpr uint32_t kTimes = kSetAtime | kSetMtime | kSetCtime | kSetAtimeNow | kSetMtimeNow;
  if (!inode && (args.valid & ~kTimes) == 0 && is_gone(inode.error())) {
    // The kernel flushing the times of a file that is gone (syncfs after rm): there is
    // nothing left to update, and nothing to report.
    proto::Inode gone;
    if (const Known* k = known(ino)) {
      gone = k->inode;
    } else {
      // Only regular files get the kernel's time flushes (writeback cache).
      gone.set_ino(ino);
      gone.set_mode(S_IFREG);
    }
    gone.set_nlink(0);
    *gone.mutable_mtime() = args.mtime;
    *gone.mutable_ctime() = args.ctime;
    spdlog::debug("time flush for gone inode {:#x} ignored", ino);
    co_return gone;
  }
  co_return inode;
}

awaitable<Result<proto::Inode>> FileClient::mknod(Creds creds, Ino parent, std::string name,
                                                  uint32_t mode, uint64_t rdev) {
  DFS_CO_TRY_STATUS(check_name(name));
  proto::MknodRequest request;
  request.set_parent(parent);
  request.set_name(name);
  request.set_mode(mode);
  request.set_rdev(rdev);
  request.set_exclusive(true);
  // A new directory is ours until another mount touches it (OwnedDirs).
  request.set_own(S_ISDIR(mode) && options_.exclusive);
  if (auto made = co_await defer_new_inode(creds, rpc::kMdsMknod, request)) {
    co_return std::move(*made->mutable_inode());
  }
  request.set_own_parent(asks_to_own(parent));
  const uint64_t epoch = rights_.ownership_epoch();
  auto made = co_await mds_.call<proto::MknodReply>(rpc::kMdsMknod, std::move(request), creds, true);
  Result<proto::Inode> inode = made ? Result<proto::Inode>(made->inode())
                                    : Result<proto::Inode>(unexpected(made.error()));
  if (made) {
    if (made->parent_owned()) owned_granted(parent, Granted::kDirectory, epoch);
    learn_reply(*made);
    prefer_newer(*inode);
    // Not if a recall came meanwhile: it may have been this directory's (the MDS's
    // bound), answered before this reply was read.
    if (made->owned()) rights_.own_claimed(inode->ino(), epoch);
    if (!S_ISDIR(inode->mode())) rights_.owned().file_created(inode->ino(), parent);
  }
  after_add(parent, name, inode);
  if (inode && S_ISDIR(inode->mode()) && (rights_.exclusive() || rights_.owned().owns(inode->ino()))) {
    dirs_.created(inode->ino());
  }
  co_return inode;
}

awaitable<Result<proto::Inode>> FileClient::symlink(Creds creds, Ino parent, std::string name,
                                                    std::string target) {
  DFS_CO_TRY_STATUS(check_name(name));
  proto::SymlinkRequest request;
  request.set_parent(parent);
  request.set_name(name);
  request.set_target(std::move(target));
  if (auto made = co_await defer_new_inode(creds, rpc::kMdsSymlink, request)) {
    co_return std::move(*made->mutable_inode());
  }
  auto inode = co_await mds_inode(rpc::kMdsSymlink, std::move(request), creds, true);
  after_add(parent, name, inode);
  if (inode) rights_.owned().file_created(inode->ino(), parent);
  co_return inode;
}

awaitable<Result<std::string>> FileClient::readlink(Creds creds, Ino ino) {
  // A symlink's target never changes, and the inode we learned carries it.
  if (const Known* k = known(ino); k && S_ISLNK(k->inode.mode()) && !k->inode.symlink().empty()) {
    co_return k->inode.symlink();
  }
  proto::ReadlinkRequest request;
  request.set_ino(ino);
  DFS_CO_AWAIT_TRY(auto reply, mds_.call<proto::ReadlinkReply>(rpc::kMdsReadlink,
                                                               std::move(request), creds, false));
  co_return std::move(*reply.mutable_target());
}

awaitable<Result<proto::Inode>> FileClient::link(Creds creds, Ino ino, Ino new_parent,
                                                 std::string new_name) {
  DFS_CO_TRY_STATUS(check_name(new_name));
  if (rights_.owned().covers(ino)) {
    // A second name, maybe where others look: what is buffered of the file goes to the
    // MDS first, and the file is no longer covered by its directory.
    if (auto st = held(ino)) DFS_CO_AWAIT_CHECK(flush_state(st));
    rights_.owned().file_left(ino);
  }
  proto::LinkRequest request;
  request.set_ino(ino);
  request.set_new_parent(new_parent);
  request.set_new_name(new_name);
  auto inode = co_await mds_inode(rpc::kMdsLink, std::move(request), creds, true);
  after_add(new_parent, new_name, inode);
  co_return inode;
}

awaitable<Result<proto::Inode>> FileClient::unlink(Creds creds, Ino parent, std::string name,
                                                   bool directory) {
  DFS_CO_TRY_STATUS(check_name(name));
  if (auto deferred = defer_unlink(creds, parent, name, directory)) co_return std::move(*deferred);
  proto::UnlinkRequest request;
  request.set_parent(parent);
  request.set_name(name);
  request.set_directory(directory);
  // UnlinkReply carries the inode in field 1, like InodeReply.
  auto removed = co_await mds_inode(rpc::kMdsUnlink, std::move(request), creds, true);
  if (!removed) {
    dirs_.forget(parent);
    co_return removed;
  }
  proto::Inode inode = std::move(*removed);
  dirs_.removed(parent, name);
  if (directory) {
    dirs_.forget(inode.ino());
    rights_.owned().removed(inode.ino());
  }
  // A file that lost its last name and is only lingering here: let the MDS purge it now.
  // Owned by itself, it is owned no more (the MDS drops it once nobody has it open).
  if (inode.nlink() == 0) {
    rights_.owned().removed(inode.ino());
    drop_soon(held(inode.ino()));
  }
  co_return inode;
}

awaitable<Result<proto::RenameReply>> FileClient::rename(Creds creds, Ino parent, std::string name,
                                                         Ino new_parent, std::string new_name,
                                                         uint32_t flags) {
  DFS_CO_TRY_STATUS(check_name(name));
  DFS_CO_TRY_STATUS(check_name(new_name));
  if (auto deferred = defer_rename(creds, parent, name, new_parent, new_name, flags)) {
    co_return std::move(*deferred);
  }
  if (auto moving = dirs_.ino_of(parent, name);
      moving && rights_.owned().covers(*moving) && !rights_.owned().owns(new_parent)) {
    // Out of the owned directories, where others may look: what is buffered of the file
    // goes to the MDS first, and the file is no longer covered.
    if (auto st = held(*moving)) DFS_CO_AWAIT_CHECK(flush_state(st));
    rights_.owned().file_left(*moving);
  }
  proto::RenameRequest request;
  request.set_parent(parent);
  request.set_name(name);
  request.set_new_parent(new_parent);
  request.set_new_name(new_name);
  request.set_flags(flags);
  auto renamed =
      co_await mds_.call<proto::RenameReply>(rpc::kMdsRename, std::move(request), creds, true);
  if (!renamed) {
    dirs_.forget(parent);
    dirs_.forget(new_parent);
    co_return renamed;
  }
  proto::RenameReply reply = std::move(*renamed);
  if (!(flags & kRenameExchange)) {  // an exchange keeps both names
    // The op lists the moved inode first among the changed ones.
    uint64_t moved = reply.changed_size() > 0 ? reply.changed(0).ino() : 0;
    dirs_.removed(parent, name);
    dirs_.added(new_parent, new_name, moved);
    rights_.owned().file_moved(moved, new_parent);
  } else {
    // Both names stay; each now names the other's inode.
    const auto a = dirs_.ino_of(parent, name);
    const auto b = dirs_.ino_of(new_parent, new_name);
    if (a) rights_.owned().file_left(*a);
    if (b) rights_.owned().file_left(*b);
    dirs_.added(parent, name, b.value_or(0));
    dirs_.added(new_parent, new_name, a.value_or(0));
  }
  if (reply.did_replace() && S_ISDIR(reply.replaced().mode())) dirs_.forget(reply.replaced().ino());
  for (const auto& other : reply.changed()) learn(other);  // the moved inode, the parents
  if (reply.did_replace()) {
    learn(reply.replaced());
    if (reply.replaced().nlink() == 0) drop_soon(held(reply.replaced().ino()));
  }
  co_return reply;
}

namespace {

// Names answered from the cache: the namespaces the MDS stores as they are. Virtual
// attributes it computes (dfs.*) and names it would reject go to it.
bool cacheable_xattr(const std::string& name) {
  for (const char* prefix : {"user.", "trusted.", "security."}) {
    if (name.rfind(prefix, 0) == 0) return name.size() > std::strlen(prefix) && name.size() <= 255;
  }
  return name == "system.posix_acl_access" || name == "system.posix_acl_default";
}

}  // namespace

awaitable<Result<std::string>> FileClient::getxattr(Creds creds, Ino ino, std::string name) {
  if (const Known* k = known(ino); k && cacheable_xattr(name)) {
    auto it = k->inode.xattrs().find(name);
    if (it == k->inode.xattrs().end()) co_return make_error(ErrorCode::kNoAttribute, name);
    co_return it->second;
  }
  proto::GetXattrRequest request;
  request.set_ino(ino);
  request.set_name(std::move(name));
  DFS_CO_AWAIT_TRY(auto reply, mds_.call<proto::GetXattrReply>(rpc::kMdsGetXattr,
                                                               std::move(request), creds, false));
  co_return std::move(*reply.mutable_value());
}

awaitable<Status> FileClient::setxattr(Creds creds, Ino ino, std::string name, std::string value,
                                       uint32_t flags) {
  proto::SetXattrRequest request;
  request.set_ino(ino);
  request.set_name(std::move(name));
  request.set_value(std::move(value));
  request.set_flags(flags);
  if (defer_setxattr(creds, request)) co_return ok_status();
  if (auto st = held(ino)) {
    // A write pushed after this would clear security.capability again.
    if (request.name() == "security.capability") co_await io_.drain(st);
    DFS_CO_AWAIT_CHECK(flush_state(st));
  }
  DFS_CO_AWAIT_TRY(auto reply,
                   mds_.call<proto::InodeReply>(rpc::kMdsSetXattr, request, creds, true));
  if (Known* k = known_.find_mutable(ino)) {
    (*k->inode.mutable_xattrs())[request.name()] = request.value();
    k->exact = false;  // ctime, and the mode for an ACL
  }
  learn(reply.inode());  // the MDS's version of all that, when it sends it
  co_return ok_status();
}

awaitable<Result<std::vector<std::string>>> FileClient::listxattr(Creds creds, Ino ino) {
  // trusted.* is for CAP_SYS_ADMIN only; the kernel leaves hiding it to the file system.
  auto visible = [&creds](const std::string& name) {
    return creds.is_root() || name.rfind("trusted.", 0) != 0;
  };
  if (const Known* k = known(ino)) {
    std::vector<std::string> names;
    for (const auto& [name, value] : k->inode.xattrs()) {
      if (cacheable_xattr(name) && visible(name)) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    co_return names;
  }
  proto::ListXattrRequest request;
  request.set_ino(ino);
  DFS_CO_AWAIT_TRY(auto reply, mds_.call<proto::ListXattrReply>(rpc::kMdsListXattr,
                                                                std::move(request), creds, false));
  std::vector<std::string> names;
  for (const auto& name : reply.names()) {
    if (visible(name)) names.push_back(name);
  }
  co_return names;
}

awaitable<Status> FileClient::removexattr(Creds creds, Ino ino, std::string name) {
  // tar --acls removes the default ACL of every directory it makes, which has none. An
  // inode known exactly (no failed deferred change since) answers that at once; root
  // only, like the deferred changes (the kernel checked the caller).
  if (const Known* k = known(ino); k && k->exact && creds.is_root() && cacheable_xattr(name) &&
                                   !k->inode.xattrs().contains(name)) {
    co_return make_error(ErrorCode::kNoAttribute, name);
  }
  proto::RemoveXattrRequest request;
  request.set_ino(ino);
  request.set_name(std::move(name));
  DFS_CO_AWAIT_TRY(auto reply,
                   mds_.call<proto::InodeReply>(rpc::kMdsRemoveXattr, request, creds, true));
  if (Known* k = known_.find_mutable(ino)) {
    k->inode.mutable_xattrs()->erase(request.name());
    k->exact = false;
  }
  learn(reply.inode());
  co_return ok_status();
}

// As long as an OSD's statfs may take (ObjectClient::osd_statfs).
constexpr Duration kStatFsTimeout{5000};

awaitable<Result<FsStat>> FileClient::statfs(Creds creds) {
  // Capacity from every up OSD, asked in parallel; inode counts from the MDS.
  ClusterMap map = objects_->maps().map();
  std::vector<awaitable<Result<proto::StatFsReply>>> tasks;
  std::vector<int32_t> asked;
  for (const auto& osd : map.proto().osds()) {
    if (!osd.up()) continue;
    tasks.push_back(objects_->osd_statfs(osd.id()));
    asked.push_back(osd.id());
  }
  auto osds = co_await gather(std::move(tasks));
  proto::StatFsMdsRequest request;
  // Bounded like the OSDs' answers above: statfs is for display, and umount(8) asks it.
  DFS_CO_AWAIT_TRY(auto mds, mds_.call_brief<proto::StatFsMdsReply>(
                                 rpc::kMdsStatFs, std::move(request), creds, kStatFsTimeout));
  std::vector<capacity::OsdSpace> spaces;
  for (size_t i = 0; i < osds.size(); ++i) {
    // An OSD that does not answer counts as no capacity.
    if (osds[i]) spaces.push_back(capacity::space_of(asked[i], *osds[i]));
  }
  // OSDs sharing a disk report it each: counted once.
  const capacity::ClusterSpace space = capacity::sum_space(spaces);
  FsStat out;
  out.total_bytes = space.total_bytes;
  out.available_bytes = space.available_bytes;
  const proto::Pool* pool = map.pool_by_name(layout_of(proto::Inode()).pool);
  uint64_t replicas = pool && pool->size() > 0 ? pool->size() : 1;
  out.total_bytes /= replicas;
  out.available_bytes /= replicas;
  out.inodes = mds.inodes();
  out.purge_backlog_bytes = mds.purge_backlog_bytes();
  co_return out;
}

awaitable<Result<proto::Inode>> FileClient::resolve(Creds creds, std::string path) {
  DFS_CO_AWAIT_TRY(auto inode, getattr(creds, root_ino()));
  size_t pos = 0;
  while (pos < path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty() || part == ".") continue;
    if (!S_ISDIR(inode.mode())) {
      co_return make_error(ErrorCode::kNotDirectory, "a component of " + path);
    }
    auto next = co_await lookup(creds, inode.ino(), part);
    if (!next) co_return unexpected(std::move(next).error().with_context("resolving " + path));
    inode = std::move(*next);
  }
  co_return inode;
}

}  // namespace dfs::client
