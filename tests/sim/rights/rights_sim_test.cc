// Seeded simulation of the caching rights the daemons grant (docs/capabilities.md):
// the MDS's own classes (ExclusiveCache, DirRights, ReconnectPhase) and the client's
// (CacheRights), run against each other in virtual time over a network that delays,
// reorders and breaks connections, with clients that pause and crash and an MDS that
// fails over. The lease and reconnect-phase rules are the daemon's own
// (mds/service/lease_rules.h); the MDS's glue around the classes (session opens,
// renewals, evictions, the reconnect phase, claims before a request is served) is
// restated here as MdsService does it.
//
// Clients also open and close a few shared files, for writing asking to own each (the
// file rights: given at an open when no other session has the file open), for reading
// asking to share it (read shares: given while nothing changes the file; a writing open
// recalls them and ends the opener's own), as FileClient does, and change them without
// an open (a setattr, an xattr, a link: counted while in flight, recalling the read
// shares first, and no file is given while a change of it is).
//
// Checked after every step (every message delivered, every tick):
//   - no two clients hold conflicting rights: no directory or file is cached alone by
//     two clients, and a client caching the whole file system is the only one caching
//     anything alone (each as its CacheRights says, while its lease holds: the client's
//     own rule);
//   - no client caches a file alone while another client holds it open or shares it for
//     reading, and no client shares a file another holds open for writing;
//   - a change of a file applies, and an open for writing is served, only while no other
//     client caches the file alone or shares it for reading; and a client that takes a
//     file up (owned or shared) knows it as it is: no other client's change applied since
//     the MDS read the file for the grant;
//   - what the MDS lets a client own and is not recalling stays within the bound per
//     client (kMaxDirs, far below the default so that the least recently used are
//     recalled in every run);
//   - no recall waits past the session timeout (plus a tick) before its holder answers or
//     is evicted.
// And at every point where the MDS lets a client go on: a session open is answered, or a
// request that names a directory or file (an open) is served, only while no other
// client may still cache or defer alone for it. Rights keep moving: every client that
// stays up holds exclusive caching or owns a directory at some point, and files are
// owned and shared for reading in every run.
// DFS_SIM_SEEDS=n runs more seeds; DFS_SEED=n replays one with a trace.
#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "client-fuse/libdfs/cache_rights.h"
#include "common/rpc/asio.h"
#include "mds/service/changes_in_flight.h"
#include "mds/service/dir_rights.h"
#include "mds/service/exclusive_cache.h"
#include "mds/service/lease_rules.h"
#include "mds/service/reconnect_phase.h"

namespace dfs::sim_rights {
namespace {

using client::CacheRights;
using mds::ChangesInFlight;
using mds::DirRights;
using mds::ExclusiveCache;
using mds::ReconnectPhase;

constexpr int64_t kTimeoutMs = 3000;     // session timeout (also the recall timeout)
constexpr int64_t kRenewEveryMs = 1000;  // a third of it, as mounts renew
constexpr int64_t kGraceMs = 2000;       // reconnect grace after a failover
constexpr int64_t kTickMs = 1000;        // the MDS's lease loop
constexpr int64_t kRunMs = 40'000;
constexpr int kClients = 3;
constexpr size_t kMaxDirs = 8;           // the bound on what one client owns
constexpr uint64_t kRootDir = 1;
constexpr uint64_t kFirstFile = 1'000'000;  // the shared files, kFiles of them
constexpr int kFiles = 4;

// Virtual time: milliseconds since the start of the run.
int64_t g_now = 0;
Clock::time_point now_tp() { return Clock::time_point{} + std::chrono::milliseconds(g_now); }

struct Trace {
  bool on = false;
  void operator()(const std::string& line) const {
    if (on) MESSAGE(g_now << " ms: " << line);
  }
};

// Events in time order; ties in the order they were scheduled.
class Events {
 public:
  void at(int64_t when, std::function<void()> fn) {
    queue_.emplace(std::make_pair(when, next_++), std::move(fn));
  }
  bool run_next(int64_t until) {
    if (queue_.empty() || queue_.begin()->first.first > until) return false;
    auto node = queue_.extract(queue_.begin());
    g_now = node.key().first;
    node.mapped()();
    return true;
  }

 private:
  std::map<std::pair<int64_t, uint64_t>, std::function<void()>> queue_;
  uint64_t next_ = 0;
};

// What a client's messages carry; the MDS's answers come back as closures.
struct SessionOpen {
  bool holds_exclusive = false;
  std::vector<uint64_t> owned;        // directories
  std::vector<uint64_t> owned_files;
  std::vector<uint64_t> read_files;   // shared for reading
  std::vector<uint64_t> open_files;   // re-opened at the new MDS (the reclaim)
};
// A request that names `dir`; `mkdir`: it creates `made` in `dir`; `open`: `dir` is a
// file it opens; `change`: it changes file `dir` without an open.
struct Request {
  uint64_t dir = 0;
  bool mkdir = false;
  uint64_t made = 0;
  bool open = false;
  bool reopen = false;  // an open held across a failover, counted again
  bool read = false;    // an open for reading only
  bool change = false;
  bool stat = false;    // a lookup or getattr, asking to share the inode
};

class World;

// One mount: CacheRights and its lease, as FileClient drives them.
struct SimClient {
  int index = 0;
  int generation = 0;  // a new entity after an eviction
  std::string entity() const {
    return "client." + std::to_string(index) + "." + std::to_string(generation);
  }
  CacheRights rights{true};
  int64_t lease_expires = -1;
  bool crashed = false;
  int64_t paused_until = 0;
  bool session_open = false;
  bool opening = false;
  uint64_t connection = 0;  // bumped when the connection breaks
  int64_t next_renew = 0;
  bool held_anything = false;  // for liveness
  std::vector<uint64_t> acks_unanswered;
  std::set<uint64_t> open_files;  // opens the MDS answered, not closed since
  std::set<uint64_t> write_files;  // of them, opened for writing
  uint64_t instance_seen = 0;     // the MDS instance its open files are counted by
  std::set<uint64_t> reclaims_unanswered;  // open files not yet counted again by it
  uint64_t write_opens_sent = 0;  // FileClient::write_opens_sent_

  bool paused() const { return g_now < paused_until; }
  // What its fast paths ask (FileClient::alone): the right, and the lease.
  bool alone(uint64_t dir) const { return !crashed && g_now < lease_expires && rights.alone(dir); }
  bool exclusive_now() const { return !crashed && g_now < lease_expires && rights.exclusive(); }
  bool read_shared(uint64_t file) const {
    return !crashed && g_now < lease_expires && rights.read_shared(file);
  }
};

class World {
 public:
  World(uint64_t seed, bool trace) : rng_(seed) { trace_.on = trace; }

  void run() {
    ++instance_;
    start_mds();
    for (int i = 0; i < kClients; ++i) {
      clients_.push_back(std::make_unique<SimClient>());
      clients_.back()->index = i;
    }
    for (auto& c : clients_) events_.at(pick(0, 50), [this, c = c.get()] { client_step(*c); });
    events_.at(kTickMs, [this] { mds_tick(); });
    // Faults: a failover or two, client pauses and a crash, connection breaks.
    for (int i = 0; i < 2; ++i) events_.at(pick(5'000, kRunMs - 10'000), [this] { failover(); });
    for (int i = 0; i < 4; ++i) {
      events_.at(pick(1'000, kRunMs - 5'000), [this] {
        auto& c = *clients_[pick(0, kClients - 1)];
        if (c.crashed) return;
        c.paused_until = std::max(c.paused_until, g_now + pick(100, 2 * kTimeoutMs));
        trace_(c.entity() + " paused until " + std::to_string(c.paused_until));
      });
    }
    events_.at(pick(10'000, kRunMs - 10'000), [this] {
      auto& c = *clients_[pick(0, kClients - 1)];
      c.crashed = true;
      trace_(c.entity() + " crashed");
    });
    for (int i = 0; i < 6; ++i) {
      events_.at(pick(1'000, kRunMs - 2'000),
                 [this] { break_connection(*clients_[pick(0, kClients - 1)]); });
    }
    while (events_.run_next(kRunMs)) {
      io_.poll();
      io_.restart();
      check_recalls_bounded();
      check_no_conflicting_rights();
      check_no_share_beside_writer();
      check_owned_bounded();
    }
    for (auto& c : clients_) {
      if (!c->crashed) CHECK_MESSAGE(c->held_anything, c->entity() << " never held a right");
    }
  }

  // What a run went through, so that a test can tell that its faults happened.
  struct Counts {
    size_t checks = 0, steps = 0, evictions = 0, failovers = 0, exclusive_taken = 0,
           dirs_owned = 0, files_owned = 0, files_shared = 0, stats_shared = 0, recalls = 0,
           bound_recalls = 0, changes = 0;
    void add(const Counts& o) {
      checks += o.checks, steps += o.steps, evictions += o.evictions, failovers += o.failovers;
      exclusive_taken += o.exclusive_taken, dirs_owned += o.dirs_owned, recalls += o.recalls;
      files_owned += o.files_owned, bound_recalls += o.bound_recalls, changes += o.changes;
      files_shared += o.files_shared;
      stats_shared += o.stats_shared;
    }
  };
  const Counts& counts() const { return counts_; }

 private:
  // ---- the network: per client, FIFO both ways, broken now and then ----

  void to_mds(SimClient& c, std::function<void()> deliver) {
    const uint64_t conn = c.connection;
    const uint64_t instance = instance_;
    int64_t when = std::max(g_now + pick(1, 20), c_to_mds_last_[c.index]);
    c_to_mds_last_[c.index] = when;
    events_.at(when, [this, &c, conn, instance, deliver = std::move(deliver)] {
      if (c.connection != conn || instance_ != instance) return;  // the connection broke
      deliver();
    });
  }
  // Returns false when the client has no connection (crashed: its socket is gone).
  // `conn`: the connection the answer goes on (a request's); the current one otherwise.
  bool to_client(SimClient& c, std::function<void()> deliver, std::optional<uint64_t> on = {}) {
    if (c.crashed) return false;
    const uint64_t conn = on.value_or(c.connection);
    int64_t when = std::max(g_now + pick(1, 20), mds_to_c_last_[c.index]);
    mds_to_c_last_[c.index] = when;
    events_.at(when, [this, &c, conn, deliver = std::move(deliver)] {
      if (c.crashed || c.connection != conn) return;
      if (c.paused()) {  // read when it runs again, in order
        events_.at(c.paused_until, [this, &c, conn, deliver] {
          if (!c.crashed && c.connection == conn) deliver();
        });
        return;
      }
      deliver();
    });
    return true;
  }
  void break_connection(SimClient& c) {
    if (c.crashed) return;
    ++c.connection;
    c.session_open = false;  // the next call re-opens the session on a new connection
    c.opening = false;
    trace_(c.entity() + ": connection broken");
  }

  // ---- the client ----

  void client_step(SimClient& c) {
    events_.at(g_now + pick(20, 120), [this, &c] { client_step(c); });
    if (c.crashed || c.paused()) return;
    // The lease watch: stop every right once the lease is out.
    if (g_now >= c.lease_expires && c.rights.lapse()) trace_(c.entity() + ": lease lapsed");
    if (!c.session_open) {
      if (!c.opening) open_session(c);
      return;
    }
    if (g_now >= c.next_renew) {
      c.next_renew = g_now + kRenewEveryMs;
      renew(c);
    }
    // Resend acknowledgements not answered yet (a connection broke under them).
    for (uint64_t seq : c.acks_unanswered) send_ack(c, seq);
    // Work: mostly in its own directories, sometimes in another's.
    const int r = pick(0, 99);
    if (r < 30) {
      // Mostly in a directory of its own (or the root), where it is alone.
      uint64_t parent = kRootDir;
      auto own = c.rights.owned().dirs();
      if (!own.empty() && pick(0, 3) > 0) parent = own[pick(0, static_cast<int>(own.size()) - 1)];
      send_request(c, Request{parent, true, next_dir_++});
    } else if (r < 70 && !dirs_.empty()) {
      Request touch{dirs_[pick(0, static_cast<int>(dirs_.size()) - 1)], false};
      touch.stat = pick(0, 1) == 0;
      send_request(c, touch);
    } else if (r < 75) {
      Request touch{kRootDir, false};
      touch.stat = pick(0, 1) == 0;
      send_request(c, touch);
    } else if (r < 85) {
      const uint64_t file = kFirstFile + pick(0, kFiles - 1);
      Request open{file, false, 0, true};
      open.read = pick(0, 1) == 0;
      if (!c.open_files.count(file)) send_request(c, open);
    } else if (r < 93 && !c.open_files.empty()) {
      auto it = std::next(c.open_files.begin(), pick(0, static_cast<int>(c.open_files.size()) - 1));
      const uint64_t file = *it;
      c.open_files.erase(it);
      c.write_files.erase(file);
      c.reclaims_unanswered.erase(file);
      send_release(c, file);
    } else if (r >= 93 && r < 97) {
      Request change{kFirstFile + pick(0, kFiles - 1)};
      change.change = true;
      send_request(c, change);
    } else if (r >= 97) {
      Request stat{kFirstFile + pick(0, kFiles - 1)};
      stat.stat = true;
      send_request(c, stat);
    }
  }

  void open_session(SimClient& c) {
    c.opening = true;
    SessionOpen hello{c.rights.exclusive(), c.rights.owned().dirs(), c.rights.owned().files(),
                      c.rights.owned().shared(), {c.open_files.begin(), c.open_files.end()}};
    const int64_t sent = g_now;
    const std::string entity = c.entity();
    to_mds(c, [this, &c, hello, sent, entity] { mds_session_open(c, entity, hello, sent); });
  }

  void on_session_reply(SimClient& c, bool ok, bool exclusive, uint64_t seq, int64_t sent,
                        int64_t lease_ms = kTimeoutMs) {
    c.opening = false;
    if (!ok) {  // fenced: evicted; go on as a new entity
      on_evicted(c);
      return;
    }
    c.session_open = true;
    c.lease_expires = std::max(c.lease_expires, sent + lease_ms * 3 / 4);
    trace_(c.entity() + ": session open answered (sent at " + std::to_string(sent) +
           (exclusive ? ", exclusive)" : ")"));
    if (auto give_up = c.rights.exclusive_notice(exclusive, seq, true, "session reply")) {
      give_up_rights(c);
    }
    take_grant(c);
  }

  void on_evicted(SimClient& c) {
    trace_(c.entity() + ": learns it was evicted");
    c.rights.evicted();
    ++c.generation;
    c.session_open = false;
    c.opening = false;
    c.acks_unanswered.clear();
    c.open_files.clear();  // its handles went with the session
    c.write_files.clear();
    c.reclaims_unanswered.clear();
    c.lease_expires = -1;
  }

  void take_grant(SimClient& c) {
    if (c.rights.take_grant(true)) {
      ++counts_.exclusive_taken;
      trace_(c.entity() + ": takes up exclusive caching");
      c.held_anything = true;
    }
  }

  void renew(SimClient& c) {
    const int64_t sent = g_now;
    const std::string entity = c.entity();
    to_mds(c, [this, &c, sent, entity] { mds_renew(c, entity, sent); });
  }

  void on_renew_reply(SimClient& c, bool ok, int64_t sent, bool exclusive, uint64_t seq,
                      bool dirs_recall, int64_t lease_ms = kTimeoutMs) {
    if (!ok) {
      on_evicted(c);
      return;
    }
    c.lease_expires = std::max(c.lease_expires, sent + lease_ms * 3 / 4);
    auto renewal = c.rights.renewed(exclusive, seq, dirs_recall);
    if (renewal.was_lapsed) {
      trace_(c.entity() + ": renewal answered after a lapse (sent at " + std::to_string(sent) +
             ", " + std::to_string(renewal.dirs_dropped) + " directories dropped)");
    }
    if (renewal.was_lapsed) take_grant(c);
  }

  void on_notice(SimClient& c, bool exclusive, uint64_t seq, std::vector<uint64_t> dirs) {
    if (!dirs.empty()) {
      trace_(c.entity() + ": recall " + std::to_string(seq % 100000) + " of directory " +
             std::to_string(dirs.front()));
      auto recall = c.rights.dirs_recalled(dirs, seq, false);
      if (recall.start) give_up_rights(c);
    } else if (c.rights.exclusive_notice(exclusive, seq, false, "notice")) {
      give_up_rights(c);
    }
    take_grant(c);
  }

  // Pushes (which takes a while; recalls arriving meanwhile join the give-up) and
  // acknowledges, round by round, as FileClient::give_up_rights does.
  void give_up_rights(SimClient& c) {
    events_.at(g_now + pick(1, 50), [this, &c] { give_up_round(c); });
  }
  void give_up_round(SimClient& c) {
    if (c.crashed) return;  // never answers: the MDS evicts it
    if (c.paused()) {
      events_.at(c.paused_until, [this, &c] { give_up_round(c); });
      return;
    }
    auto round = c.rights.next_round();
    if (!round) {
      take_grant(c);  // granted again meanwhile
      return;
    }
    for (uint64_t seq : round->answering) {
      trace_(c.entity() + ": acknowledges " + std::to_string(seq % 100000));
      c.acks_unanswered.push_back(seq);
      send_ack(c, seq);
    }
    give_up_rights(c);
  }

  void send_ack(SimClient& c, uint64_t seq) {
    const std::string entity = c.entity();
    to_mds(c, [this, &c, seq, entity] {
      if (!session_ok(entity)) return;
      cache_->acknowledged(entity, seq);
      dir_rights_->acknowledged(entity, seq);
      recall_started_.erase({entity, seq});
      to_client(c, [&c, seq] { std::erase(c.acks_unanswered, seq); });
    });
  }

  void send_request(SimClient& c, Request req) {
    const std::string entity = c.entity();
    const uint64_t epoch = c.rights.ownership_epoch();
    // FileClient::mknod asks for every directory it makes; FileClient::open for a file
    // it is not alone on and holds nothing of: to own it when it writes, to share it
    // when it reads. A writer gives up its own share first.
    const bool fresh_open = req.open && !req.reopen && !c.alone(req.dir);
    const bool ask_own = req.mkdir || (fresh_open && !req.read);
    // FileClient::mds_inode_shared: a lookup or getattr asks to share what it answers,
    // unless the mount holds exclusive caching.
    const bool ask_share = (fresh_open && req.read) || (req.stat && !c.rights.exclusive());
    if (req.open && !req.read) {
      c.rights.share_given_up(req.dir);
      ++c.write_opens_sent;
    }
    const uint64_t writes_before = c.write_opens_sent;
    to_mds(c, [this, &c, entity, req, epoch, ask_own, ask_share, writes_before] {
      asio::co_spawn(io_, mds_serve(c, entity, req, epoch, ask_own, ask_share, writes_before),
                     asio::detached);
    });
  }

  void send_release(SimClient& c, uint64_t file) {
    const std::string entity = c.entity();
    to_mds(c, [this, entity, file] {
      if (!session_ok(entity)) return;
      auto it = opens_.find(file);
      if (it == opens_.end() || !it->second.count(entity)) return;
      if (--it->second[entity] == 0) it->second.erase(entity);
      trace_("MDS counts a release of " + std::to_string(file) + " by " + entity);
    });
  }

  // ---- the MDS (MdsService's glue) ----

  void start_mds() {
    auto send = [this](const std::string& client, const proto::CacheRightsNotice& n) {
      SimClient* c = by_entity(client);
      if (!c) return false;
      std::vector<uint64_t> dirs(n.dirs().begin(), n.dirs().end());
      const bool exclusive = n.exclusive();
      const uint64_t seq = n.seq();
      if (!dirs.empty() || !exclusive) {
        if (recall_started_.emplace(std::make_pair(client, seq), g_now).second) {
          ++counts_.recalls;
          if (n.reason().find("least recently used") != std::string::npos) ++counts_.bound_recalls;
        }
      }
      if (exclusive) check_exclusive_grant(client);
      return to_client(*c,
                       [this, c, exclusive, seq, dirs] { on_notice(*c, exclusive, seq, dirs); });
    };
    auto evict_fn = [this](const std::string& client, const std::string& reason) {
      events_.at(g_now, [this, client, reason] { evict(client, reason); });
    };
    cache_ = std::make_unique<ExclusiveCache>(
        io_.get_executor(), std::chrono::milliseconds(kTimeoutMs), send, evict_fn, now_tp,
        [] { return uint64_t(1'700'000'000'000) + uint64_t(g_now); });
    dir_rights_ = std::make_unique<DirRights>(
        io_.get_executor(), std::chrono::milliseconds(kTimeoutMs), kMaxDirs, send, evict_fn,
        [this] { return cache_->issue_seq(); }, now_tp);
    phase_ = std::make_unique<ReconnectPhase>(io_.get_executor());
  }

  void failover() {
    trace_("MDS failover");
    ++counts_.failovers;
    // The old instance's waiters give up; its connections are gone.
    ++instance_;
    cache_->clear();
    dir_rights_->clear();
    phase_->clear();
    opens_.clear();  // the new instance learns them from the reclaim
    io_.poll();
    io_.restart();
    ended_instances_.push_back({std::move(cache_), std::move(dir_rights_), std::move(phase_)});
    recall_started_.clear();
    start_mds();
    for (auto& c : clients_) break_connection(*c);
    std::set<std::string> awaited;
    for (auto& [client, last] : sessions_) {
      awaited.insert(client);
      last = g_now;  // a new instance counts its sessions' silence from its start
    }
    if (awaited.empty()) return;
    const auto wait = mds::lease_rules::reconnect_wait(std::chrono::milliseconds(kGraceMs),
                                                       std::chrono::milliseconds(kTimeoutMs));
    cache_->begin_grace(now_tp(), wait);
    phase_->begin(std::move(awaited), now_tp() + wait);
    // MdsService: no file is given until every mount of before has counted its opens
    // again or been evicted for silence.
    file_grants_from_ =
        g_now + std::chrono::duration_cast<std::chrono::milliseconds>(wait).count() +
        kTimeoutMs + 1000;
  }

  bool session_ok(const std::string& entity) const { return fenced_.count(entity) == 0; }

  void mds_session_open(SimClient& c, std::string entity, SessionOpen hello, int64_t sent) {
    const uint64_t instance = instance_;
    asio::co_spawn(
        io_,
        [](World* w, SimClient* c, std::string entity, SessionOpen hello, int64_t sent,
           uint64_t instance) -> awaitable<void> {
          if (!w->session_ok(entity)) {
            w->to_client(*c, [w, c, sent] { w->on_session_reply(*c, false, false, 0, sent); });
            co_return;
          }
          const uint64_t conn = c->connection;
          w->phase_->reconnected(entity, false);
          w->sessions_[entity] = g_now;
          auto answer = co_await w->cache_->open(entity, true, hello.holds_exclusive);
          if (w->instance_ != instance || !w->session_ok(entity)) co_return;
          w->dir_rights_->reasserted(entity, hello.owned, hello.owned_files, hello.read_files);
          w->end_phase_if_due();
          // During a reconnect phase the answer carries nothing cached elsewhere (the
          // phase holds the session's requests instead, checked when they are served).
          if (!w->phase_->running()) w->check_session_answer(entity);
          if (answer.exclusive) w->check_exclusive_grant(entity);
          const int64_t lease = w->lease_ms_for(entity);
          w->to_client(
              *c,
              [w, c, answer, sent, lease, instance] {
                w->on_session_reply(*c, true, answer.exclusive, answer.seq, sent, lease);
                // A new MDS instance: the files held open are counted again, each by an
                // open of its own (FileClient::reopen_all), which waits like any request
                // and is sent again on a new connection until answered (MdsSession
                // resends the calls a broken connection took).
                if (c->instance_seen != instance) {
                  c->instance_seen = instance;
                  c->reclaims_unanswered = c->open_files;
                }
                for (uint64_t file : c->reclaims_unanswered) {
                  Request reopen{file, false, 0, true, true};
                  reopen.read = true;  // a reclaim asks for nothing
                  w->send_request(*c, reopen);
                }
              },
              conn);
        }(this, &c, std::move(entity), std::move(hello), sent, instance),
        asio::detached);
  }

  void mds_renew(SimClient& c, const std::string& entity, int64_t sent) {
    if (!session_ok(entity)) {
      to_client(c, [this, &c, sent] { on_renew_reply(c, false, sent, false, 0, false); });
      return;
    }
    if (!sessions_.count(entity)) return;  // not open here: the client re-opens first
    sessions_[entity] = g_now;
    const bool exclusive = cache_->holder() == entity && !cache_->recalling();
    const uint64_t seq = cache_->seq();
    const bool dirs_recall = dir_rights_->pending_recall(entity) != 0;
    const int64_t lease = lease_ms_for(entity);
    to_client(c, [this, &c, sent, exclusive, seq, dirs_recall, lease] {
      on_renew_reply(c, true, sent, exclusive, seq, dirs_recall, lease);
    });
  }

  awaitable<void> mds_serve(SimClient& c, std::string entity, Request req, uint64_t epoch,
                            bool ask_own, bool ask_share, uint64_t writes_before) {
    const uint64_t instance = instance_;
    const uint64_t conn = c.connection;
    if (!session_ok(entity) || !sessions_.count(entity)) co_return;
    dir_rights_->used(entity, req.dir);  // MdsService::note_dirs_used
    // A mkdir changes its parent (RequestNames::changed_inos).
    const bool changes = req.change || req.mkdir;
    // As MdsService::serve: counted before any claim, until applied.
    auto change = changes_in_flight_[instance].count(changes ? req.dir : 0);
    // Held back while rights of the previous instance may cover it (MdsService::serve).
    if (phase_->running() && cache_->holder() != entity) co_await phase_->wait();
    if (instance_ != instance) co_return;
    co_await cache_->given_up_for(entity);
    if (instance_ != instance || !session_ok(entity)) co_return;
    // MdsService::claim_touched: a change recalls the read shares of others first.
    if (changes && dir_rights_->shared_by_others(entity, req.dir)) {
      std::vector<uint64_t> changed{req.dir};
      co_await dir_rights_->claim_shares(entity, std::move(changed), "a change by " + entity);
      if (instance_ != instance || !session_ok(entity)) co_return;
    }
    std::vector<uint64_t> inos{req.dir};
    if (dir_rights_->conflicts(entity, inos)) {
      co_await dir_rights_->claim(entity, inos, "a request of " + entity);
      if (instance_ != instance || !session_ok(entity)) co_return;
    }
    if (req.open) {
      // The request waits its turn (the dispatch, a resend's dedup slot) while others
      // are served.
      co_await sleep_for(pick(0, 10));
      if (instance_ != instance || !session_ok(entity)) co_return;
      // MdsService::on_open: counted, then recalled from an owner given the file while
      // this request waited its turn.
      ++opens_[req.dir][entity];
      trace_("MDS counts an open of " + std::to_string(req.dir) + " by " + entity +
             (req.read ? " (read)" : " (write)") + (req.reopen ? " (reopen)" : ""));
      if (dir_rights_->conflicts(entity, inos)) {
        co_await dir_rights_->claim(entity, inos, "an open of " + entity);
        if (instance_ != instance || !session_ok(entity)) co_return;
      }
      if (!req.read) {  // a writer: the read shares of others go, its own ends
        dir_rights_->unshare(entity, req.dir);
        if (dir_rights_->shared_by_others(entity, req.dir)) {
          std::vector<uint64_t> file{req.dir};
          co_await dir_rights_->claim_shares(entity, std::move(file),
                                             "a writing open of " + entity);
          if (instance_ != instance || !session_ok(entity)) co_return;
        }
      }
      co_await sleep_for(pick(0, 10));  // the inode is read
      if (instance_ != instance || !session_ok(entity)) co_return;
    }
    check_served(entity, req.dir);
    if ((req.open && !req.read) || changes) check_nobody_else_reads(entity, req.dir);
    if (req.change) {
      co_await sleep_for(pick(0, 20));  // through the committer
      if (instance_ != instance || !session_ok(entity)) co_return;
      changes_[req.dir].push_back(entity);
      check_change_applied(entity, req.dir);
      co_return;
    }
    const size_t changes_read = changes_[req.dir].size();
    bool owned = false, shared = false;
    if (req.mkdir) {
      dirs_.push_back(req.made);
      changes_[req.dir].push_back(entity);
      owned = ask_own && dir_rights_->created(entity, req.made);
    } else if (req.open) {
      owned = ask_own && g_now >= file_grants_from_ && !opened_by_others(entity, req.dir) &&
              !changes_in_flight_[instance].any(req.dir) &&
              dir_rights_->claimed_existing(entity, req.dir, DirRights::Kind::kFile);
      // MdsService::on_open's read share.
      shared = ask_share && g_now >= file_grants_from_ &&
               !changes_in_flight_[instance].any(req.dir) && opens_[req.dir][entity] == 1 &&
               others_only_read(entity, req.dir) && dir_rights_->shared(entity, req.dir);
    } else if (req.stat) {
      // MdsService::grant_share.
      shared = ask_share && g_now >= file_grants_from_ &&
               !changes_in_flight_[instance].any(req.dir) && others_only_read(entity, req.dir) &&
               (opens_[req.dir][entity] == 0 || dir_rights_->shares(entity, req.dir)) &&
               (dir_rights_->shares(entity, req.dir) ||
                !dir_rights_->recalled_within(req.dir, DirRights::kShareHoldOff)) &&
               dir_rights_->shared(entity, req.dir);
    }
    to_client(
        c,
        [this, &c, req, epoch, owned, shared, entity, changes_read, writes_before] {
          if (req.open) {
            if (!req.reopen) c.open_files.insert(req.dir);
            if (!req.reopen && !req.read) c.write_files.insert(req.dir);
            if (req.reopen) c.reclaims_unanswered.erase(req.dir);
            if (owned && c.rights.own_file_claimed(req.dir, epoch)) {
              if (c.alone(req.dir)) check_file_taken_up(entity, req.dir, changes_read);
              ++counts_.files_owned;
              trace_(c.entity() + " owns file " + std::to_string(req.dir));
            }
            if (shared && c.write_opens_sent == writes_before &&
                c.rights.share_claimed(req.dir, epoch, true)) {
              if (c.read_shared(req.dir)) check_file_taken_up(entity, req.dir, changes_read);
              ++counts_.files_shared;
              trace_(c.entity() + " shares file " + std::to_string(req.dir));
            }
            return;
          }
          if (req.stat) {
            // FileClient::take_share.
            if (shared && c.write_opens_sent == writes_before &&
                c.rights.share_claimed(req.dir, epoch, req.dir >= kFirstFile)) {
              if (c.read_shared(req.dir)) check_file_taken_up(entity, req.dir, changes_read);
              ++counts_.stats_shared;
              trace_(c.entity() + " shares " + std::to_string(req.dir) + " (a stat)");
            }
            return;
          }
          if (owned && c.rights.own_claimed(req.made, epoch)) {
            ++counts_.dirs_owned;
            c.held_anything = true;
            trace_(c.entity() + " owns " + std::to_string(req.made));
          }
        },
        conn);
  }

  // Suspends the calling coroutine for `ms` of virtual time.
  awaitable<void> sleep_for(int64_t ms) {
    auto timer = std::make_shared<asio::steady_timer>(io_, asio::steady_timer::time_point::max());
    events_.at(g_now + ms, [timer] { timer->cancel(); });
    co_await timer->async_wait(use_awaitable_tuple);
  }

  // MdsService::others_only_read: every other session holding `file` open shares it.
  bool others_only_read(const std::string& entity, uint64_t file) const {
    auto it = opens_.find(file);
    if (it == opens_.end()) return true;
    return std::all_of(it->second.begin(), it->second.end(), [&](const auto& kv) {
      return kv.first == entity || kv.second == 0 || dir_rights_->shares(kv.first, file);
    });
  }

  bool opened_by_others(const std::string& entity, uint64_t file) const {
    auto it = opens_.find(file);
    if (it == opens_.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const auto& kv) { return kv.first != entity && kv.second > 0; });
  }

  // MdsService::lease_ms_for: the session timeout, ending before a recall is due.
  int64_t lease_ms_for(const std::string& entity) const {
    auto due =
        mds::lease_rules::earliest(cache_->recall_due(entity), dir_rights_->recall_due(entity));
    return mds::lease_rules::granted(std::chrono::milliseconds(kTimeoutMs), due, now_tp()).count();
  }

  void mds_tick() {
    events_.at(g_now + kTickMs, [this] { mds_tick(); });
    cache_->tick(now_tp());
    dir_rights_->tick(now_tp());
    std::vector<std::string> expired;
    for (const auto& [client, last] : sessions_) {
      if (g_now - last > kTimeoutMs && !phase_->running()) expired.push_back(client);
    }
    for (const auto& client : expired) evict(client, "session expired");
    end_phase_if_due();
  }

  void end_phase_if_due() {
    if (!phase_->due(now_tp())) return;
    for (const auto& client : std::set<std::string>(phase_->awaited()))
      evict(client, "did not reconnect");
    phase_->end();
    cache_->end_grace(now_tp());
  }

  void evict(const std::string& client, const std::string& reason) {
    if (fenced_.count(client)) return;
    trace_("MDS evicts " + client + " (" + reason + ")");
    ++counts_.evictions;
    fenced_.insert(client);
    sessions_.erase(client);
    cache_->ended(client);
    dir_rights_->ended(client);
    for (auto& [file, by] : opens_) by.erase(client);
    std::erase_if(recall_started_, [&](const auto& kv) { return kv.first.first == client; });
  }

  // ---- what is checked ----

  SimClient* by_entity(const std::string& entity) {
    for (auto& c : clients_) {
      if (c->entity() == entity) return c.get();
    }
    return nullptr;
  }

  // `entity`'s session open is answered: it reads anything from now on.
  void check_session_answer(const std::string& entity) {
    ++counts_.checks;
    for (auto& c : clients_) {
      if (c->entity() == entity) continue;
      CHECK_MESSAGE(!c->exclusive_now(), "seed " << seed_note_ << ": " << entity
                                                 << "'s session open answered while " << c->entity()
                                                 << " caches the whole file system");
    }
  }
  // A request of `entity` on directory `dir` is served: nobody else may cache it alone.
  void check_served(const std::string& entity, uint64_t dir) {
    check_nobody_else_alone(entity, dir, "a request of " + entity + " on directory " +
                                             std::to_string(dir) + " served");
  }
  // A change of `file` by `entity` applied: nobody else may cache the file alone.
  void check_change_applied(const std::string& entity, uint64_t file) {
    ++counts_.changes;
    check_nobody_else_alone(entity, file, "a change of file " + std::to_string(file) + " by " +
                                              entity + " applied");
  }
  // A change of `file` by `entity` applies, or its open for writing is served: nobody
  // else may keep the file's pages.
  void check_nobody_else_reads(const std::string& entity, uint64_t file) {
    ++counts_.checks;
    for (auto& c : clients_) {
      if (c->entity() == entity) continue;
      CHECK_MESSAGE(!c->read_shared(file), "seed " << seed_note_ << ": " << entity
                                                  << " changes or opens for writing file "
                                                  << file << " while " << c->entity()
                                                  << " shares it for reading");
    }
  }
  void check_nobody_else_alone(const std::string& entity, uint64_t ino, const std::string& what) {
    ++counts_.checks;
    for (auto& c : clients_) {
      if (c->entity() == entity) continue;
      CHECK_MESSAGE(!c->alone(ino), "seed " << seed_note_ << ": " << what << " while "
                                            << c->entity() << " caches it alone");
    }
  }
  // `entity` takes up `file` and may act on it (its lease holds), given when the MDS had
  // applied `changes_read` changes of it: none by another client may have applied since
  // (its state would miss them). A client whose lease ran out acts on nothing: the
  // recall or its eviction reaches it before a renewal could be answered.
  void check_file_taken_up(const std::string& entity, uint64_t file, size_t changes_read) {
    ++counts_.checks;
    const auto& log = changes_[file];
    for (size_t i = changes_read; i < log.size(); ++i) {
      CHECK_MESSAGE(log[i] == entity, "seed " << seed_note_ << ": " << entity << " takes up file "
                                              << file << " without the change " << log[i]
                                              << " applied after the MDS read it");
    }
  }
  // `entity` is granted exclusive caching: nobody else may cache anything alone.
  void check_exclusive_grant(const std::string& entity) {
    ++counts_.checks;
    for (auto& c : clients_) {
      if (c->entity() == entity) continue;
      bool any = c->exclusive_now();
      for (uint64_t ino : owned_inos(*c)) any = any || c->alone(ino);
      CHECK_MESSAGE(!any, "seed " << seed_note_ << ": " << entity
                                  << " granted exclusive caching while " << c->entity()
                                  << " caches alone (exclusive " << c->rights.exclusive() << ", "
                                  << c->rights.owned().size() << " directories, lease until "
                                  << c->lease_expires << ")");
    }
  }
  // After every step: no two clients cache the same thing alone.
  void check_no_conflicting_rights() {
    ++counts_.steps;
    std::map<uint64_t, const SimClient*> alone_on;  // directory -> the client alone on it
    const SimClient* whole = nullptr;               // the client caching everything alone
    for (auto& c : clients_) {
      if (c->exclusive_now()) {
        if (whole) {
          FAIL_CHECK("seed " << seed_note_ << ": " << c->entity() << " and " << whole->entity()
                             << " both cache the whole file system");
        }
        whole = c.get();
      }
    }
    for (auto& c : clients_) {
      if (c.get() == whole) continue;
      for (uint64_t dir : owned_inos(*c)) {
        if (!c->alone(dir)) continue;
        if (whole) {
          FAIL_CHECK("seed " << seed_note_ << ": " << c->entity() << " caches directory " << dir
                             << " alone while " << whole->entity()
                             << " caches the whole file system");
        }
        auto [it, fresh] = alone_on.emplace(dir, c.get());
        if (!fresh) {
          FAIL_CHECK("seed " << seed_note_ << ": " << c->entity() << " and "
                             << it->second->entity() << " both cache inode " << dir
                             << " alone");
        }
      }
    }
    // A file cached alone is open nowhere else: another mount's open would read the
    // OSDs under the owner's buffered writes. (An evicted mount's handles read nothing:
    // it is fenced.)
    for (auto& c : clients_) {
      for (uint64_t file : c->rights.owned().files()) {
        if (!c->alone(file)) continue;
        for (auto& d : clients_) {
          if (d.get() == c.get() || d->crashed || !d->open_files.count(file) ||
              !session_ok(d->entity())) {
            continue;
          }
          FAIL_CHECK("seed " << seed_note_ << ": " << c->entity() << " caches file " << file
                             << " alone while " << d->entity() << " holds it open");
        }
        for (auto& d : clients_) {
          if (d.get() != c.get() && d->read_shared(file)) {
            FAIL_CHECK("seed " << seed_note_ << ": " << c->entity() << " caches file " << file
                               << " alone while " << d->entity() << " shares it for reading");
          }
        }
      }
    }
  }
  // After every step: no client keeps the pages of a file another client has open for
  // writing (not evicted: a fenced mount writes nothing).
  void check_no_share_beside_writer() {
    for (auto& w : clients_) {
      if (w->crashed || !session_ok(w->entity())) continue;
      for (uint64_t file : w->write_files) {
        for (auto& r : clients_) {
          if (r.get() != w.get() && r->read_shared(file)) {
            FAIL_CHECK("seed " << seed_note_ << ": " << r->entity() << " shares file " << file
                               << " for reading while " << w->entity()
                               << " holds it open for writing");
          }
        }
      }
    }
  }
  static std::vector<uint64_t> owned_inos(const SimClient& c) {
    auto inos = c.rights.owned().dirs();
    auto files = c.rights.owned().files();
    inos.insert(inos.end(), files.begin(), files.end());
    return inos;
  }
  // After every step: what the MDS has given a client and is not recalling is within the
  // bound (what it recalls is bounded by check_recalls_bounded).
  void check_owned_bounded() {
    for (auto& c : clients_) {
      if (const size_t kept = dir_rights_->kept_by(c->entity()); kept > kMaxDirs) {
        FAIL_CHECK("seed " << seed_note_ << ": " << c->entity() << " keeps " << kept
                           << " directories");
      }
    }
  }
  void check_recalls_bounded() {
    for (const auto& [key, started] : recall_started_) {
      CHECK_MESSAGE(g_now - started <= kTimeoutMs + 2 * kTickMs,
                    "seed " << seed_note_ << ": recall " << key.second << " of " << key.first
                            << " unanswered for " << g_now - started << " ms");
    }
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

 public:
  uint64_t seed_note_ = 0;

 private:
  std::mt19937_64 rng_;
  Trace trace_;
  Events events_;
  // Changes of files without an open in flight, by MDS instance (its memory: a failover
  // starts anew). Declared before io_: coroutines the run leaves suspended end with it,
  // and their counts with them.
  std::map<uint64_t, ChangesInFlight> changes_in_flight_;
  asio::io_context io_;
  std::vector<std::unique_ptr<SimClient>> clients_;
  std::map<int, int64_t> c_to_mds_last_, mds_to_c_last_;
  // The MDS: its replicated state (sessions, fences) and the instance's memory.
  uint64_t instance_ = 0;
  std::map<std::string, int64_t> sessions_;  // entity -> last renewal's arrival
  std::set<std::string> fenced_;
  std::unique_ptr<ExclusiveCache> cache_;
  std::unique_ptr<DirRights> dir_rights_;
  std::unique_ptr<ReconnectPhase> phase_;
  struct Ended {
    std::unique_ptr<ExclusiveCache> cache;
    std::unique_ptr<DirRights> dirs;
    std::unique_ptr<ReconnectPhase> phase;
  };
  std::vector<Ended> ended_instances_;  // kept: coroutines of before may still hold them
  std::map<std::pair<std::string, uint64_t>, int64_t> recall_started_;
  std::vector<uint64_t> dirs_;
  uint64_t next_dir_ = 100;
  std::map<uint64_t, std::map<std::string, int>> opens_;  // the MDS's: file -> entity -> opens
  int64_t file_grants_from_ = 0;
  // Changes applied (a file's, a directory's mkdirs; inode -> changers in order).
  std::map<uint64_t, std::vector<std::string>> changes_;
  Counts counts_;
};

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

}  // namespace

TEST_CASE("sim/rights: no client is served where another still caches alone, over many seeds") {
  const uint64_t one = env_u64("DFS_SEED", 0);
  const uint64_t seeds = one ? 1 : env_u64("DFS_SIM_SEEDS", 1000);
  const auto level = spdlog::get_level();
  if (!one) spdlog::set_level(spdlog::level::warn);  // the classes log every recall
  World::Counts total;
  for (uint64_t i = 0; i < seeds; ++i) {
    const uint64_t seed = one ? one : i + 1;
    g_now = 0;
    World world(seed, one != 0);
    world.seed_note_ = seed;
    world.run();
    total.add(world.counts());
  }
  spdlog::set_level(level);
  MESSAGE(seeds << " seed(s): " << total.steps << " steps checked, " << total.checks
                << " checked answers, " << total.recalls << " recalls (" << total.bound_recalls
                << " for the bound), " << total.evictions << " evictions, " << total.failovers
                << " failovers, exclusive caching taken up " << total.exclusive_taken << " times, "
                << total.dirs_owned << " directories and " << total.files_owned
                << " files owned, " << total.files_shared << " files shared for reading, "
                << total.stats_shared << " inodes shared by a stat, "
                << total.changes << " changes of files applied");
  // The run went through what it is about.
  CHECK(total.checks > seeds);
  CHECK(total.recalls > seeds);
  CHECK(total.bound_recalls >= seeds);
  CHECK(total.failovers >= seeds);
  CHECK(total.files_owned > seeds);
  CHECK(total.files_shared > seeds);
  CHECK(total.stats_shared > seeds);
  CHECK(total.changes > seeds);
  if (!one) {
    CHECK(total.evictions > seeds / 2);
    CHECK(total.exclusive_taken > seeds);
  }
}

}  // namespace dfs::sim_rights
