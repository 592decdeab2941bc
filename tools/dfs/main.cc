// dfs: the administration CLI (cluster status, OSDs, pools, objects, client sessions).
#include <spdlog/spdlog.h>

#include "client-fuse/libdfs/client_config.h"
#include "common/log/log.h"
#include "tools/dfs/cli_context.h"

namespace dfs::cli {

Result<std::unique_ptr<client::ObjectClient>> connect_client(const GlobalOptions& options) {
  auto client_options = DFS_TRY(client::client_options_from_config(options.conf));
  client_options.name = options.name;
  client_options.op_timeout = Duration(options.timeout_s * 1000);
  client_options.connect_timeout = Duration(std::min(options.timeout_s, 10) * 1000);
  return client::ObjectClient::connect(client_options);
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int report(const std::string& what, const Error& error) {
  fmt::print(stderr, "dfs: {}: {}\n", what, error.to_string());
  return error.code() == ErrorCode::kNotFound ? 2 : 1;
}

}  // namespace dfs::cli

int main(int argc, char** argv) {
  // Library chatter goes to stderr only when asked for.
  spdlog::set_level(spdlog::level::warn);
  CLI::App app{"dfs: administer a dfs cluster"};
  app.require_subcommand(1);
  dfs::cli::GlobalOptions global;
  app.add_option("-c,--conf", global.conf, "cluster config (default $DFS_CONF, then /etc/dfs/dfs.conf)");
  app.add_option("-n,--name", global.name, "client name to connect as")->capture_default_str();
  app.add_option("--timeout", global.timeout_s, "seconds before an unreachable cluster is an error")
      ->capture_default_str();
  int exit_code = 0;
  dfs::cli::add_status_commands(app, global, exit_code);
  dfs::cli::add_osd_commands(app, global, exit_code);
  dfs::cli::add_pool_commands(app, global, exit_code);
  dfs::cli::add_obj_commands(app, global, exit_code);
  dfs::cli::add_pg_commands(app, global, exit_code);
  dfs::cli::add_client_commands(app, global, exit_code);
  dfs::cli::add_bootstrap_command(app, exit_code);
  dfs::cli::add_bench_command(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
