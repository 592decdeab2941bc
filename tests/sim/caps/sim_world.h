// The world the capability simulation runs in: what clients do with rights (three
// domains of state per inode), the storage that holds the truth and enforces the fence,
// the extra messages of the simulated RPCs, and a seeded lossy network.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <variant>
#include <vector>

#include "common/caps/messages.h"
#include "common/status/status.h"

namespace dfs::caps::sim {

// Each right protects one domain of an inode's state. A domain has a cache right, an
// exclusive (buffering) right, and a synchronous path: data is read with Fr and written
// with Fw on the OSDs; attributes and entries change through an MDS mutation.
enum class Domain : uint8_t { kAttr, kData, kDir };
inline constexpr int kDomains = 3;
const char* domain_name(Domain d);

struct DomainRights {
  Rights cache;  // As, Fc, Ds
  Rights excl;   // Ax, Fb, Dx
  Rights read;   // Fr for data; none (ask the MDS) otherwise
  Rights write;  // Fw for data; none (an MDS mutation) otherwise
};
DomainRights rights_of(Domain d);
bool domain_of_kind(Domain d, InodeKind kind);

struct InodeInfo {
  Ino ino = 0;
  InodeKind kind = InodeKind::kFile;
};

// The simulated RPCs around the protocol: a lease answer, a synchronous mutation.
struct LeaseReply {
  ErrorCode code = ErrorCode::kOk;
  TimeMs sent_at = 0;
  TimeMs lease_ms = 0;
  uint32_t incarnation = 0;
};
struct MutateRequest {
  uint64_t req_id = 0;
  Ino ino = 0;
  InodeKind kind = InodeKind::kFile;
  Domain domain = Domain::kAttr;
};
struct MutateDone {
  uint64_t req_id = 0;
};
using ToMds = std::variant<ClientMessage, MutateRequest>;
using ToClient = std::variant<MdsMessage, LeaseReply, MutateDone>;

// The truth: a version per (inode, domain), bumped by every accepted write, and the
// fence (the evictions the MDS published; the OSDs and the MDS refuse those sessions).
class SimStorage {
 public:
  uint64_t read(Ino ino, Domain d) const;
  // False (refused, counted) when `s` is fenced.
  bool write(SessionId s, Ino ino, Domain d);
  void fence(SessionId s) { fenced_.insert(s); }
  bool fenced(SessionId s) const { return fenced_.count(s) != 0; }
  uint64_t refused() const { return refused_; }

 private:
  std::map<Ino, std::array<uint64_t, kDomains>> versions_;
  std::set<SessionId> fenced_;
  uint64_t refused_ = 0;
};

struct Delivery {
  TimeMs at = 0;
  uint64_t order = 0;  // send order breaks ties: deterministic
  bool to_mds = false;
  SessionId session = 0;     // sender (to the MDS) or addressee (to a client)
  uint32_t incarnation = 0;  // the MDS instance that sent it or that it was sent to
  ToMds up;
  ToClient down;
};

struct NetworkFaults {
  double loss = 0;
  double duplicate = 0;
  TimeMs max_delay_ms = 10;
  double late = 0;  // probability of a much longer delay (reordering)
  TimeMs late_max_ms = 0;
};

// Delays, reorders, duplicates and drops messages as `faults` says; all from the seed.
class SimNetwork {
 public:
  explicit SimNetwork(std::mt19937_64& rng) : rng_(rng) {}
  void set_faults(const NetworkFaults& f) { faults_ = f; }
  void send(TimeMs now, Delivery d);
  // The next delivery due at or before `now`, in (time, send order).
  std::optional<Delivery> pop_due(TimeMs now);
  uint64_t sent() const { return next_order_; }

 private:
  std::mt19937_64& rng_;
  NetworkFaults faults_;
  std::map<std::pair<TimeMs, uint64_t>, Delivery> queue_;  // by (time, send order)
  uint64_t next_order_ = 0;
};

}  // namespace dfs::caps::sim
