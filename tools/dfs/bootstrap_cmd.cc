// `dfs bootstrap --mons dfs1,dfs2,dfs3`: writes dfs.conf, the keyring and the client's
// secret for a new cluster into --out (default /etc/dfs) and prints, host by host, what
// to copy and run next. It talks to no cluster: there is none yet.
#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tools/dfs/bootstrap.h"
#include "tools/dfs/cli_context.h"

namespace dfs::cli {
namespace {

struct BootstrapFlags {
  std::string mons;
  std::string out = "/etc/dfs";
  bool force = false;
};

std::string new_fsid() {
  std::array<unsigned char, 16> b{};
  if (RAND_bytes(b.data(), static_cast<int>(b.size())) != 1) return make_random_key();
  b[6] = (b[6] & 0x0f) | 0x40;  // UUID version 4
  b[8] = (b[8] & 0x3f) | 0x80;
  return fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                     "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                     b[12], b[13], b[14], b[15]);
}

// Writes `text` to `path` with `mode` from the first byte (a secret is never readable by
// others, even for a moment), through a temporary file renamed into place.
Status write_file(const std::string& path, const std::string& text, mode_t mode) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return make_error(ErrorCode::kIoError, tmp + ": " + std::strerror(errno));
  bool ok = ::fchmod(fd, mode) == 0 &&
            ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  int saved = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) saved = errno;
    ::unlink(tmp.c_str());
    return make_error(ErrorCode::kIoError, path + ": " + std::strerror(saved));
  }
  return ok_status();
}

void print_next_steps(const BootstrapPlan& plan, const std::string& out,
                      const std::vector<std::string>& files) {
  std::string names;
  for (const auto& f : files) names += " " + out + "/" + f;
  fmt::print("\nNext steps.\n\n1. Copy the files to every other host (the keyring and secret stay 0600):\n");
  for (size_t i = 1; i < plan.hosts.size(); ++i) {
    fmt::print("     ssh root@{0} install -d -m 0755 {1} && scp -p{2} root@{0}:{1}/\n",
               plan.hosts[i].name, out, names);
  }
  if (out != "/etc/dfs") {
    fmt::print("   and on every host (this one too) put them in /etc/dfs, where the daemons and\n"
               "   the systemd units look.\n");
  }
  fmt::print("\n2. On each host, prepare its daemons once and start them with systemd:\n");
  for (size_t i = 0; i < plan.hosts.size(); ++i) {
    const auto& h = plan.hosts[i].name;
    std::string osd_mkfs, osd_units;
    for (int id : osd_ids_of_host(plan, i)) {
      osd_mkfs += fmt::format(" && dfs-osd --mkfs -i {}", id);
      osd_units += fmt::format(" dfs-osd@{}", id);
    }
    fmt::print("   {}:\n     dfs-mon --mkfs -i {} && dfs-mds --mkfs -i {}{}\n"
               "     systemctl enable --now dfs.target dfs-mon@{} dfs-mds@{}{}\n",
               h, h, h, osd_mkfs, h, h, osd_units);
  }
  std::string sources;
  for (const auto& h : plan.hosts) sources += (sources.empty() ? "" : ",") + h.name;
  fmt::print(
      "   An OSD's store is {}/osd.N: mount a disk there first, or see docs/operations.md\n"
      "   for a loop file (dfs-osd --mkfs --loop-file FILE --size N).\n\n"
      "3. Once `dfs status` shows the OSDs up, create the file system's data pool:\n"
      "     dfs pool create data --size {} --min-size {} --pg-num 64\n\n"
      "4. Mount it on any machine with the files in /etc/dfs, at boot from /etc/fstab:\n"
      "     {}:/  /mnt/dfs  dfs  _netdev,name={},secretfile=/etc/dfs/{}.secret  0  0\n",
      plan.data_dir, std::min<size_t>(3, plan.hosts.size() * plan.osds_per_host),
      plan.hosts.size() * plan.osds_per_host >= 3 ? 2 : 1, sources, plan.client, plan.client);
}

int run_bootstrap(BootstrapPlan plan, const BootstrapFlags& flags) {
  auto hosts = parse_bootstrap_hosts(flags.mons);
  if (!hosts) return report("bootstrap", hosts.error());
  plan.hosts = std::move(*hosts);
  plan.fsid = new_fsid();
  if (auto checked = check_bootstrap_plan(plan); !checked) return report("bootstrap", checked.error());

  std::error_code ec;
  std::filesystem::create_directories(flags.out, ec);
  if (ec) {
    fmt::print(stderr, "dfs: bootstrap: cannot create {}: {}\n", flags.out, ec.message());
    return 1;
  }
  const std::string conf = flags.out + "/dfs.conf";
  if (!flags.force && ::access(conf.c_str(), F_OK) == 0) {
    fmt::print(stderr,
               "dfs: bootstrap: {} exists: a cluster was bootstrapped here already. Its keys "
               "and fsid would be lost; pass --force to replace them\n",
               conf);
    return 1;
  }
  const std::string keyring = render_keyring(plan, make_random_key);
  auto client_key = keyring_key(keyring, "client." + plan.client);
  if (!client_key) return report("bootstrap", client_key.error());
  const std::vector<std::pair<std::string, std::pair<std::string, mode_t>>> files = {
      {"dfs.keyring", {keyring, 0600}},
      {plan.client + ".secret", {*client_key + "\n", 0600}},
      {"dfs.conf", {render_config(plan), 0644}},  // last: its presence means "done"
  };
  std::vector<std::string> written;
  for (const auto& [name, content] : files) {
    if (auto w = write_file(flags.out + "/" + name, content.first, content.second); !w) {
      return report("bootstrap", w.error());
    }
    written.push_back(name);
  }
  fmt::print("dfs bootstrap: cluster {} with {} hosts, {} OSDs, file system '{}'\n", plan.fsid,
             plan.hosts.size(), plan.hosts.size() * plan.osds_per_host, plan.fs_name);
  for (const auto& name : written) fmt::print("  wrote {}/{}\n", flags.out, name);
  print_next_steps(plan, flags.out, written);
  return 0;
}

}  // namespace

void add_bootstrap_command(CLI::App& app, int& exit_code) {
  auto plan = std::make_shared<BootstrapPlan>();
  auto flags = std::make_shared<BootstrapFlags>();
  auto* cmd = app.add_subcommand(
      "bootstrap",
      "write the config, keyring and client secret of a new cluster (run once, on one host), "
      "and print the steps that follow");
  cmd->add_option("--mons", flags->mons,
                  "the hosts, each running a monitor, an MDS and OSDs: dfs1,dfs2,dfs3 or "
                  "dfs1=ADDRESS,... when the names do not resolve to the cluster network")
      ->required();
  cmd->add_option("--fs", plan->fs_name, "file system name")->capture_default_str();
  cmd->add_option("--client", plan->client, "client whose key goes to OUT/CLIENT.secret")
      ->capture_default_str();
  cmd->add_option("--out", flags->out, "where to write the files")->capture_default_str();
  cmd->add_option("--port", plan->port,
                  "monitor port; each MDS listens on PORT+1, OSD j of a host on PORT+11+j")
      ->capture_default_str();
  cmd->add_option("--osds-per-host", plan->osds_per_host, "OSDs (data disks) per host")
      ->capture_default_str();
  cmd->add_option("--data-dir", plan->data_dir, "each daemon's data is DATA_DIR/TYPE.ID")
      ->capture_default_str();
  cmd->add_option("--log-dir", plan->log_dir, "each daemon's log is LOG_DIR/TYPE.ID.log")
      ->capture_default_str();
  cmd->add_flag("--force", flags->force, "replace an existing OUT/dfs.conf and its keys");
  cmd->callback([plan, flags, &exit_code] { exit_code = run_bootstrap(*plan, *flags); });
}

}  // namespace dfs::cli
