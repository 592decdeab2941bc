// `dfs obj put|get|ls|rm|stat`: objects of a pool, moved in chunks so that objects
// larger than one frame stream through.
#include <cstring>
#include <fstream>

#include "tools/dfs/cli_context.h"

namespace dfs::cli {
namespace {

constexpr uint64_t kChunkBytes = 16u << 20;

struct ObjArgs {
  std::string pool;
  std::string name;
  std::string file;
};

int put(const GlobalOptions& global, const ObjArgs& args) {
  std::ifstream in(args.file, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "dfs: obj put: cannot read {}: {}\n", args.file, std::strerror(errno));
    return 1;
  }
  auto client = connect_client(global);
  if (!client) return report("obj put", client.error());
  auto& c = **client;
  uint64_t offset = 0;
  std::string chunk(kChunkBytes, '\0');
  do {
    in.read(chunk.data(), kChunkBytes);
    std::string data = chunk.substr(0, static_cast<size_t>(in.gcount()));
    // The first chunk replaces the object, so a shorter file leaves no old tail behind.
    auto written = offset == 0 ? c.run(c.write_full(args.pool, args.name, data))
                               : c.run(c.write(args.pool, args.name, offset, data));
    if (!written) return report("obj put " + args.pool + "/" + args.name, written.error());
    offset += data.size();
  } while (in.gcount() == static_cast<std::streamsize>(kChunkBytes));
  return 0;
}

int get(const GlobalOptions& global, const ObjArgs& args) {
  auto client = connect_client(global);
  if (!client) return report("obj get", client.error());
  auto& c = **client;
  auto st = c.run(c.stat(args.pool, args.name));
  if (!st) return report("obj get " + args.pool + "/" + args.name, st.error());
  std::ofstream out(args.file, std::ios::binary | std::ios::trunc);
  if (!out) {
    fmt::print(stderr, "dfs: obj get: cannot write {}: {}\n", args.file, std::strerror(errno));
    return 1;
  }
  for (uint64_t offset = 0; offset < st->size; offset += kChunkBytes) {
    auto data = c.run(c.read(args.pool, args.name, offset, kChunkBytes));
    if (!data) return report("obj get " + args.pool + "/" + args.name, data.error());
    out.write(data->data(), static_cast<std::streamsize>(data->size()));
  }
  out.close();
  if (!out) {
    fmt::print(stderr, "dfs: obj get: writing {} failed: {}\n", args.file, std::strerror(errno));
    return 1;
  }
  return 0;
}

int list(const GlobalOptions& global, const std::string& pool) {
  auto client = connect_client(global);
  if (!client) return report("obj ls", client.error());
  auto entries = (*client)->run((*client)->list(pool));
  if (!entries) return report("obj ls " + pool, entries.error());
  for (const auto& e : *entries) fmt::print("{}\n", e.name);
  return 0;
}

int remove(const GlobalOptions& global, const ObjArgs& args) {
  auto client = connect_client(global);
  if (!client) return report("obj rm", client.error());
  auto& c = **client;
  // Removing is idempotent in the store; the CLI still tells a typo from a removal.
  auto st = c.run(c.stat(args.pool, args.name));
  if (!st) return report("obj rm " + args.pool + "/" + args.name, st.error());
  auto removed = c.run(c.remove(args.pool, args.name));
  if (!removed) return report("obj rm " + args.pool + "/" + args.name, removed.error());
  return 0;
}

int stat(const GlobalOptions& global, const ObjArgs& args) {
  auto client = connect_client(global);
  if (!client) return report("obj stat", client.error());
  auto st = (*client)->run((*client)->stat(args.pool, args.name));
  if (!st) return report("obj stat " + args.pool + "/" + args.name, st.error());
  fmt::print("{}/{} size {} version {}.{}\n", args.pool, args.name, st->size, st->version.epoch(),
             st->version.seq());
  return 0;
}

}  // namespace

void add_obj_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto* obj = app.add_subcommand("obj", "store, fetch, list and remove objects");
  obj->require_subcommand(1);
  static ObjArgs args;
  auto* put_cmd = obj->add_subcommand("put", "store FILE as object NAME in POOL");
  put_cmd->add_option("pool", args.pool)->required();
  put_cmd->add_option("name", args.name)->required();
  put_cmd->add_option("file", args.file, "file to read")->required();
  put_cmd->callback([&] { exit_code = put(global, args); });
  auto* get_cmd = obj->add_subcommand("get", "write object NAME of POOL to FILE");
  get_cmd->add_option("pool", args.pool)->required();
  get_cmd->add_option("name", args.name)->required();
  get_cmd->add_option("file", args.file, "file to write")->required();
  get_cmd->callback([&] { exit_code = get(global, args); });
  auto* ls_cmd = obj->add_subcommand("ls", "list the objects of POOL");
  ls_cmd->add_option("pool", args.pool)->required();
  ls_cmd->callback([&] { exit_code = list(global, args.pool); });
  auto* rm_cmd = obj->add_subcommand("rm", "remove object NAME from POOL");
  rm_cmd->add_option("pool", args.pool)->required();
  rm_cmd->add_option("name", args.name)->required();
  rm_cmd->callback([&] { exit_code = remove(global, args); });
  auto* stat_cmd = obj->add_subcommand("stat", "show the size and version of object NAME");
  stat_cmd->add_option("pool", args.pool)->required();
  stat_cmd->add_option("name", args.name)->required();
  stat_cmd->callback([&] { exit_code = stat(global, args); });
}

}  // namespace dfs::cli
