// Which owned inodes a request touches (docs/capabilities.md, "Directory rights" and
// "File rights"), so that handle() recalls them from their owners before serving it:
// the inodes it names, the entries it names (an unlink or rename acts on the inode a
// name holds), and, for lookups and listings with attributes, the inodes its answer
// shows; the inodes a request changes, whose read shares go first; and the shares a
// lookup or getattr gives ("Read shares").
#include <sys/stat.h>

#include "common/rpc/methods.h"
#include "mds/ops/meta_view.h"
#include "mds/service/mds_service.h"
#include "mds/service/request_names.h"

namespace dfs::mds {
namespace {

// The inodes an answer shows with their attributes: an owner's buffered writes and
// deferred changes would be missing from them.
std::vector<uint64_t> inos_shown(uint32_t method, const std::string& body) {
  std::vector<uint64_t> inos;
  if (method == rpc::kMdsLookup) {
    proto::InodeReply reply;
    if (reply.ParseFromString(body)) inos.push_back(reply.inode().ino());
  } else if (method == rpc::kMdsReaddir) {
    proto::ReaddirReply reply;
    if (reply.ParseFromString(body)) {
      for (const auto& e : reply.entries()) {
        if (e.has_inode()) inos.push_back(e.inode().ino());
      }
    }
  }
  return inos;
}

// For the owner's log and ours: what the other mount did.
std::string claim_reason(const std::string& client, uint32_t method) {
  const char* what = nullptr;
  switch (method) {
    case rpc::kMdsLookup: what = "lookup"; break;
    case rpc::kMdsGetAttr: what = "getattr"; break;
    case rpc::kMdsSetAttr: what = "setattr"; break;
    case rpc::kMdsReaddir: what = "listing"; break;
    case rpc::kMdsMknod: what = "create"; break;
    case rpc::kMdsSymlink: what = "symlink"; break;
    case rpc::kMdsLink: what = "link"; break;
    case rpc::kMdsUnlink: what = "unlink"; break;
    case rpc::kMdsRename: what = "rename"; break;
    case rpc::kMdsOpen: what = "open"; break;
    case rpc::kMdsWriteInline:
    case rpc::kMdsCommitWrite:
    case rpc::kMdsUninline: what = "write"; break;
    default: what = "xattr request"; break;
  }
  return std::string("a ") + what + " of " + client;
}

}  // namespace

awaitable<std::vector<uint64_t>> MdsService::entry_inos(RequestNames& names) {
  std::vector<uint64_t> inos;
  for (const auto& [dir, name] : names.entries()) {
    // The entry's inode: from memory here, else from the disk on the pool.
    auto find = [this, dir = dir, name = name](const KvReader& kv) {
      return find_dentry(kv, dir, name);
    };
    auto found = find(committer_.projected_view(store_->memory_reader()));
    if (!found && found.error().code() == ErrorCode::kWouldBlock) {
      co_await groups_settled();
      found = co_await run_blocking(blocking_, [&find, this] { return find(*store_); });
    }
    if (found && *found) inos.push_back((*found)->ino);
  }
  co_return inos;
}

awaitable<MdsService::Touched> MdsService::touched(const std::string& client,
                                                   RequestNames& names,
                                                   ChangesInFlight::Counted& change) {
  Touched out;
  std::vector<uint64_t>& entries = out.entries;
  if (!names.entries().empty()) {
    // Resolved whether or not anybody holds anything now: a share given while this
    // request waits must not be read before its change lands.
    entries = co_await entry_inos(names);
    for (uint64_t ino : entries) change.add(ino);
  }
  std::vector<uint64_t> changed = names.changed_inos();
  changed.insert(changed.end(), entries.begin(), entries.end());
  for (uint64_t ino : changed) {
    if (dir_rights_.shared_by_others(client, ino)) out.shared.push_back(ino);
  }
  if (dir_rights_.others_own_any(client)) {
    out.owned = names.inos();
    out.owned.insert(out.owned.end(), entries.begin(), entries.end());
    if (!dir_rights_.conflicts(client, out.owned)) out.owned.clear();
  }
  co_return out;
}

void MdsService::note_dirs_used(const std::string& client, RequestNames& names) {
  if (dir_rights_.owned_by(client) == 0) return;
  for (uint64_t ino : names.inos()) dir_rights_.used(client, ino);
}

awaitable<void> MdsService::claim_touched(const std::string& client, RequestNames& names,
                                          ChangesInFlight::Counted& change) {
  // A few rounds at most: each one's wait lets other requests move names.
  for (int round = 0; round < 4; ++round) {
    Touched touches = co_await touched(client, names, change);
    if (!touches.any()) co_return;
    if (!touches.shared.empty()) {
      // What others keep of the inodes it changes goes first.
      co_await dir_rights_.claim_shares(client, std::move(touches.shared),
                                        claim_reason(client, names.method()));
    }
    if (!touches.owned.empty()) {
      co_await dir_rights_.claim(client, std::move(touches.owned),
                                 claim_reason(client, names.method()));
    }
    if (!serving_ || names.entries().empty()) co_return;
    // While it waited, another rename may have put another inode under a name it
    // removes or replaces: that one goes too.
    if (co_await entry_inos(names) == touches.entries) co_return;
  }
}

awaitable<void> MdsService::claim_for_writer(const std::string& client, uint64_t ino) {
  dir_rights_.unshare(client, ino);
  if (!dir_rights_.shared_by_others(client, ino)) co_return;
  std::vector<uint64_t> file{ino};
  co_await dir_rights_.claim_shares(client, std::move(file), "an open for writing of " + client);
}

void MdsService::grant_share(const std::string& client, Reply& reply, uint64_t changes_before) {
  proto::InodeReply answer;
  if (!reply || !answer.ParseFromString(reply->body)) return;
  const proto::Inode& inode = answer.inode();
  const uint64_t ino = inode.ino();
  // Not again right after a recall (kShareHoldOff) unless the asker holds it still.
  if (ino == 0 || inode.nlink() == 0 ||
      !may_share(client, ino, changes_before, /*opening=*/false) ||
      (!dir_rights_.shares(client, ino) &&
       dir_rights_.recalled_within(ino, DirRights::kShareHoldOff)) ||
      !dir_rights_.shared(client, ino)) {
    return;
  }
  answer.set_read_shared(true);
  reply->body = answer.SerializeAsString();
}

awaitable<MdsService::Reply> MdsService::read_claimed(const std::string& client, uint32_t method,
                                                      std::string body, bool in_batch) {
  auto reply = co_await dispatch(method, body, client);
  // An answer showing an inode someone else owns is read again once the owner has
  // pushed what it changed there. Rarely more than once: a recalled inode stays shared.
  for (int round = 0; round < 3 && reply && dir_rights_.others_own_any(client); ++round) {
    auto inos = inos_shown(method, reply->body);
    if (!dir_rights_.conflicts(client, inos)) break;
    if (in_batch) {
      co_return make_error(ErrorCode::kWouldBlock,
                           "waits for a recall of directory rights: send it alone");
    }
    co_await dir_rights_.claim(client, std::move(inos), claim_reason(client, method));
    if (!serving_) co_return unexpected(standby_error());
    reply = co_await dispatch(method, body, client);
  }
  co_return reply;
}

}  // namespace dfs::mds
