// Tests for the key-value linearizability checker: small histories with known answers
// (overlap, appends, cas, unknown outcomes), explanations, the step budget, the recorder,
// random histories from real sequential executions (and mutations of them), and speed.
#include "tests/sim/linearizability.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace dfs::sim {
namespace {

using Verdict = LinearizabilityResult::Verdict;

KvOperation op(uint32_t client, KvOpKind kind, uint64_t invoke, uint64_t ret, std::string key) {
  KvOperation o;
  o.client = client;
  o.key = std::move(key);
  o.kind = kind;
  o.invoke = invoke;
  o.ret = ret;
  return o;
}

KvOperation put(uint32_t client, std::string value, uint64_t invoke, uint64_t ret,
                std::string key = "k") {
  KvOperation o = op(client, KvOpKind::kPut, invoke, ret, std::move(key));
  o.value = std::move(value);
  return o;
}

KvOperation get(uint32_t client, std::string output, uint64_t invoke, uint64_t ret,
                std::string key = "k") {
  KvOperation o = op(client, KvOpKind::kGet, invoke, ret, std::move(key));
  o.output = std::move(output);
  return o;
}

KvOperation append(uint32_t client, std::string suffix, uint64_t invoke, uint64_t ret,
                   std::string key = "k") {
  KvOperation o = op(client, KvOpKind::kAppend, invoke, ret, std::move(key));
  o.value = std::move(suffix);
  return o;
}

KvOperation cas(uint32_t client, std::string expected, std::string value, bool ok, uint64_t invoke,
                uint64_t ret, std::string key = "k") {
  KvOperation o = op(client, KvOpKind::kCas, invoke, ret, std::move(key));
  o.expected = std::move(expected);
  o.value = std::move(value);
  o.cas_ok = ok;
  return o;
}

// The client timed out: `ret` and any output are meaningless from here on.
KvOperation unknown(KvOperation op) {
  op.unknown_outcome = true;
  op.ret = 0;
  return op;
}

Verdict check(const std::vector<KvOperation>& history) {
  const LinearizabilityResult r = check_kv_linearizable(history);
  INFO(r.explanation);
  CHECK(r.verdict != LinearizabilityResult::kTimedOut);
  return r.verdict;
}

constexpr Verdict kYes = LinearizabilityResult::kLinearizable;
constexpr Verdict kNo = LinearizabilityResult::kNotLinearizable;

}  // namespace

TEST_CASE("sim/linearizability: linearizable histories") {
  SUBCASE("empty") { CHECK(check({}) == kYes); }
  SUBCASE("absent key reads empty") { CHECK(check({get(1, "", 0, 1)}) == kYes); }
  SUBCASE("sequential") {
    CHECK(check({put(1, "a", 0, 1), get(2, "a", 2, 3), append(1, "b", 4, 5), get(2, "ab", 6, 7)}) ==
          kYes);
  }
  SUBCASE("overlapping puts may take effect in either order") {
    const auto a = put(1, "a", 0, 10), b = put(2, "b", 5, 15);
    CHECK(check({a, b, get(3, "a", 20, 30)}) == kYes);
    CHECK(check({a, b, get(3, "b", 20, 30)}) == kYes);
  }
  SUBCASE("a read overlapping a write sees old or new") {
    CHECK(check({put(1, "a", 0, 1), put(1, "b", 10, 20), get(2, "a", 12, 14)}) == kYes);
    CHECK(check({put(1, "a", 0, 1), put(1, "b", 10, 20), get(2, "b", 12, 14)}) == kYes);
  }
  SUBCASE("concurrent reads see a write's old and new values in real-time order") {
    CHECK(check({put(1, "b", 0, 100), get(2, "", 10, 20), get(3, "b", 30, 40),
                 get(2, "b", 50, 60)}) == kYes);
  }
  SUBCASE("concurrent appends in either order") {
    const auto x = append(1, "x", 0, 10), y = append(2, "y", 0, 10);
    CHECK(check({x, y, get(3, "xy", 11, 12)}) == kYes);
    CHECK(check({x, y, get(3, "yx", 11, 12)}) == kYes);
  }
  SUBCASE("one of two racing cas wins") {
    CHECK(check({cas(1, "", "a", true, 0, 10), cas(2, "", "b", false, 0, 10),
                 get(3, "a", 20, 30)}) == kYes);
  }
  SUBCASE("cas that fails on a mismatch, then one that succeeds") {
    CHECK(check({put(1, "a", 0, 1), cas(2, "z", "q", false, 2, 3), cas(2, "a", "b", true, 4, 5),
                 get(1, "b", 6, 7)}) == kYes);
  }
  SUBCASE("ops that touch at one instant count as concurrent") {
    CHECK(check({put(1, "a", 0, 10), get(2, "", 10, 20)}) == kYes);
  }
  SUBCASE("keys are independent") {
    CHECK(check({put(1, "a", 0, 10, "x"), put(1, "b", 20, 30, "y"), get(2, "a", 40, 50, "x"),
                 get(2, "", 5, 6, "y")}) == kYes);
  }
}

TEST_CASE("sim/linearizability: non-linearizable histories") {
  SUBCASE("stale read after a completed write") {
    CHECK(check({put(1, "a", 0, 10), get(2, "", 20, 30)}) == kNo);
  }
  SUBCASE("stale read after a newer value was read") {
    CHECK(check({put(1, "a", 0, 1), put(1, "b", 10, 100), get(2, "b", 20, 30),
                 get(3, "a", 40, 50)}) == kNo);
  }
  SUBCASE("lost append") {
    CHECK(check({append(1, "x", 0, 10), append(2, "y", 20, 30), get(3, "y", 40, 50)}) == kNo);
  }
  SUBCASE("appends applied out of real-time order") {
    CHECK(check({append(1, "x", 0, 10), append(2, "y", 20, 30), get(3, "yx", 40, 50)}) == kNo);
  }
  SUBCASE("two cas both succeed from the same expected value") {
    CHECK(check({cas(1, "", "a", true, 0, 10), cas(2, "", "b", true, 0, 10)}) == kNo);
  }
  SUBCASE("cas fails although the value matched") {
    CHECK(check({put(1, "a", 0, 1), cas(2, "a", "b", false, 2, 3)}) == kNo);
  }
  SUBCASE("a read sees a value never written") {
    CHECK(check({put(1, "a", 0, 10), get(2, "z", 5, 15)}) == kNo);
  }
  SUBCASE("one bad key among good ones") {
    const LinearizabilityResult r =
        check_kv_linearizable({put(1, "a", 0, 10, "good"), get(2, "a", 20, 30, "good"),
                               put(1, "a", 0, 10, "bad"), get(2, "", 20, 30, "bad")});
    CHECK(r.verdict == kNo);
    CHECK(r.explanation.find("key \"bad\"") != std::string::npos);
  }
}

TEST_CASE("sim/linearizability: unknown outcomes") {
  SUBCASE("an unknown put can explain a read that is otherwise impossible") {
    // c1 timed out on put(a), moved on to put(b); the put(a) landed late.
    std::vector<KvOperation> h = {put(1, "a", 0, 5), put(1, "b", 50, 60), get(2, "a", 100, 110)};
    CHECK(check(h) == kNo);
    h[0] = unknown(h[0]);
    CHECK(check(h) == kYes);
  }
  SUBCASE("an unknown op that must have taken effect") {
    CHECK(check({unknown(append(1, "x", 0, 0)), get(2, "x", 10, 20)}) == kYes);
    CHECK(check({unknown(cas(1, "", "a", false, 0, 0)), get(2, "a", 10, 20)}) == kYes);
  }
  SUBCASE("an unknown op that never took effect") {
    CHECK(check({unknown(put(1, "a", 0, 0)), get(2, "", 10, 20), get(2, "", 30, 40)}) == kYes);
  }
  SUBCASE("an unknown op takes effect at most once and is not undone") {
    CHECK(check({unknown(append(1, "x", 0, 0)), get(2, "xx", 10, 20)}) == kNo);
    CHECK(check({unknown(put(1, "a", 0, 0)), get(2, "a", 10, 20), get(2, "", 30, 40)}) == kNo);
  }
  SUBCASE("an unknown op does not take effect before its invocation") {
    CHECK(check({get(2, "a", 0, 10), unknown(put(1, "a", 20, 0))}) == kNo);
  }
  SUBCASE("an unknown cas only takes effect if its expected value is there") {
    CHECK(check({put(1, "b", 0, 1), unknown(cas(1, "", "a", true, 2, 0)), get(2, "a", 10, 20)}) ==
          kNo);
  }
  SUBCASE("an unknown get is ignored, whatever its output field holds") {
    CHECK(check({put(1, "a", 0, 1), unknown(get(2, "never", 2, 0))}) == kYes);
  }
  SUBCASE("a timed-out client's next op may overlap the pending one") {
    CHECK(check({unknown(append(1, "x", 0, 0)), append(1, "y", 30, 40), get(2, "yx", 50, 60)}) ==
          kYes);
  }
}

TEST_CASE("sim/linearizability: explanation names the key and the ops that cannot be ordered") {
  const LinearizabilityResult r =
      check_kv_linearizable({put(1, "a", 0, 10, "acct"), put(3, "z", 1, 2, "other"),
                             get(2, "", 20, 30, "acct"), get(4, "q", 25, 35, "acct")});
  REQUIRE(r.verdict == kNo);
  MESSAGE("explanation:\n" << r.explanation);
  CHECK(r.explanation.find("key \"acct\"") != std::string::npos);
  CHECK(r.explanation.find("c1 put(\"a\") [0, 10]") != std::string::npos);
  CHECK(r.explanation.find("c2 get() -> \"\" [20, 30]  <- blocked") != std::string::npos);
  CHECK(r.explanation.find("other") == std::string::npos);
  CHECK(r.explanation.find("\"q\"") != std::string::npos);  // overlaps, so in the window
}

TEST_CASE("sim/linearizability: long and binary values are shortened and escaped") {
  const std::string long_value(100, 'v');
  const LinearizabilityResult r =
      check_kv_linearizable({put(1, long_value, 0, 1), get(2, std::string("\x01\"", 2), 2, 3)});
  REQUIRE(r.verdict == kNo);
  CHECK(r.explanation.find("(100 bytes)") != std::string::npos);
  CHECK(r.explanation.find("\"\\x01\\\"\"") != std::string::npos);
}

TEST_CASE("sim/linearizability: a known op returning before its call is an invalid history") {
  const LinearizabilityResult r = check_kv_linearizable({put(1, "a", 10, 5)});
  CHECK(r.verdict == LinearizabilityResult::kInvalidHistory);
  CHECK(r.explanation.find("[10, 5]") != std::string::npos);
}

TEST_CASE("sim/linearizability: a pathological history times out instead of hanging") {
  // 16 concurrent appends and a read no order explains: every order is a distinct value.
  std::vector<KvOperation> h;
  for (uint32_t c = 0; c < 16; ++c) h.push_back(append(c, std::string(1, 'a' + c), 0, 100));
  h.push_back(get(99, "impossible", 200, 210));
  h.push_back(get(99, "", 0, 1, "easy"));
  const LinearizabilityResult r = check_kv_linearizable(h, 100'000);
  CHECK(r.verdict == LinearizabilityResult::kTimedOut);
  CHECK(r.explanation.find("key \"k\"") != std::string::npos);

  SUBCASE("a definite violation on another key still wins") {
    h.push_back(get(99, "never", 2, 3, "easy"));
    CHECK(check_kv_linearizable(h, 100'000).verdict == kNo);
  }
}

TEST_CASE("sim/linearizability: recorder") {
  KvHistoryRecorder rec;
  const auto p = rec.begin_put(1, "k", "a", 0);
  const auto g = rec.begin_get(2, "k", 1);
  rec.finish(p, 5);
  rec.finish_get(g, "a", 6);
  const auto c = rec.begin_cas(1, "k", "a", "b", 10);
  rec.finish_cas(c, true, 12);
  rec.begin_append(3, "k", "!", 13);  // never finished: the client timed out
  const auto late = rec.begin_get(2, "k", 40);
  rec.finish_get(late, "b!", 41);

  const std::vector<KvOperation>& h = rec.history();
  REQUIRE(h.size() == 5);
  CHECK(!h[0].unknown_outcome);
  CHECK(h[0].ret == 5);
  CHECK(h[2].cas_ok);
  CHECK(h[3].unknown_outcome);
  CHECK(h[4].output == "b!");
  CHECK(check(h) == kYes);
}

namespace {

// The definition, checked directly: try every order of every subset of the unknown ops
// (with all known ops), respecting real time. Exponential; for a handful of ops.
bool brute_force(const std::vector<KvOperation>& ops, uint32_t placed, const std::string& value) {
  bool done = true;
  for (size_t i = 0; i < ops.size(); ++i) done &= ops[i].unknown_outcome || (placed >> i & 1);
  if (done) return true;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (placed >> i & 1) continue;
    const KvOperation& op = ops[i];
    bool ready = true;  // every known op that returned before this call came earlier
    for (size_t j = 0; j < ops.size(); ++j) {
      ready &= (placed >> j & 1) || ops[j].unknown_outcome || ops[j].ret >= op.invoke;
    }
    if (!ready) continue;
    std::string next = value;
    if (op.kind == KvOpKind::kPut) next = op.value;
    if (op.kind == KvOpKind::kAppend) next += op.value;
    if (op.kind == KvOpKind::kGet && !op.unknown_outcome && value != op.output) continue;
    if (op.kind == KvOpKind::kCas) {
      if (!op.unknown_outcome && (value == op.expected) != op.cas_ok) continue;
      if (value == op.expected) next = op.value;
    }
    if (brute_force(ops, placed | 1u << i, next)) return true;
  }
  return false;
}

std::vector<KvOperation> small_random_history(std::mt19937_64& rng) {
  auto pick = [&rng](std::initializer_list<const char*> from) {
    return std::string(
        from.begin()[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)]);
  };
  auto uniform = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  std::vector<KvOperation> ops(uniform(1, 7));
  for (KvOperation& op : ops) {
    op.client = static_cast<uint32_t>(uniform(0, 3));
    op.key = "k";
    op.kind = static_cast<KvOpKind>(uniform(0, 3));
    op.value = op.kind == KvOpKind::kAppend ? pick({"a", "b"}) : pick({"a", "b", "ab"});
    op.expected = pick({"", "a", "b", "ab"});
    op.output = pick({"", "a", "b", "ab", "ba", "aa", "abb"});
    op.cas_ok = uniform(0, 1) == 1;
    op.unknown_outcome = uniform(0, 3) == 0;
    op.invoke = uniform(0, 20);
    op.ret = op.invoke + uniform(0, 10);
  }
  return ops;
}

}  // namespace

TEST_CASE("sim/linearizability: agrees with brute force on small random histories") {
  const std::pair<KvSearchPlan, const char*> plans[] = {
      {KvSearchPlan::kEagerThenCanonical, "default"},
      {KvSearchPlan::kEagerOnly, "eager only"},
      {KvSearchPlan::kCanonicalOnly, "canonical only"}};
  int yes = 0, with_unknown = 0;
  for (int seed = 1; seed <= 5000; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<KvOperation> h = small_random_history(rng);
    const bool expected = brute_force(h, 0, "");
    yes += expected;
    with_unknown +=
        std::any_of(h.begin(), h.end(), [](const auto& op) { return op.unknown_outcome; });
    for (const auto& [plan, name] : plans) {
      const LinearizabilityResult r = check_kv_linearizable(h, kDefaultStepBudget, plan);
      INFO("seed " << seed << ", " << name << "\n" << r.explanation);
      REQUIRE(r.verdict == (expected ? kYes : kNo));
    }
  }
  MESSAGE(yes << " of 5000 linearizable; " << with_unknown << " with unknown outcomes");
  CHECK(yes > 500);
  CHECK(yes < 4500);
}

namespace {

// A real execution: each op takes effect at one instant inside its interval, so the
// recorded history is linearizable by construction. Some clients time out; their op
// lands late or never.
struct RandomHistory {
  int clients = 4;
  int keys = 3;
  int ops_per_client = 60;
  double unknown_rate = 0.05;
  uint64_t max_latency = 20;

  std::vector<KvOperation> generate(std::mt19937_64& rng) const;
};

std::vector<KvOperation> RandomHistory::generate(std::mt19937_64& rng) const {
  auto uniform = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  std::vector<KvOperation> ops;
  std::vector<std::pair<uint64_t, size_t>> effects;  // (instant, op), for ops that land
  for (int c = 0; c < clients; ++c) {
    uint64_t now = uniform(0, 10);
    for (int i = 0; i < ops_per_client; ++i) {
      KvOperation op;
      op.client = c;
      op.key = "k" + std::to_string(uniform(0, keys - 1));
      const uint64_t roll = uniform(0, 99);
      op.kind = roll < 30   ? KvOpKind::kPut
                : roll < 65 ? KvOpKind::kGet
                : roll < 85 ? KvOpKind::kAppend
                            : KvOpKind::kCas;
      op.value = std::to_string(c) + "." + std::to_string(i) + ";";
      op.invoke = now + uniform(0, 5);
      op.ret = op.invoke + uniform(0, max_latency);
      op.unknown_outcome = std::bernoulli_distribution(unknown_rate)(rng);
      if (!op.unknown_outcome) {
        effects.push_back({uniform(op.invoke, op.ret), ops.size()});
      } else if (uniform(0, 1) == 0) {
        effects.push_back({uniform(op.invoke, op.invoke + 200), ops.size()});
      }
      now = op.unknown_outcome ? op.invoke + 30 : op.ret;  // a timeout, then carry on
      ops.push_back(std::move(op));
    }
  }
  // Ties are concurrent either way: both intervals hold the instant.
  std::sort(effects.begin(), effects.end());
  std::map<std::string, std::string> store;
  std::map<std::string, std::vector<std::string>> seen;  // values each key has held
  for (const auto& [instant, index] : effects) {
    KvOperation& op = ops[index];
    std::string& v = store[op.key];
    if (op.kind == KvOpKind::kCas) {
      const auto& past = seen[op.key];
      op.expected = uniform(0, 9) < 6 || past.empty() ? v : past[uniform(0, past.size() - 1)];
      op.cas_ok = v == op.expected;
      if (op.cas_ok) v = op.value;
    }
    if (op.kind == KvOpKind::kPut) v = op.value;
    if (op.kind == KvOpKind::kAppend) v += op.value;
    if (op.kind == KvOpKind::kGet) op.output = v;
    seen[op.key].push_back(v);
  }
  return ops;
}

// Changes one known result, to a value the key really held when one differs, else to one
// it never held; or flips a cas. Returns false if the history has no result to change.
bool mutate(std::vector<KvOperation>& ops, std::mt19937_64& rng) {
  std::vector<size_t> results;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].unknown_outcome &&
        (ops[i].kind == KvOpKind::kGet || ops[i].kind == KvOpKind::kCas)) {
      results.push_back(i);
    }
  }
  if (results.empty()) return false;
  KvOperation& op = ops[results[std::uniform_int_distribution<size_t>(0, results.size() - 1)(rng)]];
  if (op.kind == KvOpKind::kCas) {
    op.cas_ok = !op.cas_ok;
    return true;
  }
  for (const KvOperation& other : ops) {  // a value written to this key, if any differs
    if (other.key == op.key && other.kind == KvOpKind::kPut && other.value != op.output &&
        std::bernoulli_distribution(0.2)(rng)) {
      op.output = other.value;
      return true;
    }
  }
  op.output += "?";
  return true;
}

}  // namespace

TEST_CASE("sim/linearizability: random real executions pass, mutated ones mostly fail") {
  constexpr int kTrials = 200;
  int mutated = 0, caught = 0;
  for (int seed = 1; seed <= kTrials; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<KvOperation> h = RandomHistory{}.generate(rng);
    LinearizabilityResult r = check_kv_linearizable(h);
    INFO("seed " << seed << "\n" << r.explanation);
    REQUIRE(r.verdict == kYes);
    if (!mutate(h, rng)) continue;
    ++mutated;
    r = check_kv_linearizable(h);
    REQUIRE(r.verdict != LinearizabilityResult::kTimedOut);
    caught += r.verdict == kNo;
  }
  MESSAGE(caught << " of " << mutated << " mutated histories found not linearizable");
  CHECK(mutated > kTrials * 9 / 10);
  CHECK(caught > mutated / 2);
}

double seconds_to_check(const std::vector<KvOperation>& h, LinearizabilityResult& r) {
  const auto start = std::chrono::steady_clock::now();
  r = check_kv_linearizable(h);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST_CASE("sim/linearizability: 5 keys x 2,000 ops from 5 clients check well under a second") {
  std::mt19937_64 rng(42);
  std::vector<KvOperation> h = RandomHistory{.clients = 5,
                                             .keys = 5,
                                             .ops_per_client = 2'000,
                                             .unknown_rate = 0.02,
                                             .max_latency = 100}
                                   .generate(rng);
  LinearizabilityResult r;
  double seconds = seconds_to_check(h, r);
  MESSAGE(h.size() << " ops checked in " << seconds << " s");
  CHECK(r.verdict == kYes);
  CHECK(seconds < 1.0);

  // Proving a history wrong means exhausting the orders before the fault, timed-out ops
  // included: the slow case, which must still answer rather than time out.
  for (KvOperation& op : h) {
    if (op.kind == KvOpKind::kGet && !op.unknown_outcome && op.invoke > 30'000) {
      op.output += "?";
      break;
    }
  }
  seconds = seconds_to_check(h, r);
  MESSAGE("with one bad read halfway: " << seconds << " s");
  CHECK(r.verdict == kNo);
  CHECK(seconds < 5.0);
}

}  // namespace dfs::sim
