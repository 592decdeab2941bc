// Which owned inodes a request touches (docs/capabilities.md, "Directory rights" and
// "File rights"), so that handle() recalls them from their owners before serving it:
// the inodes it names, the entries it names (an unlink or rename acts on the inode a
// name holds), and, for lookups and listings with attributes, the inodes its answer
// shows; and the file whose data a request changes, whose read shares go first ("Read
// shares").
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

awaitable<std::vector<uint64_t>> MdsService::touched_inos(const std::string& client,
                                                           RequestNames& names) {
  if (!dir_rights_.others_own_any(client)) co_return std::vector<uint64_t>{};
  std::vector<uint64_t> inos = names.inos();
  for (const auto& [dir, name] : names.entries()) {
    // The entry's inode: from memory here, else from the disk on the pool.
    auto find = [this, dir = dir, name = name](const KvReader& kv) {
      return find_dentry(kv, dir, name);
    };
    auto found = find(store_->memory_reader());
    if (!found && found.error().code() == ErrorCode::kWouldBlock) {
      found = co_await run_blocking(blocking_, [&find, this] { return find(*store_); });
    }
    if (found && *found) inos.push_back((*found)->ino);
  }
  co_return inos;
}

void MdsService::note_dirs_used(const std::string& client, RequestNames& names) {
  if (dir_rights_.owned_by(client) == 0) return;
  for (uint64_t ino : names.inos()) dir_rights_.used(client, ino);
}

awaitable<void> MdsService::claim_touched(const std::string& client, RequestNames& names) {
  // A change of a file's data or size: the pages others keep of it go first.
  if (uint64_t file = names.changed_data_ino();
      file != 0 && dir_rights_.shared_by_others(client, file)) {
    co_await dir_rights_.claim_shares(client, file, claim_reason(client, names.method()));
  }
  auto inos = co_await touched_inos(client, names);
  if (!dir_rights_.conflicts(client, inos)) co_return;
  co_await dir_rights_.claim(client, std::move(inos), claim_reason(client, names.method()));
}

awaitable<bool> MdsService::touches_claimed(const std::string& client, RequestNames& names) {
  if (uint64_t file = names.changed_data_ino();
      file != 0 && dir_rights_.shared_by_others(client, file)) {
    co_return true;
  }
  auto inos = co_await touched_inos(client, names);
  co_return dir_rights_.conflicts(client, inos);
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
