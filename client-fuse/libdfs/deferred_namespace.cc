// Deferred namespace changes: rsync creates every file under a temporary name and
// renames it into place, and tar creates files one after the other; each create and
// rename waiting for the MDS cost a round trip per file. In exclusive mode, in a
// directory this client created, it knows every name (DirCache) and the directory's
// inode exactly, so the outcome of a create there (a file, directory, device, fifo,
// socket or symlink), of an unlink there (or rmdir of an empty directory it created),
// or of a rename of a non-directory
// between two such directories onto a free name, is a pure function of what it knows:
// it computes it with the MDS's own op (predict_entry), answers the kernel at once, and
// sends the request later, in order with the deferred attribute changes, ahead of the
// next MDS call (MdsSession batches) or after a short delay. The request states the
// inode number (from a range the MDS delegated, kMdsAllocInos) and the time the
// prediction used, so the MDS reaches exactly the predicted state. A deferred change
// the MDS refuses (it cannot happen but for things the client cannot see, like a full
// name hash bucket or a lost inode range) is logged and reported by the next fsync or
// sync, and what the client predicted about the directories involved is dropped.
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <type_traits>

#include "client-fuse/libdfs/attr_predict.h"
#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/rpc/methods.h"

namespace dfs::client {
bool FileClient::known_dir(Ino ino) const {
  const Known* k = known(ino);
  return k && k->exact && S_ISDIR(k->inode.mode());
}

void FileClient::adopt_prediction(const proto::Inode& inode) {
  known_.adopt_prediction(inode);
}

namespace {

// The names a deferred request adds, removes or moves: none for the requests that change
// an inode only (xattrs, data pushes, releases).
template <class Req>
std::vector<PendingTouches::Name> names_of(const Req&) {
  return {};
}
std::vector<PendingTouches::Name> names_of(const proto::MknodRequest& r) {
  return {{r.parent(), r.name()}};
}
std::vector<PendingTouches::Name> names_of(const proto::SymlinkRequest& r) {
  return {{r.parent(), r.name()}};
}
std::vector<PendingTouches::Name> names_of(const proto::UnlinkRequest& r) {
  return {{r.parent(), r.name()}};
}
std::vector<PendingTouches::Name> names_of(const proto::RenameRequest& r) {
  return {{r.parent(), r.name()}, {r.new_parent(), r.new_name()}};
}

}  // namespace

template <class Reply, class Req>
void FileClient::queue_deferred(uint32_t method, Req request, const Creds& creds,
                                std::vector<Ino> dirs, std::vector<Ino> inodes,
                                std::function<void(const Reply&)> on_reply,
                                std::function<void(const Error&)> on_failure) {
  seal_attr_changes();
  PendingTouches::Change touches{std::move(dirs), std::move(inodes), names_of(request)};
  touched_.add(touches);
  // A release changes nothing a listing shows.
  if (method != rpc::kMdsRelease) walk_.touched(touches.dirs, touches.inodes);
  mds_.deferred_queue().predict(mds_.deferred(
      method, std::move(request), creds,
      [this, method, touches = std::move(touches), on_reply = std::move(on_reply),
       on_failure = std::move(on_failure)](Result<rpc::Frame> r) {
        touched_.remove(touches);
        auto reply = r ? rpc::parse_body<Reply>(r->body) : Result<Reply>(std::move(r).error());
        // What the mount answered did not happen: listings fetched since may show it.
        if (!reply && method != rpc::kMdsRelease) walk_.touched(touches.dirs, touches.inodes);
        if (!reply && on_failure) return on_failure(reply.error());
        if (!reply) return deferred_op_failed(reply.error(), touches.dirs, touches.inodes);
        on_reply(*reply);
      }));
  schedule_deferred_flush();
}

void FileClient::deferred_op_failed(const Error& error, const std::vector<Ino>& dirs,
                                    const std::vector<Ino>& inodes) {
  spdlog::warn("deferred change failed at the MDS: {}", error.to_string());
  deferred_errors_.note(error, dirs);
  deferred_errors_.note(error, inodes);
  for (Ino dir : dirs) {
    dirs_.forget(dir);
    known_.mark_inexact(dir);
  }
  for (Ino ino : inodes) {
    known_.mark_inexact(ino);
  }
}

namespace {

void set_op(proto::MdsLogEntry& entry, const proto::MknodRequest& req) {
  *entry.mutable_mknod() = req;
}
void set_op(proto::MdsLogEntry& entry, const proto::SymlinkRequest& req) {
  *entry.mutable_symlink() = req;
}

}  // namespace

template <class Req>
awaitable<std::optional<proto::MknodReply>> FileClient::defer_new_inode(const Creds& creds,
                                                                        uint32_t method,
                                                                        Req request) {
  Ino parent = request.parent();
  std::string name = request.name();  // a copy: the request moves into the queue
  if (!defers_in(parent) || !delegated_.supported()) {
    co_return std::nullopt;
  }
  if (!known_dir(parent) || dirs_.contains(parent, name) != false) co_return std::nullopt;
  auto ino = co_await delegated_.take();
  if (!ino) {
    spdlog::debug("no delegated inode number, creating synchronously: {}",
                  ino.error().to_string());
    co_return std::nullopt;
  }
  // The wait for a range let other requests run: look again.
  if (!defers_in(parent) || !known_dir(parent) || dirs_.contains(parent, name) != false) {
    co_return std::nullopt;
  }

  bool made_own = false;
  if constexpr (std::is_same_v<Req, proto::MknodRequest>) made_own = request.own();
  proto::Timespec now = now_timespec();
  auto* header = request.mutable_header();
  creds.to_proto(header->mutable_creds());
  header->set_want_ino(*ino);
  *header->mutable_client_time() = now;
  proto::MdsLogEntry entry;
  set_op(entry, request);
  *entry.mutable_now() = now;
  entry.set_new_ino(*ino);
  entry.set_index(1);
  if (entry.has_mknod()) *entry.mutable_layout() = mds_.session().default_layout();
  auto body = predict_entry(entry, {known(parent)->inode}, {});
  proto::MknodReply made;  // SymlinkRequest's reply has the same fields
  if (!body || !made.ParseFromString(*body) || !made.created()) {
    co_return std::nullopt;  // the MDS gives its own error
  }

  queue_deferred<proto::MknodReply>(method, std::move(request), creds, {parent, *ino}, {*ino},
                                    [this](const proto::MknodReply& r) { learn_reply(r); });
  for (const auto& other : made.changed()) adopt_prediction(other);
  adopt_prediction(made.inode());
  dirs_.added(parent, name, *ino);
  if (S_ISDIR(made.inode().mode())) {
    // The MDS records it as ours when the create reaches it (MknodRequest.own).
    if constexpr (std::is_same_v<Req, proto::MknodRequest>) {
      if (made_own) rights_.owned().own(*ino);
    }
    dirs_.created(*ino);
  } else {
    rights_.owned().file_created(*ino, parent);
  }
  co_return made;
}

std::optional<proto::RenameReply> FileClient::defer_rename(const Creds& creds, Ino parent,
                                                           const std::string& name,
                                                           Ino new_parent,
                                                           const std::string& new_name,
                                                           uint32_t flags) {
  if (!defers_in(parent) || !defers_in(new_parent)) return std::nullopt;
  if ((flags & ~kRenameNoReplace) != 0 || (parent == new_parent && name == new_name)) {
    return std::nullopt;
  }
  const Known* from = known(parent);
  const Known* to = known(new_parent);
  auto moved_ino = dirs_.ino_of(parent, name);
  if (!known_dir(parent) || !known_dir(new_parent) || !moved_ino) return std::nullopt;
  if (dirs_.contains(new_parent, new_name) != false) return std::nullopt;  // replaces: the MDS
  const Known* moved = known(*moved_ino);
  if (!moved || !moved->exact || S_ISDIR(moved->inode.mode())) return std::nullopt;

  proto::Timespec now = now_timespec();
  proto::RenameRequest request;
  request.set_parent(parent);
  request.set_name(name);
  request.set_new_parent(new_parent);
  request.set_new_name(new_name);
  request.set_flags(flags);
  auto* header = request.mutable_header();
  creds.to_proto(header->mutable_creds());
  *header->mutable_client_time() = now;

  proto::MdsLogEntry entry;
  *entry.mutable_rename() = request;
  *entry.mutable_now() = now;
  entry.set_index(1);
  std::vector<proto::Inode> inodes{from->inode, moved->inode};
  if (new_parent != parent) inodes.push_back(to->inode);
  auto body = predict_entry(entry, inodes,
                            {SeedName{parent, name, *moved_ino, moved->inode.mode()}});
  proto::RenameReply reply;
  if (!body || !reply.ParseFromString(*body) || reply.did_replace()) return std::nullopt;

  Ino ino = *moved_ino;
  queue_deferred<proto::RenameReply>(
      rpc::kMdsRename, std::move(request), creds, {parent, new_parent}, {ino},
      [this](const proto::RenameReply& r) {
        for (const auto& other : r.changed()) learn(other);
      });
  for (const auto& other : reply.changed()) adopt_prediction(other);
  dirs_.removed(parent, name);
  dirs_.added(new_parent, new_name, ino);
  rights_.owned().file_moved(ino, new_parent);
  return reply;
}

}  // namespace dfs::client

namespace dfs::client {

std::optional<proto::Inode> FileClient::defer_unlink(const Creds& creds, Ino parent,
                                                     const std::string& name, bool directory) {
  if (!defers_in(parent)) return std::nullopt;
  auto ino = dirs_.ino_of(parent, name);
  if (!known_dir(parent) || !ino) return std::nullopt;
  const Known* target = known(*ino);
  if (!target || !target->exact) return std::nullopt;
  uint32_t mode = target->inode.mode();
  // rmdir: only of a directory whose every name we know, and it has none.
  if (S_ISDIR(mode) != directory || (directory && dirs_.empty(*ino) != true)) {
    return std::nullopt;
  }

  proto::Timespec now = now_timespec();
  proto::UnlinkRequest request;
  request.set_parent(parent);
  request.set_name(name);
  request.set_directory(directory);
  auto* header = request.mutable_header();
  creds.to_proto(header->mutable_creds());
  *header->mutable_client_time() = now;
  proto::MdsLogEntry entry;
  *entry.mutable_unlink() = request;
  *entry.mutable_now() = now;
  entry.set_index(1);
  auto body = predict_entry(entry, {known(parent)->inode, target->inode},
                            {SeedName{parent, name, *ino, mode}});
  proto::UnlinkReply reply;
  if (!body || !reply.ParseFromString(*body) || reply.inode().ino() != *ino) return std::nullopt;

  Ino removed = *ino;
  queue_deferred<proto::UnlinkReply>(rpc::kMdsUnlink, std::move(request), creds, {parent},
                                     {removed},
                                     [this](const proto::UnlinkReply& r) { learn_reply(r); });
  for (const auto& other : reply.changed()) adopt_prediction(other);
  adopt_prediction(reply.inode());
  dirs_.removed(parent, name);
  if (directory) {
    dirs_.forget(removed);
    rights_.owned().removed(removed);
  }
  proto::Inode inode = reply.inode();
  overlay(inode);
  // A file that lost its last name and is only lingering here: let the MDS purge it now
  // (its release goes after the unlink).
  if (inode.nlink() == 0) drop_soon(held(removed));
  return inode;
}

bool FileClient::defer_setxattr(const Creds& creds, const proto::SetXattrRequest& request) {
  if (!defers_in(request.ino()) || !creds.is_root()) {
    return false;
  }
  const std::string& name = request.name();
  bool deferrable = name.rfind("user.", 0) == 0 || name.rfind("trusted.", 0) == 0 ||
                    name == "system.posix_acl_access" || name == "system.posix_acl_default";
  if (!deferrable) return false;
  Ino ino = request.ino();
  const Known* k = known(ino);
  if (!k || !k->exact) return false;
  if (auto st = held(ino); st && st->dirty()) return false;

  proto::Timespec now = now_timespec();
  proto::SetXattrRequest req = request;
  auto* header = req.mutable_header();
  creds.to_proto(header->mutable_creds());
  if (setxattr_only_touches_ctime(k->inode, req, header->creds())) {
    // A change of the ctime alone: it joins the inode's deferred attribute change (one
    // entry at the MDS per file instead of two) rather than going as an entry itself.
    SetAttrArgs touch;
    touch.valid = kSetCtime;
    touch.ctime = now;
    if (defer_setattr(creds, ino, touch)) return true;
  }
  *header->mutable_client_time() = now;
  proto::MdsLogEntry entry;
  *entry.mutable_setxattr() = req;
  *entry.mutable_now() = now;
  entry.set_index(1);
  auto body = predict_entry(entry, {k->inode}, {});
  proto::InodeReply predicted;
  if (!body || !predicted.ParseFromString(*body) || predicted.inode().ino() != ino) return false;

  queue_deferred<proto::InodeReply>(rpc::kMdsSetXattr, std::move(req), creds, {}, {ino},
                                    [this](const proto::InodeReply& r) { learn(r.inode()); });
  adopt_prediction(predicted.inode());
  return true;
}

}  // namespace dfs::client

namespace dfs::client {

// The callers (create, mknod, symlink; the deferred push; release) live in other files.
template void FileClient::queue_deferred<proto::InodeReply>(
    uint32_t, proto::WriteInlineRequest, const Creds&, std::vector<Ino>, std::vector<Ino>,
    std::function<void(const proto::InodeReply&)>, std::function<void(const Error&)>);
template void FileClient::queue_deferred<proto::InodeReply>(
    uint32_t, proto::CommitWriteRequest, const Creds&, std::vector<Ino>, std::vector<Ino>,
    std::function<void(const proto::InodeReply&)>, std::function<void(const Error&)>);
template void FileClient::queue_deferred<proto::InodeReply>(
    uint32_t, proto::SetAttrRequest, const Creds&, std::vector<Ino>, std::vector<Ino>,
    std::function<void(const proto::InodeReply&)>, std::function<void(const Error&)>);
template void FileClient::queue_deferred<proto::Empty>(
    uint32_t, proto::ReleaseRequest, const Creds&, std::vector<Ino>, std::vector<Ino>,
    std::function<void(const proto::Empty&)>, std::function<void(const Error&)>);
template awaitable<std::optional<proto::MknodReply>> FileClient::defer_new_inode(
    const Creds&, uint32_t, proto::MknodRequest);
template awaitable<std::optional<proto::MknodReply>> FileClient::defer_new_inode(
    const Creds&, uint32_t, proto::SymlinkRequest);

}  // namespace dfs::client
