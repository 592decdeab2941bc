#include "mds/service/mds_service.h"

#include <spdlog/spdlog.h>

#include <random>

#include "common/proto/mon.pb.h"
#include "common/rpc/methods.h"
#include "mds/ops/meta_view.h"

namespace dfs::mds {
namespace {

constexpr uint32_t kMdsMethods[] = {
    rpc::kMdsSession,     rpc::kMdsLookup,      rpc::kMdsGetAttr,  rpc::kMdsSetAttr,
    rpc::kMdsMknod,       rpc::kMdsSymlink,     rpc::kMdsLink,     rpc::kMdsUnlink,
    rpc::kMdsRename,      rpc::kMdsReaddir,     rpc::kMdsGetXattr, rpc::kMdsSetXattr,
    rpc::kMdsListXattr,   rpc::kMdsRemoveXattr, rpc::kMdsOpen,     rpc::kMdsRelease,
    rpc::kMdsWriteInline, rpc::kMdsCommitWrite, rpc::kMdsUninline, rpc::kMdsStatFs,
    rpc::kMdsReadlink,    rpc::kMdsSync,        rpc::kMdsBatch,
};

uint64_t random_instance() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

}  // namespace

MdsService::MdsService(asio::any_io_executor executor, MdsOptions options,
                       std::unique_ptr<MetaStore> store, std::unique_ptr<DataObjects> data)
    : executor_(executor),
      options_(std::move(options)),
      entity_("mds." + options_.name),
      blocking_(options_.blocking_threads),
      store_(std::move(store)),
      data_(std::move(data)),
      committer_(executor, blocking_, *store_, options_.fs, options_.now, options_.committer),
      purge_wake_(executor),
      housekeeping_wake_(executor),
      started_at_(Clock::now()),
      instance_(random_instance()) {
  committer_.add_listener([this](const proto::MdsLogEntry& entry, const ApplyEffects& effects) {
    on_entry_durable(entry, effects);
  });
}

void MdsService::stop() {
  stopping_ = true;
  if (server_) server_->stop();
  if (messenger_) messenger_->close_all();
  purge_wake_.notify();
  housekeeping_wake_.notify();
}

MdsService::~MdsService() {
  if (server_) server_->stop();
  if (messenger_) messenger_->close_all();
  blocking_.join();
}

Status MdsService::load() {
  auto root = DFS_TRY(find_inode(*store_, kRootIno));
  if (!root && options_.fs.rank == 0) {
    return make_error(ErrorCode::kNotFound, "the metadata store holds no file system (run --mkfs)");
  }
  DFS_TRY_STATUS(committer_.load());
  auto orphans = DFS_TRY(store_->scan(orphan_prefix(), prefix_end(orphan_prefix()), SIZE_MAX));
  for (const auto& kv : orphans) orphans_.insert(get_be64(std::string_view(kv.key).substr(1)));
  started_at_ = Clock::now();
  // Replies to recent requests: a client resending one after our restart gets it.
  auto remembered = DFS_TRY(store_->scan(request_prefix(), prefix_end(request_prefix()), SIZE_MAX));
  for (auto& kv : remembered) {
    auto key = DFS_TRY(decode_request_key(kv.key));
    sessions_.preload(key.client, key.seq, std::move(kv.value), executor_, started_at_);
  }
  spdlog::info(
      "{}: metadata store at log index {}, {} orphan(s) awaiting reclaim, {} client "
      "session(s) with {} remembered replies",
      entity_, committer_.last_index(), orphans_.size(), sessions_.size(), remembered.size());
  return ok_status();
}

Result<std::string> MdsService::start() {
  rpc::ConnectionOptions conn_options;
  conn_options.local_entity = entity_;
  conn_options.auth = rpc::make_none_authenticator();
  server_ = std::make_unique<rpc::RpcServer>(executor_, conn_options);
  for (uint32_t method : kMdsMethods) {
    server_->handle(method, [this, method](rpc::ConnectionPtr conn, rpc::Frame frame) {
      return handle(method, std::move(frame.body), std::move(conn));
    });
  }
  address_ = DFS_TRY(server_->listen(options_.listen_addr));
  start_background();
  if (!options_.mon_addrs.empty()) {
    messenger_ = std::make_unique<rpc::Messenger>(
        executor_, rpc::MessengerOptions{conn_options},
        [this](rpc::ConnectionPtr, rpc::Frame frame) { maps_->on_push(frame); });
    maps_ = std::make_unique<MapSubscriber>(executor_, *messenger_, options_.mon_addrs);
    maps_->add_listener([this](const ClusterMap& previous) { on_map_change(previous); });
    maps_->start();
    spawn_checked(executor_, boot_loop());
  }
  spdlog::info("{} listening on {} (rank {}, inline threshold {} bytes)", entity_, address_,
               options_.fs.rank, options_.fs.inline_threshold);
  return address_;
}

awaitable<void> MdsService::boot_loop() {
  if (booting_) co_return;
  booting_ = true;
  proto::CommandRequest request;
  auto* boot = request.mutable_command()->mutable_boot_mds();
  boot->set_name(entity_);
  boot->set_addr(address_);
  boot->set_rank(options_.fs.rank);
  boot->set_instance(instance_);
  for (;;) {
    auto reply =
        co_await maps_->call_mon(rpc::kMonCommand, request.SerializeAsString(), Duration(5000));
    if (reply) {
      auto parsed = rpc::parse_body<proto::CommandReply>(reply->body);
      spdlog::info("{} booted into the map at epoch {}", entity_, parsed ? parsed->epoch() : 0);
      break;
    }
    spdlog::warn("{} boot not accepted yet: {}", entity_, reply.error().to_string());
    co_await sleep_for(Duration(1000));
  }
  booting_ = false;
}

void MdsService::on_map_change(const ClusterMap& /*previous*/) {
  const auto* me = maps_->map().mds(entity_);
  // Marked down, or another process took our name: announce ourselves again.
  if (me && (!me->up() || me->instance() != instance_ || me->addr() != address_) && !booting_) {
    spdlog::warn("{} is not up as itself in map epoch {}; booting again", entity_, maps_->epoch());
    spawn_checked(executor_, boot_loop());
  }
}

std::string MdsService::client_of(const proto::MdsRequestHeader& header,
                                  const rpc::ConnectionPtr& conn) const {
  if (!header.reqid().client().empty()) return header.reqid().client();
  if (conn) return conn->peer_entity();
  return "anonymous";
}

awaitable<MdsService::Reply> MdsService::submit(proto::MdsLogEntry entry) {
  auto body = co_await committer_.submit(std::move(entry));
  if (!body) co_return unexpected(std::move(body).error());
  co_return rpc::Reply{std::move(*body), {}};
}

awaitable<MdsService::Reply> MdsService::handle(uint32_t method, std::string body,
                                                rpc::ConnectionPtr conn) {
  // Reads carry seq 0 and run at once; mutations go through the dedup table.
  proto::MdsRequestHeader header;
  {
    // Every MDS request but kMdsSession has the header as field 1: read it through a
    // message that has only that field.
    proto::StatFsMdsRequest probe;
    if (method != rpc::kMdsSession && !probe.ParseFromString(body)) {
      co_return make_error(ErrorCode::kProtocol, "malformed MDS request");
    }
    header = probe.header();
  }
  if (method == rpc::kMdsBatch) co_return co_await on_batch(std::move(body), std::move(conn));
  std::string client = client_of(header, conn);
  if (method == rpc::kMdsSession) {
    proto::SessionRequest hello;
    if (hello.ParseFromString(body) && !hello.client().empty()) client = hello.client();
  }
  Session& session = sessions_.touch(client, conn, Clock::now());
  uint64_t seq = header.reqid().seq();
  bool mutating =
      method == rpc::kMdsSetAttr || method == rpc::kMdsMknod || method == rpc::kMdsSymlink ||
      method == rpc::kMdsLink || method == rpc::kMdsUnlink || method == rpc::kMdsRename ||
      method == rpc::kMdsSetXattr || method == rpc::kMdsRemoveXattr || method == rpc::kMdsOpen ||
      method == rpc::kMdsRelease || method == rpc::kMdsWriteInline ||
      method == rpc::kMdsCommitWrite || method == rpc::kMdsUninline;
  if (!mutating || seq == 0)
    co_return co_await dispatch(method, std::move(body), std::move(client));
  bool fresh = false;
  auto slot = sessions_.remember(session, seq, executor_, fresh);
  if (!fresh) co_return co_await slot->reply.wait();
  auto reply = co_await dispatch(method, std::move(body), std::move(client));
  if (reply && header.durable()) {
    auto durable = co_await committer_.wait_durable();
    if (!durable) reply = unexpected(std::move(durable).error());
  }
  slot->reply.set(reply);
  co_return reply;
}

namespace {

// A setattr without a size change goes straight to the committer's queue when its
// handler starts, with nothing awaited before (handle() -> on_setattr -> submit).
bool queues_at_once(const proto::BatchItem& item) {
  if (item.method() != rpc::kMdsSetAttr) return false;
  proto::SetAttrRequest req;
  constexpr uint32_t kSetSize = 8;
  return req.ParseFromString(item.body()) && !(req.valid() & kSetSize);
}

}  // namespace

awaitable<MdsService::Reply> MdsService::on_batch(std::string body, rpc::ConnectionPtr conn) {
  auto batch = DFS_CO_TRY(rpc::parse_body<proto::BatchRequest>(body));
  const int n = batch.items_size();
  for (const auto& item : batch.items()) {
    if (item.method() == rpc::kMdsSession || item.method() == rpc::kMdsBatch) {
      co_return make_error(ErrorCode::kInvalidArgument,
                           "a batch item cannot be a session or a batch");
    }
  }
  // Items apply in order. A client's deferred attribute changes (setattrs that queue
  // at the committer at once) start together, in order, so they commit as one group;
  // the item after them starts once they are applied (a read must see them).
  int together = 0;
  while (together < n && queues_at_once(batch.items(together))) ++together;
  std::vector<Reply> results;
  if (together > 1) {
    std::vector<awaitable<Reply>> tasks;
    for (int i = 0; i < together; ++i) {
      auto& item = *batch.mutable_items(i);
      tasks.push_back(handle(item.method(), std::move(*item.mutable_body()), conn));
    }
    results = co_await gather(std::move(tasks));
  } else {
    together = 0;
  }
  for (int i = together; i < n; ++i) {
    auto& item = *batch.mutable_items(i);
    results.push_back(co_await handle(item.method(), std::move(*item.mutable_body()), conn));
  }
  proto::BatchReply reply;
  for (auto& one : results) {
    auto* result = reply.add_results();
    if (one) {
      result->set_body(std::move(one->body));
    } else {
      result->set_code(static_cast<uint32_t>(one.error().code()));
      result->set_message(one.error().context());
    }
  }
  co_return rpc::make_reply(reply);
}

awaitable<MdsService::Reply> MdsService::dispatch(uint32_t method, std::string body,
                                                  std::string client) {
#define DFS_MDS_PARSE(Type, var)                                            \
  auto var##_parsed = rpc::parse_body<proto::Type>(body);                   \
  if (!var##_parsed) co_return unexpected(std::move(var##_parsed).error()); \
  proto::Type var = std::move(*var##_parsed)
#define DFS_MDS_LOG(field, Type)                 \
  {                                              \
    DFS_MDS_PARSE(Type, req);                    \
    proto::MdsLogEntry entry;                    \
    *entry.mutable_##field() = std::move(req);   \
    co_return co_await submit(std::move(entry)); \
  }
  switch (method) {
    case rpc::kMdsSession: {
      DFS_MDS_PARSE(SessionRequest, req);
      co_return co_await on_session(std::move(req), std::move(client));
    }
    case rpc::kMdsLookup: {
      DFS_MDS_PARSE(LookupRequest, req);
      co_return co_await on_lookup(std::move(req));
    }
    case rpc::kMdsGetAttr: {
      DFS_MDS_PARSE(GetAttrRequest, req);
      co_return co_await on_getattr(std::move(req));
    }
    case rpc::kMdsReadlink: {
      DFS_MDS_PARSE(ReadlinkRequest, req);
      co_return co_await on_readlink(std::move(req));
    }
    case rpc::kMdsReaddir: {
      DFS_MDS_PARSE(ReaddirRequest, req);
      co_return co_await on_readdir(std::move(req));
    }
    case rpc::kMdsGetXattr: {
      DFS_MDS_PARSE(GetXattrRequest, req);
      co_return co_await on_getxattr(std::move(req));
    }
    case rpc::kMdsListXattr: {
      DFS_MDS_PARSE(ListXattrRequest, req);
      co_return co_await on_listxattr(std::move(req));
    }
    case rpc::kMdsStatFs: {
      DFS_MDS_PARSE(StatFsMdsRequest, req);
      co_return co_await on_statfs(std::move(req));
    }
    case rpc::kMdsSync: {
      DFS_CO_AWAIT_CHECK(committer_.wait_durable());
      co_return rpc::Reply{proto::Empty().SerializeAsString(), {}};
    }
    case rpc::kMdsSetAttr: {
      DFS_MDS_PARSE(SetAttrRequest, req);
      co_return co_await on_setattr(std::move(req));
    }
    case rpc::kMdsMknod: {
      DFS_MDS_PARSE(MknodRequest, req);
      co_return co_await on_mknod(std::move(req), std::move(client));
    }
    case rpc::kMdsOpen: {
      DFS_MDS_PARSE(OpenRequest, req);
      co_return co_await on_open(std::move(req), std::move(client));
    }
    case rpc::kMdsRelease: {
      DFS_MDS_PARSE(ReleaseRequest, req);
      co_return co_await on_release(std::move(req), std::move(client));
    }
    case rpc::kMdsUninline: {
      DFS_MDS_PARSE(UninlineRequest, req);
      co_return co_await on_uninline(std::move(req));
    }
    case rpc::kMdsSymlink:
      DFS_MDS_LOG(symlink, SymlinkRequest)
    case rpc::kMdsLink:
      DFS_MDS_LOG(link, LinkRequest)
    case rpc::kMdsUnlink:
      DFS_MDS_LOG(unlink, UnlinkRequest)
    case rpc::kMdsRename:
      DFS_MDS_LOG(rename, RenameRequest)
    case rpc::kMdsSetXattr:
      DFS_MDS_LOG(setxattr, SetXattrRequest)
    case rpc::kMdsRemoveXattr:
      DFS_MDS_LOG(removexattr, RemoveXattrRequest)
    case rpc::kMdsWriteInline:
      DFS_MDS_LOG(write_inline, WriteInlineRequest)
    case rpc::kMdsCommitWrite:
      DFS_MDS_LOG(commit_write, CommitWriteRequest)
    default:
      break;
  }
#undef DFS_MDS_LOG
#undef DFS_MDS_PARSE
  co_return make_error(ErrorCode::kUnknownMethod,
                       "method " + std::to_string(method) + " is not served by the MDS");
}

}  // namespace dfs::mds
