// Wire encoding of raft::Message as proto::RaftMessage (common/proto/raft.proto).
// Pure functions. Decoding treats its input as hostile: the core aborts on a broken
// invariant (non-consecutive entries, an undecodable configuration entry), so every
// structural property it relies on is checked here before a message reaches step().
#pragma once

#include <string>
#include <string_view>

#include "common/proto/raft.pb.h"
#include "common/raft/message.h"
#include "common/status/status.h"

namespace dfs::raft {

proto::RaftMessage to_proto(const Message& m);

// Errors: kProtocol naming what is wrong (unknown message or entry type, node id 0,
// entries not consecutive after `index` or above the message's term, an undecodable
// configuration entry, unsorted snapshot voters, entries in a non-append message).
Result<Message> from_proto(const proto::RaftMessage& p);

// Envelope helpers for method kRaftMessage: serialize / parse and validate.
std::string encode_envelope(uint64_t group, const Message& m);
struct Envelope {
  uint64_t group = 0;
  Message message;
};
// Errors: kProtocol (unparsable bytes or an invalid message, as from_proto).
Result<Envelope> decode_envelope(std::string_view bytes);

}  // namespace dfs::raft
