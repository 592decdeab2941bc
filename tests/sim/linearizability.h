// A linearizability checker for client histories of a replicated key-value store, for
// the seeded simulations: they record what each client invoked and saw, then ask whether
// some order of the operations, consistent with real time, explains every result.
// Pure and single-threaded; no Env, since it only reads a finished history.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dfs::sim {

// The model: a map from string keys to string values; an absent key reads as "".
enum class KvOpKind {
  kPut,     // value_of(key) = value
  kGet,     // output = value_of(key)
  kAppend,  // value_of(key) += value
  kCas,     // if value_of(key) == expected { value_of(key) = value; cas_ok = true }
};

// One client operation. Times are virtual and only compared: `a` precedes `b` in real
// time iff a.ret < b.invoke, so operations that touch at one instant count as concurrent.
struct KvOperation {
  uint32_t client = 0;
  std::string key;
  KvOpKind kind = KvOpKind::kGet;
  std::string value;     // put: the new value; append: the suffix; cas: the new value
  std::string expected;  // cas only
  std::string output;    // get only: the value read
  bool cas_ok = false;   // cas only: whether it swapped
  // The client gave up waiting (timeout, lost reply): the operation may take effect once
  // at any time after `invoke`, or never. `ret`, `output` and `cas_ok` are then ignored.
  bool unknown_outcome = false;
  uint64_t invoke = 0;
  uint64_t ret = 0;  // Requires: ret >= invoke unless unknown_outcome
};

struct LinearizabilityResult {
  enum Verdict {
    kLinearizable,
    // `explanation` names the key, the furthest order found and the window of ops
    // (invoked by then, not yet ordered) none of which can come next.
    kNotLinearizable,
    kTimedOut,        // the step budget ran out on some key before an answer
    kInvalidHistory,  // a known-outcome op returns before it is invoked
  };
  Verdict verdict = kLinearizable;
  std::string explanation;  // empty when linearizable; printable, several lines
};

// A plain history needs a few steps per operation. Steps take tens of nanoseconds and the
// memo adds at most 48 bytes a step (about 13 in practice), so the default bounds a key
// to about half a second and at most a few hundred MB.
inline constexpr uint64_t kDefaultStepBudget = 10'000'000;

// How a key with unknown outcomes is searched: by default an eager search good at finding
// an order, then, if it ran out of budget, a canonical one good at proving there is none
// (see Strategy in the .cc). Tests pin one to check it alone.
enum class KvSearchPlan { kEagerThenCanonical, kEagerOnly, kCanonicalOnly };

// Decides whether `history` is linearizable against the model above. Keys are
// independent, so each key's operations are checked alone (Wing & Gong / Lowe search,
// memoised on (set of ops placed, value) as Porcupine does), in key order. The first key
// found not linearizable decides the verdict, even if another key timed out. `step_budget`
// bounds the search of each key, hence time and memory; one step visits one event.
// Order of operations within `history` does not matter. Unknown-outcome gets are dropped.
LinearizabilityResult check_kv_linearizable(const std::vector<KvOperation>& history,
                                            uint64_t step_budget = kDefaultStepBudget,
                                            KvSearchPlan plan = KvSearchPlan::kEagerThenCanonical);

// Builds a history as a simulation runs: begin_* when a client sends a request, finish*
// when it gets the reply. An operation never finished (the client timed out, or the run
// ended first) is recorded as an unknown outcome, which is exactly what it is.
// Not thread-safe; the simulation is single-threaded.
class KvHistoryRecorder {
 public:
  using OpId = size_t;

  OpId begin_put(uint32_t client, std::string key, std::string value, uint64_t now);
  OpId begin_get(uint32_t client, std::string key, uint64_t now);
  OpId begin_append(uint32_t client, std::string key, std::string suffix, uint64_t now);
  OpId begin_cas(uint32_t client, std::string key, std::string expected, std::string value,
                 uint64_t now);

  // Requires: `id` came from begin_*, of the matching kind, and is not finished yet.
  void finish(OpId id, uint64_t now);  // put or append acknowledged
  void finish_get(OpId id, std::string output, uint64_t now);
  void finish_cas(OpId id, bool swapped, uint64_t now);

  const std::vector<KvOperation>& history() const { return ops_; }

 private:
  KvOperation& begin(uint32_t client, std::string key, KvOpKind kind, uint64_t now);

  std::vector<KvOperation> ops_;
};

}  // namespace dfs::sim
