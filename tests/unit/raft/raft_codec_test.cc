// raft_codec: every message kind survives to_proto/from_proto (and the envelope) with
// every field; hostile input is refused with kProtocol, never a crash in the core.
#include <doctest/doctest.h>

#include "common/raft/raft_codec.h"

namespace dfs::raft {
namespace {

void check_same(const Message& a, const Message& b) {
  CHECK(a.type == b.type);
  CHECK(a.from == b.from);
  CHECK(a.to == b.to);
  CHECK(a.term == b.term);
  CHECK(a.index == b.index);
  CHECK(a.log_term == b.log_term);
  CHECK(a.entries == b.entries);
  CHECK(a.commit == b.commit);
  CHECK(a.reject == b.reject);
  CHECK(a.reject_hint == b.reject_hint);
  CHECK(a.context == b.context);
  CHECK(a.lease_round == b.lease_round);
  CHECK(a.transfer == b.transfer);
  CHECK(a.snapshot == b.snapshot);
  CHECK(a.offset == b.offset);
  CHECK(a.chunk == b.chunk);
  CHECK(a.last_chunk == b.last_chunk);
}

// A message of `type` with every field its kind uses set to something non-default.
Message sample(MessageType type) {
  Message m{.type = type, .from = 3, .to = 1, .term = 7, .index = 41, .log_term = 6,
            .commit = 40, .reject = true, .reject_hint = 39, .context = 99, .lease_round = 7,
            .transfer = true};
  if (type == MessageType::kAppend) {
    m.reject = false;
    m.entries.push_back(Entry{6, 42, EntryType::kNormal, std::string("a\0b", 3)});
    m.entries.push_back(Entry{7, 43, EntryType::kNoop, {}});
    m.entries.push_back(Entry{7, 44, EntryType::kConfChange, encode_conf_state({{1, 2, 3}})});
  }
  if (type == MessageType::kSnapshot || type == MessageType::kSnapshotResp) {
    m.snapshot = SnapshotMeta{30, 5, ConfState{{1, 3, 4}}};
    m.offset = 1 << 20;
    m.chunk = std::string(1000, 'x');
    m.last_chunk = true;
  }
  return m;
}

Status decode_error(const proto::RaftMessage& p) {
  Result<Message> m = from_proto(p);
  if (m) return ok_status();
  return m.error();
}

}  // namespace

TEST_CASE("raft/codec: every message kind round-trips, alone and in an envelope") {
  for (int t = 0; t <= static_cast<int>(MessageType::kTimeoutNow); ++t) {
    auto type = static_cast<MessageType>(t);
    INFO(message_type_name(type));
    Message m = sample(type);
    Result<Message> back = from_proto(to_proto(m));
    REQUIRE_MESSAGE(back.has_value(), back.error().to_string());
    check_same(m, *back);

    Result<Envelope> env = decode_envelope(encode_envelope(12, m));
    REQUIRE(env.has_value());
    CHECK(env->group == 12);
    check_same(m, env->message);
  }
}

TEST_CASE("raft/codec: malformed input is refused with a clear kProtocol error") {
  auto expect_protocol = [](const Status& st, const char* what) {
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().code() == ErrorCode::kProtocol);
    CHECK_MESSAGE(st.error().context().find(what) != std::string::npos, st.error().context());
  };
  proto::RaftMessage good = to_proto(sample(MessageType::kAppend));
  REQUIRE(decode_error(good).has_value());

  SUBCASE("bytes that are not a message") {
    Result<Envelope> env = decode_envelope("\xff\xff\xff\xff garbage");
    REQUIRE_FALSE(env.has_value());
    CHECK(env.error().code() == ErrorCode::kProtocol);
    CHECK_FALSE(decode_envelope("").has_value());  // no message at all
  }
  SUBCASE("unknown or missing message type") {
    proto::RaftMessage p = good;
    p.set_type(static_cast<proto::RaftMessageType>(0));
    expect_protocol(decode_error(p), "unknown message type");
    p.set_type(static_cast<proto::RaftMessageType>(77));
    expect_protocol(decode_error(p), "unknown message type");
  }
  SUBCASE("node id 0") {
    proto::RaftMessage p = good;
    p.set_from(0);
    expect_protocol(decode_error(p), "node id 0");
  }
  SUBCASE("entries that are not consecutive after index") {
    proto::RaftMessage p = good;
    p.mutable_entries(1)->set_index(50);
    expect_protocol(decode_error(p), "not consecutive");
  }
  SUBCASE("entry terms above the sender's or going down") {
    proto::RaftMessage p = good;
    p.mutable_entries(2)->set_term(8);
    expect_protocol(decode_error(p), "term out of order");
    p = good;
    p.mutable_entries(0)->set_term(5);  // below log_term 6
    expect_protocol(decode_error(p), "term out of order");
  }
  SUBCASE("entries in a message that is not an append") {
    proto::RaftMessage p = good;
    p.set_type(proto::RAFT_MSG_HEARTBEAT);
    expect_protocol(decode_error(p), "non-append");
  }
  SUBCASE("unknown entry type and undecodable configuration") {
    proto::RaftMessage p = good;
    p.mutable_entries(0)->set_type(static_cast<proto::RaftEntryType>(9));
    expect_protocol(decode_error(p), "unknown entry type");
    p = good;
    p.mutable_entries(2)->set_data("1234567");  // not a multiple of 8 bytes
    expect_protocol(decode_error(p), "configuration entry");
  }
  SUBCASE("snapshot voters unsorted, duplicated or zero") {
    proto::RaftMessage p = to_proto(sample(MessageType::kSnapshot));
    p.mutable_snapshot()->set_voters(0, 9);
    expect_protocol(decode_error(p), "voters");
    p.mutable_snapshot()->set_voters(0, 3);  // 3, 3, 4
    expect_protocol(decode_error(p), "voters");
    p.mutable_snapshot()->set_voters(0, 0);
    p.mutable_snapshot()->set_voters(1, 1);
    expect_protocol(decode_error(p), "voters");
  }
}

}  // namespace dfs::raft
