#include "mds/service/request_names.h"

#include <optional>

#include "common/proto/mds.pb.h"
#include "common/rpc/methods.h"

namespace dfs::mds {
namespace {

template <class Req>
std::optional<Req> parse_as(const std::string& body) {
  Req req;
  if (!req.ParseFromString(body)) return std::nullopt;
  return req;
}

// The inode field `field` of a request of type Req, into `inos`.
template <class Req>
void add(std::vector<uint64_t>& inos, const std::string& body, uint64_t (Req::*field)() const) {
  if (auto r = parse_as<Req>(body)) inos.push_back(((*r).*field)());
}

}  // namespace

void RequestNames::parse() {
  if (parsed_) return;
  parsed_ = true;
  auto& t = inos_;
  switch (method_) {
    case rpc::kMdsLookup: add(t, body_, &proto::LookupRequest::parent); break;
    case rpc::kMdsGetAttr: add(t, body_, &proto::GetAttrRequest::ino); break;
    case rpc::kMdsSetAttr: add(t, body_, &proto::SetAttrRequest::ino); break;
    case rpc::kMdsReaddir: add(t, body_, &proto::ReaddirRequest::ino); break;
    case rpc::kMdsGetXattr: add(t, body_, &proto::GetXattrRequest::ino); break;
    case rpc::kMdsSetXattr: add(t, body_, &proto::SetXattrRequest::ino); break;
    case rpc::kMdsListXattr: add(t, body_, &proto::ListXattrRequest::ino); break;
    case rpc::kMdsRemoveXattr: add(t, body_, &proto::RemoveXattrRequest::ino); break;
    // A file's data: another session reads and writes it only between an open and a
    // release, and its open recalls the file, but nothing it sends about the file
    // should meet an owner's buffered writes.
    case rpc::kMdsOpen: add(t, body_, &proto::OpenRequest::ino); break;
    case rpc::kMdsWriteInline: add(t, body_, &proto::WriteInlineRequest::ino); break;
    case rpc::kMdsCommitWrite: add(t, body_, &proto::CommitWriteRequest::ino); break;
    case rpc::kMdsUninline: add(t, body_, &proto::UninlineRequest::ino); break;
    case rpc::kMdsMknod: add(t, body_, &proto::MknodRequest::parent); break;
    case rpc::kMdsSymlink: add(t, body_, &proto::SymlinkRequest::parent); break;
    case rpc::kMdsLink:
      if (auto r = parse_as<proto::LinkRequest>(body_)) {
        t.push_back(r->ino());
        t.push_back(r->new_parent());
      }
      break;
    case rpc::kMdsUnlink:
      if (auto r = parse_as<proto::UnlinkRequest>(body_)) {
        t.push_back(r->parent());
        entries_.emplace_back(r->parent(), r->name());
      }
      break;
    case rpc::kMdsRename:
      if (auto r = parse_as<proto::RenameRequest>(body_)) {
        t.push_back(r->parent());
        t.push_back(r->new_parent());
        entries_.emplace_back(r->parent(), r->name());
        entries_.emplace_back(r->new_parent(), r->new_name());
      }
      break;
    default:
      break;  // releases, locks, sessions: nothing a right covers
  }
}

uint64_t RequestNames::changed_ino() {
  switch (method_) {
    case rpc::kMdsSetAttr:
    case rpc::kMdsSetXattr:
    case rpc::kMdsRemoveXattr:
    case rpc::kMdsLink:
    case rpc::kMdsWriteInline:
    case rpc::kMdsCommitWrite:
    case rpc::kMdsUninline:
      return inos().empty() ? 0 : inos().front();  // a link names the inode first
    default:
      return 0;
  }
}

std::vector<uint64_t> RequestNames::changed_inos() {
  switch (method_) {
    case rpc::kMdsMknod:
    case rpc::kMdsSymlink:
    case rpc::kMdsLink:    // the inode and its new parent
    case rpc::kMdsUnlink:  // the parent
    case rpc::kMdsRename:  // both parents
      return inos();
    default:
      if (uint64_t ino = changed_ino()) return {ino};
      return {};
  }
}

}  // namespace dfs::mds
