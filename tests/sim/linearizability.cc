// The search behind check_kv_linearizable: Lowe's refinement of Wing & Gong over one key's
// call and return events, with Porcupine's memo of (ops placed, value) so that each
// configuration is explored once. Unknown outcomes have no return event, so the search
// may place them anywhere after their call, or never; they are what makes a search hard,
// hence two strategies (see Strategy).
#include "tests/sim/linearizability.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>
#include <utility>

namespace dfs::sim {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr size_t kWindowShown = 8;  // ops listed in an explanation; the rest are counted
constexpr size_t kTailShown = 3;    // ops of the furthest ordering listed before the window

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser: a bijection that scatters bits
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash_bytes(const std::string& s, uint64_t seed) {
  uint64_t h = mix64(seed ^ s.size());
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    h = mix64(h ^ word);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  return mix64(h ^ tail);
}

// The memo identifies (ops placed, value) by a 128-bit fingerprint, as TLC does,
// rather than by the bitset and string: that keeps an entry small whatever the history's
// length or value sizes. A collision could prune a branch wrongly, with odds ~2^-80 here.
struct Fingerprint {
  uint64_t a = 0;
  uint64_t b = 0;
  bool operator==(const Fingerprint&) const = default;
};

// The configurations explored so far. Open addressing, linear probing; {0, 0} marks an
// empty slot, so stored fingerprints have b odd.
class FingerprintSet {
 public:
  // Returns false if `fp` was present already.
  bool insert(Fingerprint fp) {
    fp.b |= 1;
    if ((size_ + 1) * 2 > slots_.size()) grow();
    Fingerprint& slot = find(fp);
    if (slot == fp) return false;
    slot = fp;
    ++size_;
    return true;
  }

 private:
  Fingerprint& find(Fingerprint fp) {  // the slot holding fp, or the empty one for it
    const size_t mask = slots_.size() - 1;
    size_t i = fp.a & mask;
    while (slots_[i].b != 0 && !(slots_[i] == fp)) i = (i + 1) & mask;
    return slots_[i];
  }

  void grow() {
    std::vector<Fingerprint> old = std::move(slots_);
    slots_.assign(std::max<size_t>(1024, old.size() * 2), Fingerprint{});
    for (const Fingerprint& fp : old) {
      if (fp.b != 0) find(fp) = fp;
    }
  }

  size_t size_ = 0;
  std::vector<Fingerprint> slots_;
};

// What placing an operation next does, given the value before it.
enum class Effect { kIllegal, kNoChange, kChanges };

Effect judge(const KvOperation& op, const std::string& value) {
  switch (op.kind) {
    case KvOpKind::kPut:
      return value == op.value ? Effect::kNoChange : Effect::kChanges;
    case KvOpKind::kGet:
      return value == op.output ? Effect::kNoChange : Effect::kIllegal;
    case KvOpKind::kAppend:
      return op.value.empty() ? Effect::kNoChange : Effect::kChanges;
    case KvOpKind::kCas: {
      const bool swaps = value == op.expected;
      // An unknown cas that would fail is the same as one never placed.
      if (op.unknown_outcome || swaps == op.cas_ok) {
        return swaps && op.value != value ? Effect::kChanges : Effect::kNoChange;
      }
      return Effect::kIllegal;
    }
  }
  return Effect::kIllegal;
}

// Requires: judge(op, value) == Effect::kChanges.
void apply_to(std::string& value, const KvOperation& op) {
  if (op.kind == KvOpKind::kAppend) {
    value += op.value;
  } else {
    value = op.value;
  }
}

void escape_into(std::ostringstream& out, const std::string& s, size_t pos, size_t count) {
  static const char* const kHex = "0123456789abcdef";
  for (const unsigned char c : s.substr(pos, count)) {
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (c < 0x20 || c >= 0x7f) {
      out << "\\x" << kHex[c >> 4] << kHex[c & 15];
    } else {
      out << c;
    }
  }
}

// A C-style quoted string; long ones (grown by appends) show both ends and their size.
std::string quote(const std::string& s) {
  constexpr size_t kMax = 40, kEnds = 16;
  std::ostringstream out;
  out << '"';
  if (s.size() <= kMax) {
    escape_into(out, s, 0, s.size());
    out << '"';
  } else {
    escape_into(out, s, 0, kEnds);
    out << "...";
    escape_into(out, s, s.size() - kEnds, kEnds);
    out << "\" (" << s.size() << " bytes)";
  }
  return out.str();
}

// For example `c2 cas("a", "b") -> true [10, 14]` or `c1 put("x") [3, ?) outcome unknown`.
std::string describe(const KvOperation& op) {
  std::ostringstream out;
  out << 'c' << op.client << ' ';
  switch (op.kind) {
    case KvOpKind::kPut:
      out << "put(" << quote(op.value) << ')';
      break;
    case KvOpKind::kGet:
      out << "get()";
      break;
    case KvOpKind::kAppend:
      out << "append(" << quote(op.value) << ')';
      break;
    case KvOpKind::kCas:
      out << "cas(" << quote(op.expected) << ", " << quote(op.value) << ')';
      break;
  }
  if (op.unknown_outcome) {
    out << " [" << op.invoke << ", ?) outcome unknown";
    return out.str();
  }
  if (op.kind == KvOpKind::kGet) out << " -> " << quote(op.output);
  if (op.kind == KvOpKind::kCas) out << " -> " << (op.cas_ok ? "true" : "false");
  out << " [" << op.invoke << ", " << op.ret << ']';
  return out.str();
}

// How the search treats unknown ops. Both are complete; each is fast where the other
// can be exponential in the number of unknown ops, so a key tries kEager, then kCanonical.
enum class Strategy {
  // Plain WGL: an unknown op may land wherever it fits. One that never took effect tends
  // to land early where it harms nothing and is then out of the way: good at finding an
  // order, but proving there is none means trying every such landing spot.
  kEager,
  // Only orders in which each unknown op placed is observed, i.e. a later op's result
  // depends on it (see dirty_). Any order can be reduced to one of these by deleting
  // unobserved unknown ops, so none is lost; proving there is none gets cheap, but the
  // unknown ops that never took effect stay candidates at every step.
  kCanonical,
};

// Searches one key's operations. Events live in a doubly linked list in time order
// (calls before returns at equal times); placing an op unlinks its events, and
// backtracking relinks them in reverse order, dancing-links style.
class KeySearch {
 public:
  KeySearch(const std::vector<const KvOperation*>& ops, Strategy strategy, uint64_t budget);

  LinearizabilityResult::Verdict run();
  std::string explain(const std::string& key) const;  // after kNotLinearizable
  uint64_t steps() const { return steps_; }

 private:
  struct Node {
    uint32_t op;
    bool is_call;
    uint32_t prev;
    uint32_t next;
  };
  struct Placed {
    uint32_t op = 0;
    bool changed = false;
    size_t old_size = 0;    // append: undone by truncating
    std::string old_value;  // put, cas: undone by restoring
    bool was_dirty = false;
    bool saved_shadow = false;
    std::string old_shadow;
  };

  void build_events();
  bool try_place(uint32_t op);
  void apply(const KvOperation& op, Placed& placed);
  void revert(const KvOperation& op, Placed& placed);
  void toggle(uint32_t op);  // in or out of the placed set
  // After `op` was applied while dirty: updates the shadow; true if the order is cut.
  bool follow_shadow(const KvOperation& op);
  void restore(Placed& placed);  // undoes a placement's effects on the search state
  uint32_t unplace();            // pops the last placement; returns its call node
  void unlink(uint32_t node);
  void relink(uint32_t node);
  void note_blocked(uint32_t op);
  Fingerprint fingerprint() const;

  const std::vector<const KvOperation*>& ops_;
  const Strategy strategy_;
  const uint64_t budget_;
  uint64_t steps_ = 0;
  std::vector<Node> nodes_;  // nodes_[0] is the list's sentinel; then events in time order
  std::vector<uint32_t> call_node_, ret_node_;  // per op; ret_node_ is kNone if unknown
  std::vector<Fingerprint> keys_;               // per op: Zobrist keys of the placed set
  size_t unplaced_known_ = 0;

  std::string value_;
  std::vector<Placed> stack_;
  std::vector<char> placed_;
  Fingerprint placed_hash_;
  FingerprintSet seen_;
  // kCanonical: once an unknown op is placed, shadow_ follows the value the key would have
  // without the unknown ops placed since (dirty_). If a later known op could not run on
  // the shadow, those ops were observed and dirty_ ends. If the value meets the shadow
  // again (a put overwrote both, say), they were not: the order without them reaches the
  // same place, so this one is cut. Likewise for an unknown op that would do as well
  // without the unknown ops before it.
  bool dirty_ = false;
  std::string shadow_;

  // The furthest the search got: the deepest ordering whose next return was unreachable.
  size_t best_depth_ = 0;
  uint32_t best_blocked_ = kNone;
  std::vector<char> best_placed_;
  std::vector<uint32_t> best_tail_;
  std::string best_value_;
};

KeySearch::KeySearch(const std::vector<const KvOperation*>& ops, Strategy strategy, uint64_t budget)
    : ops_(ops), strategy_(strategy), budget_(budget), placed_(ops_.size(), 0) {
  keys_.reserve(ops_.size());
  for (size_t i = 0; i < ops_.size(); ++i) {
    keys_.push_back({mix64(2 * i), mix64(2 * i + 1)});
    if (!ops_[i]->unknown_outcome) ++unplaced_known_;
  }
  build_events();
}

void KeySearch::build_events() {
  struct Event {
    uint64_t time;
    bool is_return;  // sorts calls first at equal times: touching ops are concurrent
    uint32_t op;
    auto operator<=>(const Event&) const = default;
  };
  std::vector<Event> events;
  for (uint32_t i = 0; i < ops_.size(); ++i) {
    events.push_back({ops_[i]->invoke, false, i});
    if (!ops_[i]->unknown_outcome) events.push_back({ops_[i]->ret, true, i});
  }
  std::sort(events.begin(), events.end());
  call_node_.assign(ops_.size(), kNone);
  ret_node_.assign(ops_.size(), kNone);
  const auto count = static_cast<uint32_t>(events.size());
  nodes_.push_back({kNone, false, count, count == 0 ? 0u : 1u});
  for (uint32_t i = 1; i <= count; ++i) {
    const Event& e = events[i - 1];
    nodes_.push_back({e.op, !e.is_return, i - 1, i == count ? 0 : i + 1});
    (e.is_return ? ret_node_ : call_node_)[e.op] = i;
  }
}

// Lowe's search: at each configuration, try each op whose call comes before the first
// return still in the list; reaching that return means backtracking.
LinearizabilityResult::Verdict KeySearch::run() {
  uint32_t node = nodes_[0].next;
  while (unplaced_known_ > 0) {
    if (++steps_ > budget_) return LinearizabilityResult::kTimedOut;
    const Node& n = nodes_[node];
    if (n.is_call) {
      node = try_place(n.op) ? nodes_[0].next : n.next;
      continue;
    }
    // Nothing can go next and let this op return in time: undo the last choice.
    note_blocked(n.op);
    if (stack_.empty()) return LinearizabilityResult::kNotLinearizable;
    node = nodes_[unplace()].next;
  }
  return LinearizabilityResult::kLinearizable;
}

bool KeySearch::try_place(uint32_t op_index) {
  const KvOperation& op = *ops_[op_index];
  const Effect effect = judge(op, value_);
  if (effect == Effect::kIllegal) return false;
  // Placing an unknown op that changes nothing only narrows later choices: skip it.
  if (op.unknown_outcome && effect != Effect::kChanges) return false;

  Placed placed;
  placed.op = op_index;
  placed.changed = effect == Effect::kChanges;
  placed.was_dirty = dirty_;
  const bool canonical = strategy_ == Strategy::kCanonical;
  if (canonical && (dirty_ || op.unknown_outcome)) {
    placed.saved_shadow = true;
    placed.old_shadow = shadow_;
    if (!dirty_) shadow_ = value_;
  }
  if (placed.changed) apply(op, placed);
  const bool cut = placed.was_dirty && follow_shadow(op);
  if (canonical && op.unknown_outcome) dirty_ = true;
  toggle(op_index);
  if (cut || !seen_.insert(fingerprint())) {
    restore(placed);
    return false;
  }
  if (!op.unknown_outcome) --unplaced_known_;
  unlink(call_node_[op_index]);
  if (ret_node_[op_index] != kNone) unlink(ret_node_[op_index]);
  stack_.push_back(std::move(placed));
  return true;
}

bool KeySearch::follow_shadow(const KvOperation& op) {
  if (op.unknown_outcome) {  // would it alone, without the unknown ops before, do as well?
    std::string alone = shadow_;
    if (judge(op, alone) == Effect::kChanges) apply_to(alone, op);
    return alone == value_;
  }
  const Effect effect = judge(op, shadow_);
  if (effect == Effect::kIllegal) {
    dirty_ = false;  // the unknown ops were observed
    return false;
  }
  if (effect == Effect::kChanges) apply_to(shadow_, op);
  return shadow_ == value_;
}

void KeySearch::restore(Placed& placed) {
  const KvOperation& op = *ops_[placed.op];
  revert(op, placed);
  toggle(placed.op);
  dirty_ = placed.was_dirty;
  if (placed.saved_shadow) shadow_ = std::move(placed.old_shadow);
}

void KeySearch::apply(const KvOperation& op, Placed& placed) {
  if (op.kind == KvOpKind::kAppend) {
    placed.old_size = value_.size();
    value_ += op.value;
  } else {  // put, or a cas that swaps
    placed.old_value = std::move(value_);
    value_ = op.value;
  }
}

void KeySearch::revert(const KvOperation& op, Placed& placed) {
  if (!placed.changed) return;
  if (op.kind == KvOpKind::kAppend) {
    value_.resize(placed.old_size);
  } else {
    value_ = std::move(placed.old_value);
  }
}

void KeySearch::toggle(uint32_t op) {
  placed_[op] ^= 1;
  placed_hash_.a ^= keys_[op].a;
  placed_hash_.b ^= keys_[op].b;
}

uint32_t KeySearch::unplace() {
  Placed& top = stack_.back();
  const KvOperation& op = *ops_[top.op];
  restore(top);
  if (!op.unknown_outcome) ++unplaced_known_;
  // Relink in the reverse order of try_place's unlinks.
  const uint32_t call = call_node_[top.op];
  if (ret_node_[top.op] != kNone) relink(ret_node_[top.op]);
  relink(call);
  stack_.pop_back();
  return call;
}

void KeySearch::unlink(uint32_t node) {
  nodes_[nodes_[node].prev].next = nodes_[node].next;
  nodes_[nodes_[node].next].prev = nodes_[node].prev;
}

void KeySearch::relink(uint32_t node) {
  nodes_[nodes_[node].prev].next = node;
  nodes_[nodes_[node].next].prev = node;
}

void KeySearch::note_blocked(uint32_t op) {
  if (best_blocked_ != kNone && stack_.size() <= best_depth_) return;
  best_depth_ = stack_.size();
  best_blocked_ = op;
  best_placed_ = placed_;
  best_value_ = value_;
  best_tail_.clear();
  for (size_t i = stack_.size() - std::min(stack_.size(), kTailShown); i < stack_.size(); ++i) {
    best_tail_.push_back(stack_[i].op);
  }
}

Fingerprint KeySearch::fingerprint() const {
  Fingerprint fp{placed_hash_.a ^ hash_bytes(value_, 0x5eed0001),
                 placed_hash_.b ^ hash_bytes(value_, 0x5eed0002)};
  if (dirty_) {  // the shadow decides which orders are cut, so it is part of the state
    fp.a ^= mix64(hash_bytes(shadow_, 0x5eed0003));
    fp.b ^= mix64(hash_bytes(shadow_, 0x5eed0004));
  }
  return fp;
}

// The window: ops not in the furthest ordering that were invoked before the blocked op
// had to return. Each of them was tried next, and every choice led to a dead end.
std::string KeySearch::explain(const std::string& key) const {
  std::ostringstream out;
  out << "key " << quote(key) << ": no order of its " << ops_.size()
      << " operations explains every result.\n";
  out << "The furthest ordering places " << best_depth_ << " of them, leaving value "
      << quote(best_value_) << (best_tail_.empty() ? ".\n" : "; it ends with:\n");
  for (const uint32_t op : best_tail_) out << "    " << describe(*ops_[op]) << '\n';
  out << "After that, no order of these ops lets the blocked one take effect before it returned"
      << " at " << ops_[best_blocked_]->ret << ":\n";
  size_t listed = 0, unlisted = 0;
  for (uint32_t node = 1; node < ret_node_[best_blocked_]; ++node) {
    const Node& n = nodes_[node];
    if (!n.is_call || best_placed_[n.op]) continue;
    if (listed == kWindowShown) {
      ++unlisted;
      continue;
    }
    out << "    " << describe(*ops_[n.op]) << (n.op == best_blocked_ ? "  <- blocked\n" : "\n");
    ++listed;
  }
  if (unlisted > 0) out << "    ... and " << unlisted << " more\n";
  return out.str();
}

// Checks one key: kEager with half the budget, then kCanonical with the rest, unless
// `plan` says otherwise.
LinearizabilityResult check_key(const std::string& key, const std::vector<const KvOperation*>& ops,
                                uint64_t budget, KvSearchPlan plan) {
  const bool any_unknown = std::any_of(ops.begin(), ops.end(),
                                       [](const KvOperation* op) { return op->unknown_outcome; });
  std::vector<std::pair<Strategy, uint64_t>> runs;  // strategy, budget
  if (!any_unknown || plan == KvSearchPlan::kEagerOnly) {
    runs = {{Strategy::kEager, budget}};  // without unknown ops the strategies are alike
  } else if (plan == KvSearchPlan::kCanonicalOnly) {
    runs = {{Strategy::kCanonical, budget}};
  } else {
    runs = {{Strategy::kEager, budget / 2}, {Strategy::kCanonical, budget - budget / 2}};
  }
  for (const auto& [strategy, share] : runs) {
    KeySearch search(ops, strategy, share);
    switch (search.run()) {
      case LinearizabilityResult::kLinearizable:
        return {};
      case LinearizabilityResult::kNotLinearizable:
        return {LinearizabilityResult::kNotLinearizable, search.explain(key)};
      default:
        break;
    }
  }
  return {LinearizabilityResult::kTimedOut, "key " + quote(key) + ": gave up after " +
                                                std::to_string(budget) + " steps over " +
                                                std::to_string(ops.size()) + " operations"};
}

}  // namespace

LinearizabilityResult check_kv_linearizable(const std::vector<KvOperation>& history,
                                            uint64_t step_budget, KvSearchPlan plan) {
  std::map<std::string, std::vector<const KvOperation*>> by_key;
  for (const KvOperation& op : history) {
    if (!op.unknown_outcome && op.ret < op.invoke) {
      return {LinearizabilityResult::kInvalidHistory,
              "returns before it is invoked: " + describe(op) + " on key " + quote(op.key)};
    }
    // A get that never returned changes nothing and showed nothing.
    if (op.unknown_outcome && op.kind == KvOpKind::kGet) continue;
    by_key[op.key].push_back(&op);
  }
  LinearizabilityResult result;
  for (const auto& [key, ops] : by_key) {
    LinearizabilityResult r = check_key(key, ops, step_budget, plan);
    if (r.verdict == LinearizabilityResult::kNotLinearizable) return r;
    // After a timeout keep going: a later key may still give a definite answer.
    if (result.verdict == LinearizabilityResult::kLinearizable) result = std::move(r);
  }
  return result;
}

KvOperation& KvHistoryRecorder::begin(uint32_t client, std::string key, KvOpKind kind,
                                      uint64_t now) {
  KvOperation& op = ops_.emplace_back();
  op.client = client;
  op.key = std::move(key);
  op.kind = kind;
  op.unknown_outcome = true;  // until finished
  op.invoke = now;
  return op;
}

KvHistoryRecorder::OpId KvHistoryRecorder::begin_put(uint32_t client, std::string key,
                                                     std::string value, uint64_t now) {
  begin(client, std::move(key), KvOpKind::kPut, now).value = std::move(value);
  return ops_.size() - 1;
}

KvHistoryRecorder::OpId KvHistoryRecorder::begin_get(uint32_t client, std::string key,
                                                     uint64_t now) {
  begin(client, std::move(key), KvOpKind::kGet, now);
  return ops_.size() - 1;
}

KvHistoryRecorder::OpId KvHistoryRecorder::begin_append(uint32_t client, std::string key,
                                                        std::string suffix, uint64_t now) {
  begin(client, std::move(key), KvOpKind::kAppend, now).value = std::move(suffix);
  return ops_.size() - 1;
}

KvHistoryRecorder::OpId KvHistoryRecorder::begin_cas(uint32_t client, std::string key,
                                                     std::string expected, std::string value,
                                                     uint64_t now) {
  KvOperation& op = begin(client, std::move(key), KvOpKind::kCas, now);
  op.expected = std::move(expected);
  op.value = std::move(value);
  return ops_.size() - 1;
}

void KvHistoryRecorder::finish(OpId id, uint64_t now) {
  ops_[id].unknown_outcome = false;
  ops_[id].ret = now;
}

void KvHistoryRecorder::finish_get(OpId id, std::string output, uint64_t now) {
  ops_[id].output = std::move(output);
  finish(id, now);
}

void KvHistoryRecorder::finish_cas(OpId id, bool swapped, uint64_t now) {
  ops_[id].cas_ok = swapped;
  finish(id, now);
}

}  // namespace dfs::sim
