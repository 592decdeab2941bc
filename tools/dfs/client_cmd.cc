// `dfs client ls|evict`: the file system's client sessions as the active MDS (rank 0,
// the one mounts use) holds them, and evicting one by hand. An evicted session is fenced
// in the map: the MDS and every OSD refuse its requests from then on, so a client that
// was paused or cut off cannot write over what others changed since.
#include <algorithm>

#include "common/proto/mds.pb.h"
#include "common/rpc/methods.h"
#include "tools/dfs/cli_context.h"
#include "tools/dfs/health.h"

namespace dfs::cli {
namespace {

// The MDS answers the eviction once the monitors have committed the fence: a few
// seconds normally, longer across a monitor election.
constexpr int kEvictTimeoutS = 60;
// A failover can leave the map naming a standby for a moment: how long to wait for the
// next map between attempts.
constexpr Duration kMapWait{1000};

struct ClientArgs {
  std::string format = "text";
  std::string id;
  std::string reason;
};

// The MDS of rank 0 as the map names it. Errors: kUnavailable (none active).
Result<std::pair<std::string, std::string>> active_mds(const ClusterMap& map) {
  if (map.proto().mds().empty()) {
    return make_error(ErrorCode::kUnavailable,
                      "the map (epoch " + std::to_string(map.epoch()) +
                          ") has no MDS: this cluster serves no file system yet");
  }
  const auto* mds = map.mds_for_rank(0);
  if (!mds) {
    return make_error(ErrorCode::kUnavailable,
                      "no MDS is active for rank 0 in map epoch " + std::to_string(map.epoch()) +
                          " (`dfs status` shows the MDS replicas)");
  }
  return std::pair{mds->name(), mds->addr()};
}

// Whether to ask again on a newer map. Connection refused means nothing was sent: always
// safe. kUnavailable is also what a standby answers during a failover, but a connection
// lost mid-request gives it too, so only a read (`idempotent`) is resent then.
bool worth_retrying(const Error& error, bool idempotent) {
  return error.code() == ErrorCode::kConnectionRefused ||
         (idempotent && error.code() == ErrorCode::kUnavailable);
}

// Sends one request to the active MDS, each attempt bounded by `call_timeout`, asking
// again on newer maps (a failover) for up to `search` (the global --timeout: a dead MDS
// should not cost the generous wait of an eviction). `mds_name` is the MDS last asked.
awaitable<Result<rpc::Frame>> call_active_mds(client::ObjectClient& client, uint32_t method,
                                              std::string body, Duration search,
                                              Duration call_timeout, bool idempotent,
                                              std::string* mds_name) {
  const auto deadline = Clock::now() + search;
  while (true) {
    const uint64_t epoch = client.maps().epoch();
    auto mds = active_mds(client.maps().map());
    if (!mds) co_return unexpected(mds.error());
    *mds_name = mds->first;
    auto frame = co_await client.messenger().call(mds->second, method, body, {}, call_timeout);
    if (frame || frame.error().code() == ErrorCode::kNotFound) co_return frame;
    if (!worth_retrying(frame.error(), idempotent) || left_until(deadline) <= kMapWait) {
      co_return make_error(frame.error().code(),
                           fmt::format("{} (the active MDS in map epoch {}): {}; `dfs status` "
                                       "shows the MDS replicas",
                                       mds->first, epoch, frame.error().context()));
    }
    ignore_error(co_await client.maps().wait_for_change(kMapWait),
                 "a new map or a second passed: either way, look again");
  }
}

// Every MDS request carries a header; naming our entity makes the session ours.
proto::MdsRequestHeader header_of(const client::ObjectClient& client) {
  proto::MdsRequestHeader header;
  header.mutable_reqid()->set_client(client.entity());
  return header;
}

// Seconds with a tenth under two minutes: against a 30 s timeout, 0.4 s and 29.6 s differ.
std::string renew_column(const proto::ClientSession& s) {
  if (!s.renewing()) return "-";  // no lease: the time since its first request says nothing
  const uint64_t ms = s.since_renew_ms();
  return (ms < 120'000 ? fmt::format("{:.1f} s", ms / 1000.0) : format_age(ms)) + " ago";
}

std::string kind_column(const proto::ClientSession& s, const std::string& self) {
  if (s.client() == self) return "no (this command)";
  return s.renewing() ? "yes (mount)" : "no (one-shot tool)";
}

void print_sessions_text(const proto::ClientListReply& reply, const std::string& mds,
                         const std::string& self) {
  // Entities carry a 64-bit nonce: size the column to the longest, not a guess.
  size_t width = 6;
  for (const auto& s : reply.sessions()) width = std::max(width, s.client().size());
  const auto row = [&](const std::string& client, const std::string& addr, const std::string& renewed,
                       const std::string& open, const std::string& dirs,
                       const std::string& files, const std::string& read,
                       const std::string& renews) {
    fmt::print("{:<{}}  {:<21} {:>11} {:>5} {:>6} {:>6} {:>6}  {}\n", client, width, addr,
               renewed, open, dirs, files, read, renews);
  };
  // Mounts first: they are what an operator looks for among the tools' short-lived ones.
  std::vector<const proto::ClientSession*> sessions;
  for (const auto& s : reply.sessions()) sessions.push_back(&s);
  std::stable_sort(sessions.begin(), sessions.end(),
                   [](const auto* a, const auto* b) { return a->renewing() > b->renewing(); });
  const auto mounts = std::count_if(sessions.begin(), sessions.end(),
                                    [](const auto* s) { return s->renewing(); });
  row("CLIENT", "ADDRESS", "RENEWED", "OPEN", "DIRS", "FILES", "READ", "RENEWS");
  for (const auto* s : sessions) {
    row(s->client(), s->address().empty() ? "-" : s->address(), renew_column(*s),
        std::to_string(s->open_files()), std::to_string(s->owned_dirs()),
        std::to_string(s->owned_files()), std::to_string(s->read_files()),
        kind_column(*s, self));
  }
  fmt::print("{} session{} at {} ({} mount{}, {} one-shot); a mount that does not renew for {} "
             "is evicted and fenced\n",
             sessions.size(), sessions.size() == 1 ? "" : "s", mds, mounts, mounts == 1 ? "" : "s",
             sessions.size() - mounts, format_age(reply.session_timeout_ms()));
}

void print_sessions_json(const proto::ClientListReply& reply, const std::string& mds,
                         const std::string& self) {
  std::string out = "{\n  \"mds\": " + json_string(mds) +
                    fmt::format(",\n  \"session_timeout_ms\": {},\n  \"sessions\": [", reply.session_timeout_ms());
  for (int i = 0; i < reply.sessions_size(); ++i) {
    const auto& s = reply.sessions(i);
    out += fmt::format("{}\n    {{\"client\": {}, \"address\": {}, \"since_renew_ms\": {}, "
                       "\"open_files\": {}, \"owned_dirs\": {}, \"owned_files\": {}, "
                       "\"read_files\": {}, \"renewing\": {}, \"self\": {}}}",
                       i ? "," : "", json_string(s.client()), json_string(s.address()),
                       s.since_renew_ms(), s.open_files(), s.owned_dirs(), s.owned_files(),
                       s.read_files(), s.renewing(), s.client() == self);
  }
  out += reply.sessions().empty() ? "]\n}\n" : "\n  ]\n}\n";
  fmt::print("{}", out);
}

int list_clients(const GlobalOptions& global, const ClientArgs& args) {
  if (args.format != "text" && args.format != "json") {
    return report("client ls", Error(ErrorCode::kInvalidArgument,
                                     "--format must be text or json, not '" + args.format + "'"));
  }
  auto client = connect_client(global);
  if (!client) return report("client ls", client.error());
  proto::ClientListRequest request;
  *request.mutable_header() = header_of(**client);
  std::string mds;
  auto frame = (*client)->run(call_active_mds(**client, rpc::kMdsClientList,
                                              request.SerializeAsString(),
                                              Duration(global.timeout_s * 1000),
                                              Duration(global.timeout_s * 1000), true, &mds));
  auto reply = frame ? rpc::parse_body<proto::ClientListReply>(frame->body)
                     : Result<proto::ClientListReply>(std::move(frame).error());
  if (!reply) return report("client ls", reply.error());
  if (args.format == "json") {
    print_sessions_json(*reply, mds, (*client)->entity());
  } else {
    print_sessions_text(*reply, mds, (*client)->entity());
  }
  return 0;
}

// "admin.ab12cd" is taken to mean "client.admin.ab12cd", the way `dfs client ls` names it.
std::string entity_of(const std::string& id) {
  return id.rfind("client.", 0) == 0 ? id : "client." + id;
}

// The error an operator can act on: which session, and where to look next.
Error explain_evict_error(const Error& error, const std::string& entity, const std::string& mds,
                          int timeout_s) {
  switch (error.code()) {
    case ErrorCode::kNotFound:
      return Error(ErrorCode::kNotFound, (mds.empty() ? std::string("the MDS") : mds) +
                                             " has no session " + entity +
                                             "; `dfs client ls` lists the sessions");
    case ErrorCode::kTimeout:
      return Error(ErrorCode::kTimeout,
                   fmt::format("{} did not confirm the fence of {} within {} s; it already refuses "
                               "the client and keeps asking the monitors (is there a quorum? "
                               "`dfs status`)",
                               mds.empty() ? std::string("the MDS") : mds, entity, timeout_s));
    default:
      return error;
  }
}

int evict_client(const GlobalOptions& global, const ClientArgs& args) {
  const std::string entity = entity_of(args.id);
  auto client = connect_client(global);
  if (!client) return report("client evict", client.error());
  proto::ClientEvictRequest request;
  *request.mutable_header() = header_of(**client);
  request.set_client(entity);
  request.set_reason(args.reason);
  const int timeout_s = std::max(global.timeout_s, kEvictTimeoutS);
  std::string mds;
  auto frame = (*client)->run(call_active_mds(**client, rpc::kMdsClientEvict,
                                              request.SerializeAsString(),
                                              Duration(global.timeout_s * 1000),
                                              Duration(timeout_s * 1000), false, &mds));
  auto reply = frame ? rpc::parse_body<proto::ClientEvictReply>(frame->body)
                     : Result<proto::ClientEvictReply>(std::move(frame).error());
  if (!reply) {
    return report("client evict", explain_evict_error(reply.error(), entity, mds, timeout_s));
  }
  if (reply->epoch() == 0) {
    // An MDS running without monitors (a test setup) can only refuse the client itself.
    fmt::print("evicted {}: {} refuses its requests (no monitors: not fenced in the map)\n",
               entity, mds);
  } else {
    fmt::print("evicted {}: fenced at map epoch {}; its requests are refused from now on\n",
               entity, reply->epoch());
  }
  return 0;
}

}  // namespace

void add_client_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto* client = app.add_subcommand(
      "client", "list the file system's client sessions (mounts and tools) and evict one");
  client->require_subcommand(1);
  static ClientArgs args;
  auto* ls = client->add_subcommand(
      "ls", "list the sessions at the active MDS: address, last lease renewal, open files, "
            "mount or one-shot tool");
  ls->add_option("--format", args.format, "text or json (the same facts, for scripts)")
      ->capture_default_str();
  ls->callback([&] { exit_code = list_clients(global, args); });
  auto* evict = client->add_subcommand(
      "evict", "end a client's session and fence it: the MDS and OSDs refuse its requests");
  evict->footer(
      "The fence is in the cluster map: every OSD and any later active MDS refuse the session "
      "too, so a client that was paused or cut off cannot write over what others changed "
      "since. Writes it had not sent fail; a mount goes on under a new session (a new "
      "client.NAME.NONCE). `dfs status` warns of an eviction for an hour.");
  evict->add_option("id", args.id, "the session as `dfs client ls` names it (client.NAME.NONCE)")
      ->required();
  evict->add_option("--reason", args.reason,
                    "why, in words: kept in the map and shown by `dfs status` "
                    "(default: evicted by an operator)");
  evict->callback([&] { exit_code = evict_client(global, args); });
}

}  // namespace dfs::cli
