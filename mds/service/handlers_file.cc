// Handlers that touch open counts or data objects: mknod (optionally with an open),
// setattr and open with truncation (objects cut before the entry is logged), release
// (an orphan's last close purges it) and uninline (object 0 written first).
// Replies: kMdsMknod MknodReply, kMdsSetAttr/kMdsOpen/kMdsUninline InodeReply,
// kMdsRelease Empty.
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include "mds/ops/inode_rules.h"
#include "mds/service/mds_service.h"

namespace dfs::mds {
namespace {

constexpr int kMaxVersionRetries = 8;

}  // namespace

awaitable<MdsService::Reply> MdsService::on_mknod(proto::MknodRequest req, std::string client) {
  bool open = req.open();
  // A new directory, or a new regular file in a shared directory (nobody else can have
  // it open yet).
  bool own = req.own() && (S_ISDIR(req.mode()) || S_ISREG(req.mode()));
  // Given before the create is applied: from then on another mount's touch of the
  // parent recalls it, so nothing changes there unseen between this create and the
  // owner's next one.
  const uint64_t parent = req.parent();
  const bool owned_before = dir_rights_.owns(client, parent);
  bool parent_owned = req.own_parent() && dir_rights_.claimed_existing(client, parent);
  proto::MdsLogEntry entry;
  *entry.mutable_mknod() = std::move(req);
  auto reply = co_await submit(std::move(entry));
  proto::MknodReply made;
  const bool parsed = reply && made.ParseFromString(reply->body);
  // A failed create's reply does not tell the client it owns the parent: it must not
  // stay owned (every other mount's touch of it would wait for a recall for nothing).
  if (!reply && parent_owned && !owned_before) dir_rights_.give_back(client, parent);
  if (reply && (open || own || parent_owned)) {
    if (parsed) {
      if (open) {
        sessions_.add_open(sessions_.touch(client, nullptr, Clock::now()), made.inode().ino());
      }
      if (own && made.created() && S_ISDIR(made.inode().mode())) {
        made.set_owned(dir_rights_.created(client, made.inode().ino()));
      } else if (own && made.created() && !dir_rights_.owns(client, parent) &&
                 dir_rights_.contested(parent)) {
        // In a directory mounts share. (One the caller owns covers the file already;
        // one it was not given for another reason, a recall for the bound under way,
        // it is likely to be given again.)
        made.set_owned(dir_rights_.created(client, made.inode().ino(), DirRights::Kind::kFile));
      }
      made.set_parent_owned(parent_owned);
      if (open && !made.created() &&
          dir_rights_.conflicts(client, std::vector<uint64_t>(1, made.inode().ino()))) {
        // O_CREAT on a file another mount owns (this mount's kernel thought the name
        // free): the owner pushes what it buffered first, and the answer shows it.
        std::vector<uint64_t> file(1, made.inode().ino());
        const uint64_t ino = file.front();
        co_await dir_rights_.claim(client, std::move(file), "an open of " + client);
        if (!serving_) co_return unexpected(standby_error());
        auto now = co_await read_inode(client, ino, /*with_data=*/true);
        if (!now) co_return unexpected(std::move(now).error());
        *made.mutable_inode() = std::move(*now);
      }
      if (open && !made.created()) {
        // An existing file opened as for writing: as on_open for a writer.
        co_await claim_for_writer(client, made.inode().ino());
        if (!serving_) co_return unexpected(standby_error());
      }
      reply->body = made.SerializeAsString();
    }
  }
  co_return reply;
}

awaitable<MdsService::Reply> MdsService::on_setattr(proto::SetAttrRequest req,
                                                    std::string client) {
  // A grow_only size change moves no data (its op refuses one that would).
  bool sized = (req.valid() & proto::SET_ATTR_SIZE) && !req.grow_only();
  uint64_t ino = req.ino(), size = req.size();
  proto::MdsLogEntry entry;
  *entry.mutable_setattr() = std::move(req);
  if (!sized) co_return co_await submit(std::move(entry));
  co_return co_await truncating_op(std::move(entry), ino, size, std::move(client));
}

awaitable<MdsService::Reply> MdsService::truncating_op(proto::MdsLogEntry entry, uint64_t ino,
                                                       uint64_t new_size, std::string client) {
  for (int attempt = 1;; ++attempt) {
    auto found = co_await read_inode(client, ino, /*with_data=*/true);
    if (!found) co_return unexpected(std::move(found).error());
    const proto::Inode& inode = *found;
    if (is_reg(inode) && !inode.inline_() && new_size < inode.size()) {
      DFS_CO_AWAIT_CHECK(
          truncate_file_objects(*data_, ino, inode.layout(), inode.size(), new_size));
    }
    if (is_reg(inode) && inode.inline_() && new_size > options_.fs.inline_threshold &&
        !inode.inline_data().empty()) {
      DFS_CO_AWAIT_CHECK(
          data_->write_full(data_pool(inode.layout()), object_name(ino, 0), inode.inline_data()));
    }
    entry.set_expect_version(inode.version());
    auto reply = co_await submit(entry);
    if (!reply && reply.error().code() == ErrorCode::kBusy && attempt < kMaxVersionRetries)
      continue;
    co_return reply;
  }
}

awaitable<MdsService::Reply> MdsService::on_open(proto::OpenRequest req, std::string client) {
  uint64_t ino = req.ino();
  const bool own = req.own();
  const bool writes = (req.flags() & O_ACCMODE) != O_RDONLY || (req.flags() & O_TRUNC);
  const bool read_share = req.read_share() && !writes;
  bool first_open = sessions_.open_count(ino) == 0;
  // Counted before the inode is read, so an unlink committed from now on keeps it.
  sessions_.add_open(sessions_.touch(client, nullptr, Clock::now()), ino);
  // From here on nobody else is given the file (they see this open). One given to
  // another session before this open was counted (its open or claim ran while this
  // request waited its turn) is recalled first, so that the inode read below, and what
  // this session reads from the OSDs, holds the owner's buffered writes.
  if (std::vector<uint64_t> file{ino}; dir_rights_.conflicts(client, file)) {
    co_await dir_rights_.claim(client, std::move(file), "an open of " + client);
    if (!serving_) co_return unexpected(standby_error());
  }
  // A writer: the pages other sessions keep of the file go first (they would miss what
  // it writes), and its own read share ends (its mount gave it up before asking). No
  // share is given while it has the file open (others_only_read below).
  if (writes) {
    co_await claim_for_writer(client, ino);
    if (!serving_) co_return unexpected(standby_error());
  }
  Reply reply;
  bool unlinked = false;
  // A change that finishes while the inode is read may have landed after the read: no
  // grant then (ChangesInFlight::finished).
  const uint64_t changes_before = changes_in_flight_.finished();
  if (req.flags() & O_TRUNC) {
    proto::MdsLogEntry entry;
    *entry.mutable_open() = std::move(req);
    reply = co_await truncating_op(std::move(entry), ino, 0, client);
    proto::InodeReply opened;  // small: a truncated file has no data
    unlinked = reply && opened.ParseFromString(reply->body) && opened.inode().nlink() == 0;
  } else {
    auto inode = co_await read_inode(client, ino, /*with_data=*/true);
    if (inode) {
      unlinked = inode->nlink() == 0;
      proto::InodeReply r;
      *r.mutable_inode() = std::move(*inode);
      reply = rpc::make_reply(r);
    } else {
      reply = unexpected(std::move(inode).error());
    }
  }
  if (reply && unlinked && first_open && Clock::now() - started_at_ >= options_.reclaim_grace) {
    // An orphan nobody held open may already be on its way to the purge queue.
    reply = make_error(ErrorCode::kStale, "the file was removed");
  }
  if (reply && own) {
    // The file is given when nobody else holds it open and no change of it is under way
    // (it would land after the inode read above): whoever reads or changes it from now
    // on must open it, stat it or name it, which recalls it (claim_touched).
    proto::InodeReply opened;
    if (opened.ParseFromString(reply->body) && is_reg(opened.inode()) && !unlinked &&
        Clock::now() >= file_grants_from_ && !changes_in_flight_.any(ino) &&
        changes_in_flight_.finished() == changes_before &&
        !sessions_.opened_by_others(client, ino) &&
        dir_rights_.claimed_existing(client, ino, DirRights::Kind::kFile)) {
      opened.set_owned(true);
      reply->body = opened.SerializeAsString();
    }
  }
  if (reply && read_share) {
    // Shared for reading when nothing changes the file: no change of it under way, the
    // asker holds no other open of it (which may be for writing: a mount asks at its
    // first open), and every other session holding it open shares it (a writer's open
    // recalls the shares and keeps new ones from being given until it is released).
    proto::InodeReply opened;
    if (opened.ParseFromString(reply->body) && is_reg(opened.inode()) && !unlinked &&
        may_share(client, ino, changes_before, /*opening=*/true) &&
        dir_rights_.shared(client, ino)) {
      opened.set_read_shared(true);
      reply->body = opened.SerializeAsString();
    }
  }
  if (!reply) {
    if (sessions_.release(sessions_.touch(client, nullptr, Clock::now()), ino))
      purge_if_unused(ino);
  }
  co_return reply;
}

bool MdsService::may_share(const std::string& client, uint64_t ino, uint64_t changes_before,
                           bool opening) const {
  const uint32_t own_opens = sessions_.opens_by(client, ino) - (opening ? 1 : 0);
  return Clock::now() >= file_grants_from_ && !changes_in_flight_.any(ino) &&
         changes_in_flight_.finished() == changes_before && others_only_read(client, ino) &&
         (own_opens == 0 || (!opening && dir_rights_.shares(client, ino)));
}

bool MdsService::others_only_read(const std::string& client, uint64_t ino) const {
  for (const auto& other : sessions_.other_openers(client, ino)) {
    if (!dir_rights_.shares(other, ino)) return false;
  }
  return true;
}

awaitable<MdsService::Reply> MdsService::on_release(proto::ReleaseRequest req, std::string client) {
  if (sessions_.release(sessions_.touch(client, nullptr, Clock::now()), req.ino())) {
    purge_if_unused(req.ino());
  }
  co_return rpc::make_reply(proto::Empty());
}

awaitable<MdsService::Reply> MdsService::on_uninline(proto::UninlineRequest req,
                                                     std::string client) {
  uint64_t ino = req.ino();
  for (int attempt = 1;; ++attempt) {
    auto found = co_await read_inode(client, ino, /*with_data=*/true);
    if (!found) co_return unexpected(std::move(found).error());
    if (!is_reg(*found)) co_return make_error(ErrorCode::kInvalidArgument, "not a regular file");
    if (!found->inline_()) {
      proto::InodeReply r;
      *r.mutable_inode() = std::move(*found);
      co_return rpc::make_reply(r);
    }
    if (!found->inline_data().empty()) {
      DFS_CO_AWAIT_CHECK(
          data_->write_full(data_pool(found->layout()), object_name(ino, 0), found->inline_data()));
    }
    proto::MdsLogEntry entry;
    *entry.mutable_uninline() = req;
    entry.set_expect_version(found->version());
    auto reply = co_await submit(std::move(entry));
    if (!reply && reply.error().code() == ErrorCode::kBusy && attempt < kMaxVersionRetries)
      continue;
    co_return reply;
  }
}

}  // namespace dfs::mds
