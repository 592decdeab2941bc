// The cluster configuration file (INI: [global], [mon.a], [osd.0] ... sections of
// key = value lines). Lookups fall back from a daemon's section to its type's section
// ([osd]) to [global]. Parsed once at start-up into typed structs by each daemon.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status/status.h"

namespace dfs {

class Config {
 public:
  // Errors: kNotFound (no such file), kInvalidArgument (syntax error, with line).
  static Result<Config> load_file(const std::string& path);
  static Result<Config> parse(const std::string& text, const std::string& origin);

  // Looks `key` up in `section`, then its type ("osd" for "osd.3"), then "global".
  std::optional<std::string> get(const std::string& section, const std::string& key) const;
  std::string get_or(const std::string& section, const std::string& key,
                     const std::string& fallback) const;
  // Errors: kInvalidArgument when present but not a number / boolean.
  Result<int64_t> get_int(const std::string& section, const std::string& key,
                          int64_t fallback) const;
  Result<double> get_double(const std::string& section, const std::string& key,
                            double fallback) const;

  void set(const std::string& section, const std::string& key, const std::string& value);
  std::vector<std::string> sections() const;
  // Sections named "<type>.<id>", e.g. every "osd.N".
  std::vector<std::string> sections_of_type(const std::string& type) const;
  const std::string& origin() const { return origin_; }

 private:
  std::string origin_;
  std::map<std::string, std::map<std::string, std::string>> values_;
};

// Where a program finds the cluster: --conf/-c if given, else $DFS_CONF, else
// /etc/dfs/dfs.conf.
std::string resolve_config_path(const std::string& flag_value);

// Splits "a,b,c" and trims spaces; empty items dropped.
std::vector<std::string> split_list(const std::string& text);

}  // namespace dfs
