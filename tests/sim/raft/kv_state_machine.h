// The simulation's replicated state machine: a string map with put, append and cas,
// applied from committed entries. Commands carry (client, seq); a retried command that
// was already applied returns the first result instead of applying again, which is
// what makes client retries safe. Snapshots serialize the map and that table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace dfs::raft::sim {

enum class KvCommandKind : uint8_t { kPut, kAppend, kCas };

struct KvCommand {
  uint32_t client = 0;
  uint64_t seq = 0;
  KvCommandKind kind = KvCommandKind::kPut;
  std::string key;
  std::string value;
  std::string expected;  // cas only
};

std::string encode_command(const KvCommand& cmd);
std::optional<KvCommand> decode_command(const std::string& bytes);

struct KvResult {
  bool cas_ok = false;
};

class KvStateMachine {
 public:
  // Applies `cmd` unless (client, seq) was applied already; returns the result of the
  // first application either way, or nullopt for a command older than the client's
  // latest (the client has moved on and nobody waits for it).
  std::optional<KvResult> apply(const KvCommand& cmd);
  // The cached result when (client, seq) is the client's latest applied command.
  std::optional<KvResult> applied_result(uint32_t client, uint64_t seq) const;

  std::string get(const std::string& key) const;
  std::string serialize() const;
  static std::optional<KvStateMachine> restore(const std::string& image);

 private:
  struct LastApplied {
    uint64_t seq = 0;
    KvResult result;
  };
  std::map<std::string, std::string> data_;
  std::map<uint32_t, LastApplied> sessions_;
};

}  // namespace dfs::raft::sim
