// The read-only ops: they read committed state from the store and change nothing, so
// they are not logged. They block only as long as their reader does (the MDS runs them
// on memory_reader() first). Inodes in lookup, getattr and readdir replies come without
// inline file data (up to the inline threshold per file, which a listing would multiply);
// an open's reply carries it.
#pragma once

#include "common/proto/mds.pb.h"
#include "mds/store/meta_store.h"

namespace dfs::mds {

// Errors: kNotFound (no such name), kStale (parent gone), kNotDirectory, kNameTooLong,
// kInvalidArgument.
Result<proto::InodeReply> op_lookup(const KvReader& kv, const proto::LookupRequest& req);
// Errors: kStale.
Result<proto::InodeReply> op_getattr(const KvReader& kv, const proto::GetAttrRequest& req);
// Errors: kStale, kInvalidArgument (not a symlink).
Result<proto::ReadlinkReply> op_readlink(const KvReader& kv, const proto::ReadlinkRequest& req);

// Entries after the cookie: "." (cookie 1), ".." (2), then the entries in slot order
// (cookie = slot). At most max_entries (1..4096, 0 means 512) and about
// `max_reply_bytes` of reply. Errors: kStale, kNotDirectory.
Result<proto::ReaddirReply> op_readdir(const KvReader& kv, const proto::ReaddirRequest& req,
                                       size_t max_reply_bytes = 2u << 20);

// Errors: kStale, kNoAttribute, kNotSupported.
Result<proto::GetXattrReply> op_getxattr(const KvReader& kv, const proto::GetXattrRequest& req);
// Errors: kStale.
Result<proto::ListXattrReply> op_listxattr(const KvReader& kv, const proto::ListXattrRequest& req);
// Counters of the store. Errors: kIoError, kCorruption.
Result<proto::StatFsMdsReply> op_statfs(const KvReader& kv);

}  // namespace dfs::mds
