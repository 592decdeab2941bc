#include "common/raft/raft_codec.h"

#include <algorithm>

namespace dfs::raft {
namespace {

// The proto enum is numbered from 1 (0 = unset); the core's from 0.
proto::RaftMessageType type_to_proto(MessageType t) {
  return static_cast<proto::RaftMessageType>(static_cast<int>(t) + 1);
}

std::optional<MessageType> type_from_proto(int t) {
  int core = t - 1;
  if (core < static_cast<int>(MessageType::kPreVote) ||
      core > static_cast<int>(MessageType::kTimeoutNow)) {
    return std::nullopt;
  }
  return static_cast<MessageType>(core);
}

Unexpected malformed(const std::string& what) {
  return make_error(ErrorCode::kProtocol, "malformed raft message: " + what);
}

Result<Entry> entry_from_proto(const proto::RaftEntry& p) {
  int type = p.type();
  if (type < 0 || type > static_cast<int>(EntryType::kConfChange)) {
    return malformed("unknown entry type " + std::to_string(type));
  }
  Entry e{p.term(), p.index(), static_cast<EntryType>(type), p.data()};
  if (e.type == EntryType::kConfChange) {
    std::optional<ConfState> conf = decode_conf_state(e.data);
    if (!conf || std::adjacent_find(conf->voters.begin(), conf->voters.end()) !=
                     conf->voters.end()) {
      return malformed("undecodable configuration entry at " + std::to_string(e.index));
    }
  }
  return e;
}

Status check_entries(const Message& m) {
  if (m.entries.empty()) return ok_status();
  if (m.type != MessageType::kAppend) return malformed("entries in a non-append message");
  Term prev_term = m.log_term;
  for (size_t i = 0; i < m.entries.size(); ++i) {
    const Entry& e = m.entries[i];
    if (e.index != m.index + 1 + i) return malformed("entries not consecutive after index");
    // A leader's log never holds a term above its own, and terms never go down.
    if (e.term > m.term || e.term < prev_term) return malformed("entry term out of order");
    prev_term = e.term;
  }
  return ok_status();
}

}  // namespace

proto::RaftMessage to_proto(const Message& m) {
  proto::RaftMessage p;
  p.set_type(type_to_proto(m.type));
  p.set_from(m.from);
  p.set_to(m.to);
  p.set_term(m.term);
  p.set_index(m.index);
  p.set_log_term(m.log_term);
  for (const Entry& e : m.entries) {
    proto::RaftEntry* pe = p.add_entries();
    pe->set_term(e.term);
    pe->set_index(e.index);
    pe->set_type(static_cast<proto::RaftEntryType>(e.type));
    pe->set_data(e.data);
  }
  p.set_commit(m.commit);
  p.set_reject(m.reject);
  p.set_reject_hint(m.reject_hint);
  p.set_context(m.context);
  p.set_lease_round(m.lease_round);
  p.set_transfer(m.transfer);
  if (m.snapshot != SnapshotMeta{}) {
    proto::RaftSnapshotMeta* s = p.mutable_snapshot();
    s->set_index(m.snapshot.index);
    s->set_term(m.snapshot.term);
    for (NodeId v : m.snapshot.conf.voters) s->add_voters(v);
  }
  p.set_offset(m.offset);
  p.set_chunk(m.chunk);
  p.set_last_chunk(m.last_chunk);
  return p;
}

Result<Message> from_proto(const proto::RaftMessage& p) {
  std::optional<MessageType> type = type_from_proto(p.type());
  if (!type) return malformed("unknown message type " + std::to_string(p.type()));
  if (p.from() == kNoNode || p.to() == kNoNode) return malformed("node id 0");
  Message m{.type = *type,
            .from = p.from(),
            .to = p.to(),
            .term = p.term(),
            .index = p.index(),
            .log_term = p.log_term(),
            .commit = p.commit(),
            .reject = p.reject(),
            .reject_hint = p.reject_hint(),
            .context = p.context(),
            .lease_round = p.lease_round(),
            .transfer = p.transfer()};
  m.entries.reserve(p.entries_size());
  for (const proto::RaftEntry& pe : p.entries()) {
    Result<Entry> e = entry_from_proto(pe);
    if (!e) return e.error();
    m.entries.push_back(std::move(*e));
  }
  DFS_TRY_STATUS(check_entries(m));
  if (p.has_snapshot()) {
    m.snapshot.index = p.snapshot().index();
    m.snapshot.term = p.snapshot().term();
    m.snapshot.conf.voters.assign(p.snapshot().voters().begin(), p.snapshot().voters().end());
    const auto& v = m.snapshot.conf.voters;
    bool sorted_unique = std::adjacent_find(v.begin(), v.end(), std::greater_equal<>()) == v.end();
    if (!sorted_unique || std::count(v.begin(), v.end(), kNoNode) > 0) {
      return malformed("snapshot voters not sorted, unique and non-zero");
    }
  }
  m.offset = p.offset();
  m.chunk = p.chunk();
  m.last_chunk = p.last_chunk();
  if (m.offset + m.chunk.size() < m.offset) return malformed("snapshot chunk offset overflows");
  return m;
}

std::string encode_envelope(uint64_t group, const Message& m) {
  proto::RaftEnvelope env;
  env.set_group(group);
  *env.mutable_message() = to_proto(m);
  return env.SerializeAsString();
}

Result<Envelope> decode_envelope(std::string_view bytes) {
  proto::RaftEnvelope env;
  if (!env.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return make_error(ErrorCode::kProtocol, "malformed raft envelope: unparsable");
  }
  if (!env.has_message()) return make_error(ErrorCode::kProtocol, "raft envelope without message");
  Result<Message> m = from_proto(env.message());
  if (!m) return m.error();
  return Envelope{env.group(), std::move(*m)};
}

}  // namespace dfs::raft
