// Shared plumbing of the `dfs` admin CLI: finding the cluster from -c / $DFS_CONF /
// /etc/dfs/dfs.conf, connecting a client, and turning errors into one clear line and
// a non-zero exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <string>

#include "client-fuse/libdfs/object_client.h"

namespace dfs::cli {

struct GlobalOptions {
  std::string conf;
  std::string name = "admin";
  int timeout_s = 30;
};

// Connects using the global options. Errors: kNotFound (no config), kUnavailable.
Result<std::unique_ptr<client::ObjectClient>> connect_client(const GlobalOptions& options);

// `text` as a JSON string literal, quotes included.
std::string json_string(const std::string& text);

// Prints "dfs: <what>: <error>" to stderr and returns the exit status for it.
int report(const std::string& what, const Error& error);

// Each command family adds its subcommands to `app`; the callback runs the command and
// stores its exit status in `exit_code`.
void add_status_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_osd_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_pool_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_obj_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_pg_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_client_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);
// Needs no cluster: makes the files of a new one.
void add_bootstrap_command(CLI::App& app, int& exit_code);
// Needs no cluster either: measures directories (a dfs mount) against a local one.
void add_bench_command(CLI::App& app, int& exit_code);

}  // namespace dfs::cli
