#include "tests/sim/raft/kv_state_machine.h"

namespace dfs::raft::sim {
namespace {

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_str(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

struct Reader {
  const std::string& in;
  size_t pos = 0;
  bool ok = true;
  uint64_t u64() {
    if (pos + 8 > in.size()) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in[pos + i])) << (8 * i);
    pos += 8;
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    if (!ok || pos + n > in.size()) {
      ok = false;
      return {};
    }
    std::string s = in.substr(pos, n);
    pos += n;
    return s;
  }
};

}  // namespace

std::string encode_command(const KvCommand& cmd) {
  std::string out;
  put_u64(out, cmd.client);
  put_u64(out, cmd.seq);
  put_u64(out, static_cast<uint64_t>(cmd.kind));
  put_str(out, cmd.key);
  put_str(out, cmd.value);
  put_str(out, cmd.expected);
  return out;
}

std::optional<KvCommand> decode_command(const std::string& bytes) {
  Reader r{bytes};
  KvCommand cmd;
  cmd.client = static_cast<uint32_t>(r.u64());
  cmd.seq = r.u64();
  cmd.kind = static_cast<KvCommandKind>(r.u64());
  cmd.key = r.str();
  cmd.value = r.str();
  cmd.expected = r.str();
  if (!r.ok || r.pos != bytes.size()) return std::nullopt;
  return cmd;
}

std::optional<KvResult> KvStateMachine::apply(const KvCommand& cmd) {
  LastApplied& session = sessions_[cmd.client];
  if (cmd.seq < session.seq) return std::nullopt;
  if (cmd.seq == session.seq) return session.result;
  KvResult result;
  std::string& value = data_[cmd.key];
  switch (cmd.kind) {
    case KvCommandKind::kPut: value = cmd.value; break;
    case KvCommandKind::kAppend: value += cmd.value; break;
    case KvCommandKind::kCas:
      result.cas_ok = value == cmd.expected;
      if (result.cas_ok) value = cmd.value;
      break;
  }
  session = LastApplied{cmd.seq, result};
  return result;
}

std::optional<KvResult> KvStateMachine::applied_result(uint32_t client, uint64_t seq) const {
  auto it = sessions_.find(client);
  if (it == sessions_.end() || it->second.seq != seq) return std::nullopt;
  return it->second.result;
}

std::string KvStateMachine::get(const std::string& key) const {
  auto it = data_.find(key);
  return it == data_.end() ? std::string() : it->second;
}

std::string KvStateMachine::serialize() const {
  std::string out;
  put_u64(out, data_.size());
  for (const auto& [k, v] : data_) {
    put_str(out, k);
    put_str(out, v);
  }
  put_u64(out, sessions_.size());
  for (const auto& [client, s] : sessions_) {
    put_u64(out, client);
    put_u64(out, s.seq);
    put_u64(out, s.result.cas_ok ? 1 : 0);
  }
  return out;
}

std::optional<KvStateMachine> KvStateMachine::restore(const std::string& image) {
  KvStateMachine kv;
  if (image.empty()) return kv;  // the initial, empty snapshot
  Reader r{image};
  uint64_t n = r.u64();
  for (uint64_t i = 0; r.ok && i < n; ++i) {
    std::string k = r.str();
    kv.data_[k] = r.str();
  }
  uint64_t m = r.u64();
  for (uint64_t i = 0; r.ok && i < m; ++i) {
    uint32_t client = static_cast<uint32_t>(r.u64());
    uint64_t seq = r.u64();
    kv.sessions_[client] = LastApplied{seq, KvResult{r.u64() == 1}};
  }
  if (!r.ok || r.pos != image.size()) return std::nullopt;
  return kv;
}

}  // namespace dfs::raft::sim
