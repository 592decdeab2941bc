#include "tests/unit/locks/lock_checker.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "tests/unit/locks/lock_model.h"

namespace dfs::locks::test {
namespace {

constexpr SessionId kSessions = 3;
constexpr uint64_t kIdsPerSession = 2;  // processes, and open files, per session
constexpr Ino kInodes = 2;
constexpr size_t kEventsKept = 40;

struct Pending {
  WaiterId id = 0;
  HeldLock request;
};

class Run {
 public:
  explicit Run(const CheckerOptions& o)
      : options_(o), rng_(o.seed), table_(std::make_unique<LockTable>(o.table)) {}

  CheckerResult run();

 private:
  // ---- Random choices ----
  uint64_t pick(uint64_t n) { return rng_() % n; }
  Owner any_owner();
  Range any_range();
  Ino any_ino() { return 1 + pick(kInodes); }

  // ---- Operations ----
  void step();
  void do_lock();
  void do_unlock();
  void do_cancel();
  void do_release_owner();
  void do_release_open();
  void do_evict();
  void evict(SessionId s);
  void do_failover();
  void judge_reply(const LockRequest& req, const HeldLock& want, const SetReply& reply,
                   bool blocked, bool cycle);
  void collect_grants();
  std::vector<WaiterId> forget_pending(const std::function<bool(const Pending&)>& which);

  // ---- The queue rules, restated over the model ----
  size_t pending_of(const Owner& o) const;
  bool waited_on(const Owner& o) const;
  bool yields(const Owner& o, size_t own_pending) const;
  std::set<Owner> queued_blockers(Ino ino, const Owner& o, Range r, LockType t,
                                  size_t before) const;
  std::set<Owner> blockers(Ino ino, const Owner& o, Range r, LockType t, size_t before,
                           size_t own_pending) const;
  bool closes_cycle(const HeldLock& want) const;

  // ---- Checks ----
  void check();
  void check_probe();
  void check_queues();
  void finish();
  void note(std::string event);
  void violation(std::string what) { result_.violations.push_back(std::move(what)); }

  CheckerOptions options_;
  std::mt19937_64 rng_;
  std::unique_ptr<LockTable> table_;
  LockModel model_;
  std::map<Ino, std::vector<Pending>> queues_;  // what the table should queue, FIFO
  TimeMs now_ = 0;
  std::deque<std::string> events_;
  CheckerResult result_;
};

CheckerResult Run::run() {
  for (size_t i = 0; i < options_.ops && result_.violations.empty(); ++i) {
    step();
    if (result_.violations.empty()) check();
  }
  if (result_.violations.empty()) finish();
  result_.events.assign(events_.begin(), events_.end());
  return std::move(result_);
}

Owner Run::any_owner() {
  const uint64_t k = pick(4);
  const OwnerKind kind = k < 2 ? OwnerKind::kPosix : k == 2 ? OwnerKind::kOfd : OwnerKind::kFlock;
  return Owner{1 + pick(kSessions), 1 + pick(kIdsPerSession), kind};
}

Range Run::any_range() {
  const uint64_t start = pick(kModelBytes);
  if (pick(100) < 15) return Range{start, Range::kEof};
  return Range{start, start + pick(std::min<uint64_t>(kModelBytes - start, 16))};
}

void Run::step() {
  now_ += 1 + static_cast<TimeMs>(pick(5));
  const uint64_t r = pick(100);
  if (r < 47) {
    do_lock();
  } else if (r < 70) {
    do_unlock();
  } else if (r < 80) {
    do_cancel();
  } else if (r < 87) {
    do_release_owner();
  } else if (r < 93) {
    do_release_open();
  } else if (r < 98) {
    do_evict();
  } else {
    do_failover();
  }
  collect_grants();
}

void Run::do_lock() {
  const LockRequest req{any_ino(),
                        any_owner(),
                        any_range(),
                        pick(2) ? LockType::kWrite : LockType::kRead,
                        static_cast<int32_t>(1000 + pick(50)),
                        pick(2) == 0};
  HeldLock want{req.ino, req.owner, req.range, req.type, req.pid};
  if (want.owner.kind == OwnerKind::kFlock) want.range = Range::whole();
  // A flock conversion drops the old lock and wakes others before it is judged:
  // judge only its effect on the state, not the reply.
  std::optional<LockType> had;
  if (want.owner.kind == OwnerKind::kFlock) had = model_.first_byte(want.ino, want.owner);
  const bool converting = had && *had != want.type;
  const size_t queued = queues_[want.ino].size();
  const bool blocked = !blockers(want.ino, want.owner, want.range, want.type, queued, 0).empty();
  const bool cycle =
      req.wait && blocked && want.owner.kind == OwnerKind::kPosix && closes_cycle(want);
  note("set " + to_string(want) + (req.wait ? " wait" : ""));
  Result<SetReply> reply = table_->set(req, now_);
  if (!reply) return violation("set failed: " + reply.error().to_string());
  if (converting) model_.drop(want.owner, want.ino);
  judge_reply(req, want, *reply, converting ? reply->outcome != SetOutcome::kGranted : blocked,
              cycle && !converting);
}

void Run::judge_reply(const LockRequest& req, const HeldLock& want, const SetReply& reply,
                      bool blocked, bool cycle) {
  switch (reply.outcome) {
    case SetOutcome::kGranted:
      ++result_.stats.granted;
      if (blocked) violation("granted though blocked: " + to_string(want));
      model_.apply(want);
      break;
    case SetOutcome::kConflict:
      ++result_.stats.refused;
      if (req.wait || !blocked) violation("refused though free or waiting: " + to_string(want));
      break;
    case SetOutcome::kQueued:
      ++result_.stats.queued;
      note("  queued as " + std::to_string(reply.waiter));
      if (!req.wait || !blocked || cycle) {
        violation("queued though free, not waiting or closing a cycle: " + to_string(want));
      }
      queues_[want.ino].push_back(Pending{reply.waiter, want});
      break;
    case SetOutcome::kDeadlock:
      ++result_.stats.deadlocks;
      if (!cycle) violation("EDEADLK without a cycle: " + to_string(want));
      break;
    case SetOutcome::kNoLocks:
      ++result_.stats.no_locks;
      if (!req.wait || queues_[want.ino].size() < options_.table.max_waiters_per_inode) {
        violation("ENOLCK below the limits: " + to_string(want));
      }
      break;
  }
}

void Run::do_unlock() {
  Owner o = any_owner();
  LockRequest req{any_ino(), o, any_range(), LockType::kUnlock, 0, false};
  if (o.kind == OwnerKind::kFlock) req.range = Range::whole();
  note("unlock " + to_string(HeldLock{req.ino, o, req.range, req.type, 0}));
  Result<SetReply> reply = table_->set(req, now_);
  if (!reply || reply->outcome != SetOutcome::kGranted) return violation("unlock refused");
  model_.apply(HeldLock{req.ino, o, req.range, LockType::kUnlock, 0});
}

void Run::do_cancel() {
  std::vector<WaiterId> all;
  for (const auto& [ino, q] : queues_) {
    for (const Pending& p : q) all.push_back(p.id);
  }
  if (all.empty() || pick(10) == 0) {
    note("cancel of a request not queued");
    if (table_->cancel_wait(1'000'000 + pick(10)).error().code() != ErrorCode::kNotFound) {
      violation("cancel of an unknown waiter did not say kNotFound");
    }
    return;
  }
  const WaiterId id = all[pick(all.size())];
  note("cancel " + std::to_string(id));
  ++result_.stats.cancels;
  if (!table_->cancel_wait(id)) violation("cancel of queued " + std::to_string(id) + " failed");
  forget_pending([id](const Pending& p) { return p.id == id; });
}

void Run::do_release_owner() {
  const Owner o{1 + pick(kSessions), 1 + pick(kIdsPerSession), OwnerKind::kPosix};
  const Ino ino = any_ino();
  note("release_owner " + to_string(o) + " ino " + std::to_string(ino));
  table_->release_owner(o.session, ino, o.id);
  model_.drop(o, ino);
}

void Run::do_release_open() {
  const SessionId s = 1 + pick(kSessions);
  const uint64_t file = 1 + pick(kIdsPerSession);
  const Ino ino = any_ino();
  note("release_open " + std::to_string(s) + "/" + std::to_string(file) + " ino " +
       std::to_string(ino));
  std::vector<WaiterId> got = table_->release_open(s, ino, file);
  std::vector<WaiterId> want = forget_pending([&](const Pending& p) {
    const Owner& o = p.request.owner;
    return p.request.ino == ino && o.session == s && o.id == file && o.kind != OwnerKind::kPosix;
  });
  std::sort(got.begin(), got.end());
  if (got != want) violation("release_open dropped other requests than the file's");
  for (OwnerKind k : {OwnerKind::kOfd, OwnerKind::kFlock}) model_.drop(Owner{s, file, k}, ino);
}

void Run::do_evict() { evict(1 + pick(kSessions)); }

void Run::evict(SessionId s) {
  note("evict " + std::to_string(s));
  ++result_.stats.evictions;
  std::vector<WaiterId> got = table_->evict_session(s);
  std::vector<WaiterId> want =
      forget_pending([s](const Pending& p) { return p.request.owner.session == s; });
  std::sort(got.begin(), got.end());
  if (got != want) violation("evict_session dropped other requests than the session's");
  model_.drop_session(s);
}

void Run::do_failover() {
  note("failover");
  ++result_.stats.failovers;
  std::unique_ptr<LockTable> old = std::move(table_);
  table_ = std::make_unique<LockTable>(options_.table);
  table_->begin_reassert(now_);
  queues_.clear();  // the old instance's requests are gone; clients send them again
  for (SessionId s = 1; s <= kSessions; ++s) {
    if (pick(4) == 0) {  // this client does not come back in time: its locks are lost
      model_.drop_session(s);
      continue;
    }
    std::vector<HeldLock> mine;
    for (Ino ino : old->inodes()) {
      for (const HeldLock& l : old->locks_of(ino)) {
        if (l.owner.session == s) mine.push_back(l);
      }
    }
    std::shuffle(mine.begin(), mine.end(), rng_);
    Result<std::vector<Status>> got = table_->reassert(s, mine, now_);
    if (!got) return violation("reassert refused: " + got.error().to_string());
    for (const Status& st : *got) {
      if (!st) violation("a consistent re-assertion refused: " + st.error().to_string());
    }
  }
  now_ += options_.table.reassert_grace_ms;
}

void Run::collect_grants() {
  for (WaiterId id : table_->take_granted()) {
    bool found = false;
    for (auto& [ino, q] : queues_) {
      auto it = std::find_if(q.begin(), q.end(), [id](const Pending& p) { return p.id == id; });
      if (it == q.end()) continue;
      note("  granted " + std::to_string(id) + ": " + to_string(it->request));
      ++result_.stats.woken;
      model_.apply(it->request);
      q.erase(it);
      found = true;
      break;
    }
    if (!found) violation("granted " + std::to_string(id) + ", which was not queued");
  }
}

std::vector<WaiterId> Run::forget_pending(const std::function<bool(const Pending&)>& which) {
  std::vector<WaiterId> out;
  for (auto& [ino, q] : queues_) {
    for (const Pending& p : q) {
      if (which(p)) out.push_back(p.id);
    }
    std::erase_if(q, which);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- The queue rules (see lock_table.h), restated over the model ----

size_t Run::pending_of(const Owner& o) const {
  size_t n = 0;
  for (const auto& [ino, q] : queues_) {
    n += std::count_if(q.begin(), q.end(), [&](const Pending& p) { return p.request.owner == o; });
  }
  return n;
}

bool Run::waited_on(const Owner& o) const {
  for (const auto& [ino, q] : queues_) {
    for (const Pending& p : q) {
      const HeldLock& r = p.request;
      if (model_.blocks(ino, o, r.owner, r.range, r.type)) return true;
    }
  }
  return false;
}

bool Run::yields(const Owner& o, size_t own_pending) const {
  return pending_of(o) == own_pending && !waited_on(o);
}

std::set<Owner> Run::queued_blockers(Ino ino, const Owner& o, Range r, LockType t,
                                     size_t before) const {
  std::set<Owner> out;
  auto it = queues_.find(ino);
  if (it == queues_.end()) return out;
  for (size_t i = 0; i < before && i < it->second.size(); ++i) {
    const HeldLock& q = it->second[i].request;
    if (q.owner != o && same_space(q.owner.kind, o.kind) && q.range.overlaps(r) &&
        incompatible(q.type, t)) {
      out.insert(q.owner);
    }
  }
  return out;
}

std::set<Owner> Run::blockers(Ino ino, const Owner& o, Range r, LockType t, size_t before,
                              size_t own_pending) const {
  std::set<Owner> out = model_.blockers(ino, o, r, t);
  if (yields(o, own_pending)) {
    for (const Owner& q : queued_blockers(ino, o, r, t, before)) out.insert(q);
  }
  return out;
}

bool Run::closes_cycle(const HeldLock& want) const {
  auto waits_for = [this](const Owner& x) {
    std::set<Owner> out;
    for (const auto& [ino, q] : queues_) {
      for (size_t i = 0; i < q.size(); ++i) {
        const HeldLock& r = q[i].request;
        if (r.owner != x) continue;
        for (const Owner& b : blockers(ino, x, r.range, r.type, i, 1)) out.insert(b);
      }
    }
    return out;
  };
  std::set<Owner> seen;
  std::vector<Owner> todo;
  for (const Owner& b : blockers(want.ino, want.owner, want.range, want.type,
                                 queues_.count(want.ino) ? queues_.at(want.ino).size() : 0, 0)) {
    todo.push_back(b);
  }
  while (!todo.empty()) {
    Owner x = todo.back();
    todo.pop_back();
    if (x == want.owner) return true;
    if (!seen.insert(x).second) continue;
    for (const Owner& next : waits_for(x)) todo.push_back(next);
  }
  return false;
}

// ---- Checks ----

void Run::check() {
  if (std::string c = model_.conflict(); !c.empty()) violation("conflicting holders: " + c);
  std::set<Ino> inodes;
  for (Ino ino : model_.inodes()) inodes.insert(ino);
  for (Ino ino : table_->inodes()) inodes.insert(ino);
  for (Ino ino : inodes) {
    if (std::string d = model_.diff(ino, table_->locks_of(ino)); !d.empty()) {
      violation("table and model differ: " + d);
    }
  }
  check_queues();
  check_probe();
}

void Run::check_queues() {
  for (Ino ino = 1; ino <= kInodes; ++ino) {
    std::vector<WaiterId> table_ids;
    for (const Waiter& w : table_->waiters_of(ino)) table_ids.push_back(w.id);
    std::vector<WaiterId> model_ids;
    const std::vector<Pending>& q = queues_[ino];
    for (const Pending& p : q) model_ids.push_back(p.id);
    if (table_ids != model_ids) violation("queue of ino " + std::to_string(ino) + " differs");
    for (size_t i = 0; i < q.size(); ++i) {
      const HeldLock& r = q[i].request;
      if (blockers(ino, r.owner, r.range, r.type, i, 1).empty()) {
        violation("request " + std::to_string(q[i].id) +
                  " waits with nothing in its way: " + to_string(r));
      }
    }
  }
}

void Run::check_probe() {
  const Ino ino = any_ino();
  const Owner o = any_owner();
  const Range r = o.kind == OwnerKind::kFlock ? Range::whole() : any_range();
  const LockType t = pick(2) ? LockType::kWrite : LockType::kRead;
  Result<std::optional<HeldLock>> got = table_->test(ino, o, r, t, now_);
  if (!got) return violation("test failed: " + got.error().to_string());
  const std::set<Owner> want = model_.blockers(ino, o, r, t);
  if (want.empty() != !got->has_value()) {
    return violation("test() disagrees with the model for " + to_string(HeldLock{ino, o, r, t}));
  }
  if (!got->has_value()) return;
  ++result_.stats.probes_conflicting;
  const HeldLock& l = **got;
  if (want.count(l.owner) == 0 || !l.range.overlaps(r) || !incompatible(l.type, t) ||
      !model_.blocks(ino, l.owner, o, l.range, t)) {
    violation("test() reported a lock that is not in the way: " + to_string(l));
  }
}

void Run::finish() {
  for (SessionId s = 1; s <= kSessions; ++s) {
    evict(s);
    collect_grants();
    check();
  }
  if (!table_->inodes().empty()) violation("the table keeps state after every session left");
}

void Run::note(std::string event) {
  events_.push_back(std::to_string(now_) + " " + std::move(event));
  if (!options_.trace && events_.size() > kEventsKept) events_.pop_front();
}

}  // namespace

void CheckerStats::add(const CheckerStats& o) {
  granted += o.granted;
  queued += o.queued;
  woken += o.woken;
  refused += o.refused;
  deadlocks += o.deadlocks;
  no_locks += o.no_locks;
  cancels += o.cancels;
  evictions += o.evictions;
  failovers += o.failovers;
  probes_conflicting += o.probes_conflicting;
}

std::string CheckerStats::to_string() const {
  return "granted " + std::to_string(granted) + ", queued " + std::to_string(queued) + ", woken " +
         std::to_string(woken) + ", refused " + std::to_string(refused) + ", EDEADLK " +
         std::to_string(deadlocks) + ", ENOLCK " + std::to_string(no_locks) + ", cancels " +
         std::to_string(cancels) + ", evictions " + std::to_string(evictions) + ", failovers " +
         std::to_string(failovers) + ", conflicting probes " + std::to_string(probes_conflicting);
}

CheckerResult run_checker(const CheckerOptions& options) { return Run(options).run(); }

}  // namespace dfs::locks::test
