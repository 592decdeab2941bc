#include "mds_harness.h"

#include <stdlib.h>

#include <atomic>
#include <cstdio>

namespace dfs::mds::test {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "mds_test.XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!getenv("DFS_KEEP_TEST_DIR")) std::filesystem::remove_all(path, ec);
}

proto::MdsLogEntry mkdir_entry(const std::string& name, const std::string& client) {
  proto::MdsLogEntry entry;
  auto* req = entry.mutable_mknod();
  if (!client.empty()) req->mutable_header()->mutable_reqid()->set_client(client);
  req->set_parent(kRootIno);
  req->set_name(name);
  req->set_mode(S_IFDIR | 0755);
  req->set_exclusive(true);
  return entry;
}

std::map<std::string, std::string> dump_store(const KvReader& kv) {
  auto all = kv.scan(std::string(), std::string(1, '\xff'), SIZE_MAX);
  REQUIRE(all.has_value());
  std::map<std::string, std::string> out;
  for (auto& e : *all) out[e.key] = e.value;
  return out;
}

namespace {

std::string escaped(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

}  // namespace

std::string first_difference(const std::map<std::string, std::string>& a,
                             const std::map<std::string, std::string>& b) {
  auto ia = a.begin();
  auto ib = b.begin();
  for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
    if (ia->first != ib->first) {
      return "key " + escaped(std::min(ia->first, ib->first)) + " only in " +
             (ia->first < ib->first ? "the first" : "the second");
    }
    if (ia->second != ib->second) {
      return "key " + escaped(ia->first) + ": " + escaped(ia->second) + " vs " +
             escaped(ib->second);
    }
  }
  if (ia != a.end()) return "key " + escaped(ia->first) + " only in the first";
  if (ib != b.end()) return "key " + escaped(ib->first) + " only in the second";
  return "";
}

// Forwards to the harness's MemDataObjects, which outlives service restarts.
class SharedObjects final : public DataObjects {
 public:
  explicit SharedObjects(MemDataObjects& to) : to_(to) {}
  awaitable<Status> write_full(std::string pool, std::string name, std::string data) override {
    return to_.write_full(std::move(pool), std::move(name), std::move(data));
  }
  awaitable<Result<std::optional<uint64_t>>> stat(std::string pool, std::string name) override {
    return to_.stat(std::move(pool), std::move(name));
  }
  awaitable<Status> truncate(std::string pool, std::string name, uint64_t size) override {
    return to_.truncate(std::move(pool), std::move(name), size);
  }
  awaitable<Status> remove(std::string pool, std::string name) override {
    return to_.remove(std::move(pool), std::move(name));
  }

 private:
  MemDataObjects& to_;
};

void add_batch_item(proto::BatchRequest& batch, uint32_t method,
                    const google::protobuf::Message& message) {
  auto* item = batch.add_items();
  item->set_method(method);
  item->set_body(message.SerializeAsString());
}

NowFn counting_clock() {
  auto ticks = std::make_shared<std::atomic<uint64_t>>(0);
  return [ticks] {
    uint64_t t = ticks->fetch_add(1);
    proto::Timespec ts;
    ts.set_sec(1700000000 + t / 1000);
    ts.set_nsec(static_cast<uint32_t>((t % 1000) * 1000000));
    return ts;
  };
}

MdsOptions MdsHarness::default_options() {
  MdsOptions options;
  options.now = counting_clock();
  options.reclaim_grace = Duration(0);
  options.housekeeping_interval = Duration(20);
  options.blocking_threads = 2;
  options.committer.sync_delay = Duration(0);  // each call settles at once
  options.fs.inline_threshold = 4096;  // the tests' sizes are chosen around 4 KiB
  return options;
}

MdsHarness::MdsHarness(Backend backend, MdsOptions options) {
  std::unique_ptr<MetaStore> store;
  if (backend == Backend::kRocks) {
    auto opened = open_rocks_meta_store(dir_.path + "/meta", true);
    REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().to_string()));
    store = std::move(*opened);
  } else {
    store = make_mem_meta_store();
  }
  proto::Timespec epoch;
  epoch.set_sec(1600000000);
  DFS_REQUIRE_OK(format_meta_store(*store, options.fs, epoch));
  start_service(std::move(store), std::move(options));
}

void MdsHarness::restart(MdsOptions options, bool reconnect) {
  // The old service winds down its loops first, so no handler outlives it.
  service_->stop();
  while (!service_->idle()) io_.run_one_for(std::chrono::milliseconds(10));
  io_.poll();
  service_.reset();
  auto reopened = open_rocks_meta_store(dir_.path + "/meta", false);
  REQUIRE_MESSAGE(reopened.has_value(), (reopened ? "" : reopened.error().to_string()));
  start_service(std::move(*reopened), std::move(options));
  if (reconnect) DFS_REQUIRE_OK(open_session(client_));
}

Result<proto::SessionReply> MdsHarness::open_session(const std::string& client, bool wants_cache,
                                                     bool holds_exclusive, bool renews) {
  proto::SessionRequest req;
  req.set_client(client);
  req.set_renews(renews);
  req.set_wants_cache(wants_cache);
  req.set_holds_exclusive(holds_exclusive);
  return call<proto::SessionReply>(rpc::kMdsSession, req);
}

void MdsHarness::start_service(std::unique_ptr<MetaStore> store, MdsOptions options) {
  if (!objects_) {
    auto objects = std::make_unique<MemDataObjects>();
    objects_ = objects.get();
    objects_owner_ = std::move(objects);
  }
  service_ = std::make_unique<MdsService>(io_.get_executor(), std::move(options), std::move(store),
                                          std::make_unique<SharedObjects>(*objects_));
  DFS_REQUIRE_OK(service_->load());
  service_->committer().add_listener(
      [this](const proto::MdsLogEntry& e, const ApplyEffects&) { log_.push_back(e); });
  service_->start_background();
}

MdsHarness::~MdsHarness() {
  service_->stop();
  while (!service_->idle()) io_.run_one_for(std::chrono::milliseconds(10));
  io_.poll();
  service_.reset();
}

void MdsHarness::run_for(Duration d) {
  auto until = Clock::now() + d;
  while (Clock::now() < until) io_.run_one_for(std::chrono::milliseconds(5));
}

proto::MdsRequestHeader MdsHarness::header(bool mutating) {
  proto::MdsRequestHeader h;
  h.mutable_reqid()->set_client(client_);
  if (mutating) h.mutable_reqid()->set_seq(next_seq_++);
  *h.mutable_creds() = creds;
  return h;
}

namespace {

Result<proto::Inode> inode_of(Result<proto::InodeReply> r) {
  if (!r) return unexpected(std::move(r).error());
  return std::move(*r->mutable_inode());
}

Status status_of(const Result<proto::InodeReply>& r) {
  if (!r) return r.error();
  return ok_status();
}

}  // namespace

Result<proto::Inode> MdsHarness::lookup(uint64_t parent, const std::string& name) {
  proto::LookupRequest req;
  *req.mutable_header() = header(false);
  req.set_parent(parent);
  req.set_name(name);
  return inode_of(call<proto::InodeReply>(rpc::kMdsLookup, req));
}

Result<proto::Inode> MdsHarness::getattr(uint64_t ino) {
  proto::GetAttrRequest req;
  *req.mutable_header() = header(false);
  req.set_ino(ino);
  return inode_of(call<proto::InodeReply>(rpc::kMdsGetAttr, req));
}

Result<proto::Inode> MdsHarness::mknod(uint64_t parent, const std::string& name, uint32_t mode,
                                       uint64_t rdev, bool exclusive) {
  proto::MknodRequest req;
  *req.mutable_header() = header();
  req.set_parent(parent);
  req.set_name(name);
  req.set_mode(mode);
  req.set_rdev(rdev);
  req.set_exclusive(exclusive);
  return inode_of(call<proto::InodeReply>(rpc::kMdsMknod, req));
}

Result<proto::Inode> MdsHarness::symlink(uint64_t parent, const std::string& name,
                                         const std::string& target) {
  proto::SymlinkRequest req;
  *req.mutable_header() = header();
  req.set_parent(parent);
  req.set_name(name);
  req.set_target(target);
  return inode_of(call<proto::InodeReply>(rpc::kMdsSymlink, req));
}

Result<proto::Inode> MdsHarness::link(uint64_t ino, uint64_t parent, const std::string& name) {
  proto::LinkRequest req;
  *req.mutable_header() = header();
  req.set_ino(ino);
  req.set_new_parent(parent);
  req.set_new_name(name);
  return inode_of(call<proto::InodeReply>(rpc::kMdsLink, req));
}

Result<proto::Inode> MdsHarness::unlink(uint64_t parent, const std::string& name) {
  proto::UnlinkRequest req;
  *req.mutable_header() = header();
  req.set_parent(parent);
  req.set_name(name);
  return inode_of(call<proto::InodeReply>(rpc::kMdsUnlink, req));
}

Result<proto::Inode> MdsHarness::rmdir(uint64_t parent, const std::string& name) {
  proto::UnlinkRequest req;
  *req.mutable_header() = header();
  req.set_parent(parent);
  req.set_name(name);
  req.set_directory(true);
  return inode_of(call<proto::InodeReply>(rpc::kMdsUnlink, req));
}

Result<proto::RenameReply> MdsHarness::rename(uint64_t parent, const std::string& name,
                                              uint64_t new_parent, const std::string& new_name,
                                              uint32_t flags) {
  proto::RenameRequest req;
  *req.mutable_header() = header();
  req.set_parent(parent);
  req.set_name(name);
  req.set_new_parent(new_parent);
  req.set_new_name(new_name);
  req.set_flags(flags);
  return call<proto::RenameReply>(rpc::kMdsRename, req);
}

Result<proto::Inode> MdsHarness::setattr(proto::SetAttrRequest req) {
  *req.mutable_header() = header();
  return inode_of(call<proto::InodeReply>(rpc::kMdsSetAttr, req));
}

Result<proto::Inode> MdsHarness::chmod(uint64_t ino, uint32_t mode) {
  proto::SetAttrRequest req;
  req.set_ino(ino);
  req.set_valid(proto::SET_ATTR_MODE);
  req.set_mode(mode);
  return setattr(req);
}

Result<proto::Inode> MdsHarness::chown(uint64_t ino, uint32_t uid, uint32_t gid) {
  proto::SetAttrRequest req;
  req.set_ino(ino);
  req.set_valid(proto::SET_ATTR_UID | proto::SET_ATTR_GID);
  req.set_uid(uid);
  req.set_gid(gid);
  return setattr(req);
}

Result<proto::Inode> MdsHarness::truncate(uint64_t ino, uint64_t size) {
  proto::SetAttrRequest req;
  req.set_ino(ino);
  req.set_valid(proto::SET_ATTR_SIZE);
  req.set_size(size);
  return setattr(req);
}

Result<proto::ReaddirReply> MdsHarness::readdir(uint64_t ino, uint64_t cookie, uint32_t max,
                                                bool plus) {
  proto::ReaddirRequest req;
  *req.mutable_header() = header(false);
  req.set_ino(ino);
  req.set_cookie(cookie);
  req.set_max_entries(max);
  req.set_plus(plus);
  return call<proto::ReaddirReply>(rpc::kMdsReaddir, req);
}

std::vector<std::string> MdsHarness::list(uint64_t ino, uint32_t page) {
  std::vector<std::string> names;
  uint64_t cookie = 0;
  for (;;) {
    auto r = readdir(ino, cookie, page);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().to_string()));
    for (const auto& e : r->entries()) {
      if (e.name() != "." && e.name() != "..") names.push_back(e.name());
      cookie = e.cookie();
    }
    if (r->eof()) return names;
  }
}

Status MdsHarness::setxattr(uint64_t ino, const std::string& name, const std::string& value,
                            uint32_t flags) {
  proto::SetXattrRequest req;
  *req.mutable_header() = header();
  req.set_ino(ino);
  req.set_name(name);
  req.set_value(value);
  req.set_flags(flags);
  return status_of(call<proto::InodeReply>(rpc::kMdsSetXattr, req));
}

Result<std::string> MdsHarness::getxattr(uint64_t ino, const std::string& name) {
  proto::GetXattrRequest req;
  *req.mutable_header() = header(false);
  req.set_ino(ino);
  req.set_name(name);
  auto r = call<proto::GetXattrReply>(rpc::kMdsGetXattr, req);
  if (!r) return unexpected(std::move(r).error());
  return r->value();
}

Result<std::vector<std::string>> MdsHarness::listxattr(uint64_t ino) {
  proto::ListXattrRequest req;
  *req.mutable_header() = header(false);
  req.set_ino(ino);
  auto r = call<proto::ListXattrReply>(rpc::kMdsListXattr, req);
  if (!r) return unexpected(std::move(r).error());
  return std::vector<std::string>(r->names().begin(), r->names().end());
}

Status MdsHarness::removexattr(uint64_t ino, const std::string& name) {
  proto::RemoveXattrRequest req;
  *req.mutable_header() = header();
  req.set_ino(ino);
  req.set_name(name);
  return status_of(call<proto::InodeReply>(rpc::kMdsRemoveXattr, req));
}

Result<proto::Inode> MdsHarness::open(uint64_t ino, uint32_t flags) {
  proto::OpenRequest req;
  *req.mutable_header() = header();
  req.set_ino(ino);
  req.set_flags(flags);
  return inode_of(call<proto::InodeReply>(rpc::kMdsOpen, req));
}

Status MdsHarness::release(uint64_t ino) {
  proto::ReleaseRequest req;
  *req.mutable_header() = header();
  req.set_ino(ino);
  auto r = call<proto::Empty>(rpc::kMdsRelease, req);
  if (!r) return r.error();
  return ok_status();
}

Result<proto::Inode> MdsHarness::write_inline(uint64_t ino, uint64_t offset,
                                              const std::string& data) {
  proto::WriteInlineRequest req;
  *req.mutable_header() = header();
  req.set_ino(ino);
  req.set_offset(offset);
  req.set_data(data);
  return inode_of(call<proto::InodeReply>(rpc::kMdsWriteInline, req));
}

Result<proto::Inode> MdsHarness::uninline(uint64_t ino) {
  proto::UninlineRequest req;
  *req.mutable_header() = header();
  req.set_ino(ino);
  return inode_of(call<proto::InodeReply>(rpc::kMdsUninline, req));
}

Result<proto::Inode> MdsHarness::commit_write(uint64_t ino, uint64_t end, bool clear_privileges) {
  proto::CommitWriteRequest req;
  *req.mutable_header() = header();
  req.set_ino(ino);
  req.set_end(end);
  req.set_clear_privileges(clear_privileges);
  return inode_of(call<proto::InodeReply>(rpc::kMdsCommitWrite, req));
}

Result<proto::StatFsMdsReply> MdsHarness::statfs() {
  proto::StatFsMdsRequest req;
  *req.mutable_header() = header(false);
  return call<proto::StatFsMdsReply>(rpc::kMdsStatFs, req);
}

}  // namespace dfs::mds::test
