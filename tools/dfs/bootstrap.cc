#include "tools/dfs/bootstrap.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <set>

#include "common/config/config.h"

namespace dfs::cli {
namespace {

Unexpected invalid(std::string why) { return make_error(ErrorCode::kInvalidArgument, std::move(why)); }

// Host names as RFC 1123 allows them (letters, digits, '-', '.'), which also keeps them
// safe in a config section name, a path and a systemd instance name.
bool is_host_name(const std::string& s) {
  return !s.empty() && s.size() <= 63 && s.front() != '-' && s.front() != '.' &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
         });
}

// An address to dial: a host name, an IPv4 address (a host name by these rules) or a
// bracketed IPv6 address.
bool is_address(const std::string& s) {
  if (s.size() > 2 && s.front() == '[' && s.back() == ']') {
    return std::all_of(s.begin() + 1, s.end() - 1,
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':'; });
  }
  return is_host_name(s);
}

// Names that become file names and config values: no '/', spaces or '='.
bool is_simple_name(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

std::string section_line(const std::string& name) { return "\n[" + name + "]\n"; }

}  // namespace

Result<std::vector<BootstrapHost>> parse_bootstrap_hosts(const std::string& list) {
  std::vector<BootstrapHost> hosts;
  std::set<std::string> seen;
  for (const auto& item : split_list(list)) {
    BootstrapHost host;
    auto eq = item.find('=');
    host.name = item.substr(0, eq);
    host.addr = eq == std::string::npos ? host.name : item.substr(eq + 1);
    if (!is_host_name(host.name)) {
      return invalid("'" + host.name + "' is not a host name (letters, digits, '-', '.')");
    }
    if (!is_address(host.addr)) return invalid("'" + host.addr + "' is not an address of " + host.name);
    if (!seen.insert(host.name).second) return invalid("host " + host.name + " is named twice");
    hosts.push_back(std::move(host));
  }
  if (hosts.empty()) return invalid("no hosts: --mons dfs1,dfs2,dfs3 names the monitor hosts");
  if (hosts.size() % 2 == 0 || hosts.size() > 7) {
    return invalid(fmt::format(
        "{} monitor hosts: use 1, 3, 5 or 7. The monitors need a majority, so an even count "
        "survives no more failures than one host fewer",
        hosts.size()));
  }
  return hosts;
}

Status check_bootstrap_plan(const BootstrapPlan& plan) {
  if (plan.port < 1 || plan.port + 11 + plan.osds_per_host > 65535) {
    return invalid(fmt::format("--port {} leaves no room for the OSD ports above it", plan.port));
  }
  if (plan.osds_per_host < 1 || plan.osds_per_host > 64) {
    return invalid("--osds-per-host must be 1..64");
  }
  for (const auto* dir : {&plan.data_dir, &plan.log_dir}) {
    if (dir->empty() || dir->front() != '/' || dir->find_first_of(" \t\n=#") != std::string::npos) {
      return invalid("'" + *dir + "' must be an absolute path without spaces, '=' or '#'");
    }
  }
  if (!is_simple_name(plan.fs_name)) return invalid("--fs: use letters, digits, '-' and '_'");
  if (!is_simple_name(plan.client)) return invalid("--client: use letters, digits, '-' and '_'");
  return ok_status();
}

std::vector<int> osd_ids_of_host(const BootstrapPlan& plan, size_t host_index) {
  std::vector<int> ids;
  for (int j = 0; j < plan.osds_per_host; ++j) {
    ids.push_back(static_cast<int>(host_index) * plan.osds_per_host + j);
  }
  return ids;
}

std::string render_config(const BootstrapPlan& plan) {
  std::string mon_addrs;
  for (const auto& h : plan.hosts) {
    mon_addrs += (mon_addrs.empty() ? "" : ",") + fmt::format("{}:{}", h.addr, plan.port);
  }
  std::string out = fmt::format(
      "# dfs cluster {fsid}, written by dfs bootstrap. The same file goes to every host\n"
      "# (/etc/dfs/dfs.conf); each daemon reads its own section.\n"
      "[global]\n"
      "fsid = {fsid}\n"
      "fs_name = {fs}\n"
      "mon_addrs = {mons}\n",
      fmt::arg("fsid", plan.fsid), fmt::arg("fs", plan.fs_name), fmt::arg("mons", mon_addrs));
  auto daemon = [&](const std::string& name, const std::string& addr, int port) {
    return section_line(name) + fmt::format("addr = {}:{}\ndata = {}/{}\nlog_file = {}/{}.log\n",
                                            addr, port, plan.data_dir, name, plan.log_dir, name);
  };
  for (size_t i = 0; i < plan.hosts.size(); ++i) {
    const auto& h = plan.hosts[i];
    out += fmt::format("\n# ---- host {}\n", h.name);
    out += daemon("mon." + h.name, h.addr, plan.port);
    out += daemon("mds." + h.name, h.addr, plan.port + 1) + "rank = 0\n";
    int local = 0;
    for (int id : osd_ids_of_host(plan, i)) {
      out += daemon("osd." + std::to_string(id), h.addr, plan.port + 11 + local++) +
             "host = " + h.name + "\nweight = 1.0\n";
    }
  }
  return out;
}

std::string render_keyring(const BootstrapPlan& plan, std::string (*random_key)()) {
  std::string out = fmt::format(
      "# dfs keyring of cluster {}: every daemon's key and client.{}'s. Secret: keep it\n"
      "# mode 0600, owned by root, on the cluster's hosts only.\n",
      plan.fsid, plan.client);
  auto entry = [&](const std::string& entity) {
    out += section_line(entity) + "key = " + random_key() + "\n";
  };
  for (size_t i = 0; i < plan.hosts.size(); ++i) {
    entry("mon." + plan.hosts[i].name);
    entry("mds." + plan.hosts[i].name);
    for (int id : osd_ids_of_host(plan, i)) entry("osd." + std::to_string(id));
  }
  entry("client." + plan.client);
  return out;
}

std::string make_random_key() {
  std::array<unsigned char, 32> raw{};
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    // No entropy is not something to paper over with a weak key.
    fmt::print(stderr, "dfs: the system's random number generator failed\n");
    std::abort();
  }
  std::array<unsigned char, 4 * ((raw.size() + 2) / 3) + 1> text{};
  int n = EVP_EncodeBlock(text.data(), raw.data(), static_cast<int>(raw.size()));
  return std::string(reinterpret_cast<const char*>(text.data()), static_cast<size_t>(n));
}

Result<std::string> keyring_key(const std::string& keyring, const std::string& entity) {
  auto parsed = DFS_TRY(Config::parse(keyring, "keyring"));
  // Config falls back to [global]; a keyring has none, so only the entity's own section
  // can answer.
  auto key = parsed.get(entity, "key");
  if (!key) return make_error(ErrorCode::kNotFound, "no key for " + entity + " in the keyring");
  return *key;
}

}  // namespace dfs::cli
