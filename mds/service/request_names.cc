#include "mds/service/request_names.h"

#include <optional>

#include "common/proto/mds.pb.h"
#include "common/proto/wire_fields.h"
#include "common/rpc/methods.h"

namespace dfs::mds {
namespace {

template <class Req>
std::optional<Req> parse_as(const std::string& body) {
  Req req;
  if (!req.ParseFromString(body)) return std::nullopt;
  return req;
}

// The inode in field number `field` of the request, into `inos`. Read in place: the
// request may carry an inline write's data, which a parse would copy.
void add(std::vector<uint64_t>& inos, const std::string& body, int field) {
  if (auto ino = proto::wire_varint(body, field)) inos.push_back(*ino);
}

}  // namespace

void RequestNames::parse() {
  if (parsed_) return;
  parsed_ = true;
  auto& t = inos_;
  switch (method_) {
    case rpc::kMdsLookup: add(t, body_, proto::LookupRequest::kParentFieldNumber); break;
    case rpc::kMdsGetAttr: add(t, body_, proto::GetAttrRequest::kInoFieldNumber); break;
    case rpc::kMdsSetAttr: add(t, body_, proto::SetAttrRequest::kInoFieldNumber); break;
    case rpc::kMdsReaddir: add(t, body_, proto::ReaddirRequest::kInoFieldNumber); break;
    case rpc::kMdsGetXattr: add(t, body_, proto::GetXattrRequest::kInoFieldNumber); break;
    case rpc::kMdsSetXattr: add(t, body_, proto::SetXattrRequest::kInoFieldNumber); break;
    case rpc::kMdsListXattr: add(t, body_, proto::ListXattrRequest::kInoFieldNumber); break;
    case rpc::kMdsRemoveXattr: add(t, body_, proto::RemoveXattrRequest::kInoFieldNumber); break;
    // A file's data: another session reads and writes it only between an open and a
    // release, and its open recalls the file, but nothing it sends about the file
    // should meet an owner's buffered writes.
    case rpc::kMdsOpen: add(t, body_, proto::OpenRequest::kInoFieldNumber); break;
    case rpc::kMdsWriteInline: add(t, body_, proto::WriteInlineRequest::kInoFieldNumber); break;
    case rpc::kMdsCommitWrite: add(t, body_, proto::CommitWriteRequest::kInoFieldNumber); break;
    case rpc::kMdsUninline: add(t, body_, proto::UninlineRequest::kInoFieldNumber); break;
    case rpc::kMdsMknod: add(t, body_, proto::MknodRequest::kParentFieldNumber); break;
    case rpc::kMdsSymlink: add(t, body_, proto::SymlinkRequest::kParentFieldNumber); break;
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
