#include "tests/sim/caps/caps_simulation.h"

#include "tests/sim/caps/caps_checker.h"

namespace dfs::caps::sim {
namespace {

constexpr TimeMs kSlotMs = 5;   // virtual time advances in slots
constexpr TimeMs kTickMs = 50;  // CapTable::tick period
constexpr size_t kRecentEvents = 60;

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
TimeMs between(std::mt19937_64& rng, TimeMs lo, TimeMs hi) {
  return std::uniform_int_distribution<TimeMs>(lo, hi)(rng);
}

std::string describe(const ToClient& m) {
  if (const auto* mds = std::get_if<MdsMessage>(&m)) return caps::describe(*mds);
  if (const auto* l = std::get_if<LeaseReply>(&m)) {
    return "Lease " + std::string(error_code_name(l->code)) + " " + std::to_string(l->lease_ms) +
           " ms from " + std::to_string(l->sent_at);
  }
  return "MutateDone req=" + std::to_string(std::get<MutateDone>(m).req_id);
}

std::string describe(const ToMds& m) {
  if (const auto* c = std::get_if<ClientMessage>(&m)) return caps::describe(*c);
  const MutateRequest& r = std::get<MutateRequest>(m);
  return "Mutate req=" + std::to_string(r.req_id) + " ino=" + std::to_string(r.ino) + " " +
         domain_name(r.domain);
}

}  // namespace

std::string replay_command(uint64_t seed) {
  return "DFS_SEED=" + std::to_string(seed) + " ./caps_sim_test";
}

CapsSimulation::CapsSimulation(SimOptions options)
    : options_(options), rng_(options.seed), net_(rng_) {}

// ---- Setup and faults ----

void CapsSimulation::setup() {
  int clients = static_cast<int>(between(rng_, 2, 4));
  result_.clients = clients;
  for (Ino i = 0; i < 3; ++i) inodes_.push_back(InodeInfo{10 + i, InodeKind::kFile});
  for (Ino i = 0; i < 2; ++i) inodes_.push_back(InodeInfo{20 + i, InodeKind::kDir});
  CapTableOptions t = options_.table;
  t.incarnation = incarnation_;
  table_ = std::make_unique<CapTable>(t);
  for (int i = 0; i < clients; ++i) {
    clients_.emplace_back(i, options_.client, options_.table.session_timeout_ms);
    restart_at_.push_back(0);
    open_session(clients_.back());
  }
  choose_faults();
}

// Each seed draws its own weather: from a clean network to a very lossy one.
void CapsSimulation::choose_faults() {
  faults_.loss = uniform(rng_, 0, 0.1);
  faults_.duplicate = uniform(rng_, 0, 0.05);
  faults_.max_delay_ms = between(rng_, 2, 60);
  faults_.late = uniform(rng_, 0, 0.05);
  faults_.late_max_ms = between(rng_, 100, 3'000);
  net_.set_faults(faults_);
  crash_per_s_ = uniform(rng_, 0, 0.05);
  pause_per_s_ = uniform(rng_, 0, 0.08);
  mds_crash_per_s_ = uniform(rng_, 0, 0.06);
}

void CapsSimulation::inject_faults() {
  const double slot = kSlotMs / 1000.0;
  const TimeMs timeout = options_.table.session_timeout_ms;
  for (SimClient& c : clients_) {
    if (!c.running()) continue;
    if (uniform(rng_, 0, 1) < crash_per_s_ * slot) {
      c.crash();
      restart_at_[c.index()] = now_ + between(rng_, 50, 2 * timeout);
      ++result_.stats.client_crashes;
      log("client " + std::to_string(c.index()) + " crashes");
    } else if (!c.paused(now_) && uniform(rng_, 0, 1) < pause_per_s_ * slot) {
      TimeMs until = now_ + between(rng_, 100, 3 * timeout);
      c.pause_until(until);
      ++result_.stats.pauses;
      log("client " + std::to_string(c.index()) + " pauses until " + std::to_string(until));
    }
  }
  if (uniform(rng_, 0, 1) < mds_crash_per_s_ * slot) crash_mds();
}

void CapsSimulation::heal() {
  healing_ = true;
  net_.set_faults(NetworkFaults{.max_delay_ms = 10});
  for (SimClient& c : clients_) c.pause_until(0);
  log("faults stop");
}

void CapsSimulation::crash_mds() {
  std::vector<SessionId> known;
  for (SessionId s : table_->sessions()) {
    if (!storage_.fenced(s)) known.push_back(s);
  }
  CapTableOptions t = options_.table;
  t.incarnation = ++incarnation_;
  table_ = std::make_unique<CapTable>(t);
  tickets_.clear();
  waiting_.clear();
  ++result_.stats.mds_crashes;
  log("mds crashes; mds." + std::to_string(incarnation_) + " awaits " +
      std::to_string(known.size()) + " sessions");
  table_->begin_reconnect(known, now_);
  drain();
}

void CapsSimulation::open_session(SimClient& c) {
  SessionId s = next_session_++;
  // Opening is an RPC that succeeded; its answer carries a full lease.
  if (Status st = table_->open_session(s, now_); !st)
    violation("open_session: " + st.error().to_string());
  c.start(s, now_ + options_.table.session_timeout_ms);
  log("client " + std::to_string(c.index()) + " opens session " + std::to_string(s));
}

// ---- The MDS ----

void CapsSimulation::deliver(const Delivery& d) {
  ++result_.stats.events;
  result_.trace_hash = result_.trace_hash * 1000003 + static_cast<uint64_t>(d.at) * 31 +
                       d.session * 7 + (d.to_mds ? d.up.index() : 10 + d.down.index());
  if (d.to_mds) {
    if (d.incarnation != incarnation_) return;  // sent to an instance that died
    log("mds <- " + std::to_string(d.session) + ": " + describe(d.up));
    mds_receive(d);
    return;
  }
  for (SimClient& c : clients_) {
    if (c.running() && c.session() == d.session) {
      log(std::to_string(d.session) + " <- mds." + std::to_string(d.incarnation) + ": " +
          describe(d.down));
      ClientContext cx = context();
      c.deliver(cx, d);
    }
  }
}

void CapsSimulation::mds_receive(const Delivery& d) {
  const SessionId s = d.session;
  if (const auto* m = std::get_if<MutateRequest>(&d.up)) {
    mds_mutate(s, *m);
    return;
  }
  const ClientMessage& m = std::get<ClientMessage>(d.up);
  if (const auto* w = std::get_if<Want>(&m)) {
    ignore_error(table_->want(s, *w, now_), "the client resends an unanswered want");
  } else if (const auto* a = std::get_if<Ack>(&m)) {
    ignore_error(table_->ack(s, *a, now_), "an evicted session learns it from its renew");
  } else if (const auto* r = std::get_if<Release>(&m)) {
    ignore_error(table_->release(s, *r, now_), "as for acks");
  } else {
    bool renew = std::holds_alternative<Renew>(m);
    TimeMs sent_at = renew ? std::get<Renew>(m).sent_at : std::get<Reconnect>(m).sent_at;
    Result<TimeMs> lease =
        renew ? table_->renew(s, now_) : table_->reconnect(s, std::get<Reconnect>(m), now_);
    LeaseReply answer{.code = lease ? ErrorCode::kOk : lease.error().code(),
                      .sent_at = sent_at,
                      .lease_ms = lease ? *lease : 0,
                      .incarnation = incarnation_};
    drain();  // an eviction by reconnect() must be fenced before the answer leaves
    reply(s, answer);
  }
  drain();
}

void CapsSimulation::mds_mutate(SessionId s, const MutateRequest& m) {
  std::pair<SessionId, uint64_t> key{s, m.req_id};
  if (applied_.count(key) != 0) return reply(s, MutateDone{m.req_id});
  if (waiting_.count(key) != 0) return;
  DomainRights r = rights_of(m.domain);
  Result<MutationTicket> t = table_->prepare_mutation(s, m.ino, m.kind, r.cache | r.excl, now_);
  if (!t) return;  // not reconnected, evicted...: the client retries or starts over
  waiting_.insert(key);
  tickets_[t->id] = Ticket{s, m};
  if (t->ready) apply_mutation(t->id);
  drain();
}

void CapsSimulation::apply_mutation(uint64_t id) {
  auto it = tickets_.find(id);
  if (it == tickets_.end()) return;
  Ticket t = it->second;
  tickets_.erase(it);
  // The MDS applies the change, unless the session was fenced meanwhile.
  if (storage_.write(t.session, t.request.ino, t.request.domain)) {
    ++result_.stats.mutations;
  } else {
    ++result_.stats.refused_writes;
  }
  waiting_.erase({t.session, t.request.req_id});
  applied_.insert({t.session, t.request.req_id});
  table_->finish_mutation(id, now_);
  reply(t.session, MutateDone{t.request.req_id});
}

void CapsSimulation::drain() {
  for (;;) {
    std::vector<Outgoing> out = table_->take_outbox();
    std::vector<MutationReady> ready = table_->take_ready();
    if (out.empty() && ready.empty()) return;
    for (Outgoing& o : out) {
      if (std::holds_alternative<Evicted>(o.message)) {
        storage_.fence(o.to);  // published before anything after it is delivered
        ++result_.stats.evictions;
        log("mds evicts session " + std::to_string(o.to));
      }
      result_.stats.grants += std::holds_alternative<Grant>(o.message);
      result_.stats.revokes += std::holds_alternative<Revoke>(o.message);
      reply(o.to, ToClient{std::move(o.message)});
    }
    for (const MutationReady& r : ready) {
      if (r.cancelled) {
        tickets_.erase(r.id);
      } else {
        apply_mutation(r.id);
      }
    }
  }
}

void CapsSimulation::reply(SessionId s, ToClient m) {
  Delivery d;
  d.session = s;
  d.incarnation = incarnation_;
  d.down = std::move(m);
  net_.send(now_, std::move(d));
}

// ---- The run ----

ClientContext CapsSimulation::context() {
  ClientContext cx;
  cx.now = now_;
  cx.rng = &rng_;
  cx.net = &net_;
  cx.storage = &storage_;
  cx.inodes = &inodes_;
  cx.clients = &clients_;
  cx.stats = &result_.stats;
  cx.mds_incarnation = incarnation_;
  cx.quiet = healing_;
  cx.violation = [this](std::string v) { violation(std::move(v)); };
  cx.log = [this](std::string e) { log(std::move(e)); };
  return cx;
}

void CapsSimulation::step_clients() {
  for (SimClient& c : clients_) {
    bool crashed = !c.running();
    if ((crashed && (healing_ || now_ >= restart_at_[c.index()])) || c.needs_new_session()) {
      open_session(c);
    }
    ClientContext cx = context();
    c.step(cx);
    check();
  }
}

void CapsSimulation::check() {
  if (!result_.violations.empty()) return;
  CheckScope scope{table_.get(), &clients_, &storage_, &inodes_, now_, kTickMs};
  std::vector<std::string> found;
  check_safety(scope, found);
  for (std::string& v : found) violation(std::move(v));
}

void CapsSimulation::log(std::string event) {
  std::string line = std::to_string(now_) + " " + std::move(event);
  if (options_.trace) {
    result_.events.push_back(std::move(line));
    return;
  }
  recent_.push_back(std::move(line));
  if (recent_.size() > kRecentEvents) recent_.pop_front();
}

void CapsSimulation::violation(std::string what) {
  log("VIOLATION " + what);
  result_.violations.push_back(std::to_string(now_) + " ms: " + std::move(what));
}

SimResult CapsSimulation::run() {
  setup();
  const TimeMs end = options_.fault_ms + options_.heal_ms;
  for (now_ = 0; now_ <= end && result_.violations.empty(); now_ += kSlotMs) {
    if (!healing_ && now_ >= options_.fault_ms) heal();
    while (std::optional<Delivery> d = net_.pop_due(now_)) {
      deliver(*d);
      check();
    }
    if (now_ % kTickMs == 0) {
      table_->tick(now_);
      drain();
      check();
    }
    if (!healing_) inject_faults();
    step_clients();
  }
  result_.stopped_at = now_ - kSlotMs;
  if (result_.violations.empty()) {
    CheckScope scope{table_.get(), &clients_, &storage_, &inodes_, now_, kTickMs};
    std::vector<std::string> found;
    check_settled(scope, found);
    for (std::string& v : found) violation(std::move(v));
  }
  if (!options_.trace) result_.events.assign(recent_.begin(), recent_.end());
  return result_;
}

}  // namespace dfs::caps::sim
