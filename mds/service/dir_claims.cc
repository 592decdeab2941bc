// Which owned inodes a request touches (docs/capabilities.md, "Directory rights" and
// "File rights"), so that handle() recalls them from their owners before serving it:
// the inodes it names, the entries it names (an unlink or rename acts on the inode a
// name holds), and, for lookups and listings with attributes, the inodes its answer
// shows.
#include <sys/stat.h>

#include "common/rpc/methods.h"
#include "mds/ops/meta_view.h"
#include "mds/service/mds_service.h"

namespace dfs::mds {
namespace {

struct Touched {
  std::vector<uint64_t> inos;
  std::vector<std::pair<uint64_t, std::string>> names;  // (directory, name)
};

template <class Req>
std::optional<Req> parse(const std::string& body) {
  Req req;
  if (!req.ParseFromString(body)) return std::nullopt;
  return req;
}

// The inode field `field` of a request of type Req, into `t`.
template <class Req>
void add(Touched& t, const std::string& body, uint64_t (Req::*field)() const) {
  if (auto r = parse<Req>(body)) t.inos.push_back(((*r).*field)());
}

// What a request names. A malformed body names nothing: dispatch refuses it.
Touched touched_by(uint32_t method, const std::string& body) {
  Touched t;
  switch (method) {
    case rpc::kMdsLookup: add(t, body, &proto::LookupRequest::parent); break;
    case rpc::kMdsGetAttr: add(t, body, &proto::GetAttrRequest::ino); break;
    case rpc::kMdsSetAttr: add(t, body, &proto::SetAttrRequest::ino); break;
    case rpc::kMdsReaddir: add(t, body, &proto::ReaddirRequest::ino); break;
    case rpc::kMdsGetXattr: add(t, body, &proto::GetXattrRequest::ino); break;
    case rpc::kMdsSetXattr: add(t, body, &proto::SetXattrRequest::ino); break;
    case rpc::kMdsListXattr: add(t, body, &proto::ListXattrRequest::ino); break;
    case rpc::kMdsRemoveXattr: add(t, body, &proto::RemoveXattrRequest::ino); break;
    // A file's data: another session reads and writes it only between an open and a
    // release, and its open recalls the file, but nothing it sends about the file
    // should meet an owner's buffered writes.
    case rpc::kMdsOpen: add(t, body, &proto::OpenRequest::ino); break;
    case rpc::kMdsWriteInline: add(t, body, &proto::WriteInlineRequest::ino); break;
    case rpc::kMdsCommitWrite: add(t, body, &proto::CommitWriteRequest::ino); break;
    case rpc::kMdsUninline: add(t, body, &proto::UninlineRequest::ino); break;
    case rpc::kMdsMknod: add(t, body, &proto::MknodRequest::parent); break;
    case rpc::kMdsSymlink: add(t, body, &proto::SymlinkRequest::parent); break;
    case rpc::kMdsLink:
      if (auto r = parse<proto::LinkRequest>(body)) {
        t.inos.push_back(r->ino());
        t.inos.push_back(r->new_parent());
      }
      break;
    case rpc::kMdsUnlink:
      if (auto r = parse<proto::UnlinkRequest>(body)) {
        t.inos.push_back(r->parent());
        t.names.emplace_back(r->parent(), r->name());
      }
      break;
    case rpc::kMdsRename:
      if (auto r = parse<proto::RenameRequest>(body)) {
        t.inos.push_back(r->parent());
        t.inos.push_back(r->new_parent());
        t.names.emplace_back(r->parent(), r->name());
        t.names.emplace_back(r->new_parent(), r->new_name());
      }
      break;
    default:
      break;  // releases, locks, sessions: nothing a right covers
  }
  return t;
}

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

uint64_t MdsService::inode_changed(uint32_t method, const std::string& body) {
  switch (method) {
    case rpc::kMdsSetAttr:
    case rpc::kMdsSetXattr:
    case rpc::kMdsRemoveXattr:
    case rpc::kMdsLink:
    case rpc::kMdsWriteInline:
    case rpc::kMdsCommitWrite:
    case rpc::kMdsUninline: {
      Touched t = touched_by(method, body);
      return t.inos.empty() ? 0 : t.inos.front();  // a link names the inode first
    }
    default:
      return 0;
  }
}

awaitable<std::vector<uint64_t>> MdsService::touched_inos(const std::string& client,
                                                           uint32_t method,
                                                           const std::string& body) {
  if (!dir_rights_.others_own_any(client)) co_return std::vector<uint64_t>{};
  Touched t = touched_by(method, body);
  for (const auto& [dir, name] : t.names) {
    // The entry's inode: from memory here, else from the disk on the pool.
    auto find = [this, dir = dir, name = name](const KvReader& kv) {
      return find_dentry(kv, dir, name);
    };
    auto found = find(store_->memory_reader());
    if (!found && found.error().code() == ErrorCode::kWouldBlock) {
      found = co_await run_blocking(blocking_, [&find, this] { return find(*store_); });
    }
    if (found && *found) t.inos.push_back((*found)->ino);
  }
  co_return std::move(t.inos);
}

void MdsService::note_dirs_used(const std::string& client, uint32_t method,
                                const std::string& body) {
  if (dir_rights_.owned_by(client) == 0) return;
  for (uint64_t ino : touched_by(method, body).inos) dir_rights_.used(client, ino);
}

awaitable<void> MdsService::claim_touched(const std::string& client, uint32_t method,
                                          const std::string& body) {
  auto inos = co_await touched_inos(client, method, body);
  if (!dir_rights_.conflicts(client, inos)) co_return;
  co_await dir_rights_.claim(client, std::move(inos), claim_reason(client, method));
}

awaitable<bool> MdsService::touches_claimed(const std::string& client, uint32_t method,
                                            const std::string& body) {
  auto inos = co_await touched_inos(client, method, body);
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
