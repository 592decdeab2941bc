// `dfs bench`: the suites (fio, db, tree, meta) on every --target and on a local
// baseline directory, interleaved round by round so that a noisy machine treats both
// alike, with a progress line and an ETA; then results.csv, report.md (what each target
// is on, a table per suite, ratios to the baseline) and SVG plots of the fio throughput
// in --out.
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "client-fuse/libdfs/client_config.h"
#include "client-fuse/libdfs/mount_source.h"
#include "tools/dfs/bench/process.h"
#include "tools/dfs/bench/suite.h"
#include "tools/dfs/bench/target_info.h"
#include "tools/dfs/cli_context.h"
#include "tools/dfs/mds_status.h"

namespace dfs::cli {
namespace {

using bench::BenchOptions;
using bench::Sample;
using bench::Step;
using bench::Target;

struct BenchFlags {
  std::vector<std::string> targets;
  std::string baseline = "/var/tmp/dfs-bench-baseline";
  std::vector<std::string> suites;
  bool quick = false;
  std::string out;
  int rounds = 0;  // 0: 1 with --quick, else 3
  double tree_scale = 0;  // 0: 0.05 with --quick, else 0.25
  std::string tree_generator;
};

std::string now_text(const char* format) {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, format, std::localtime(&t));
  return buf;
}

// The source directory of the CMake build in build_dir (from its CMakeCache.txt), or
// empty when build_dir is not one.
std::string cmake_source_dir(const std::filesystem::path& build_dir) {
  std::ifstream cache(build_dir / "CMakeCache.txt");
  const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
  for (std::string line; std::getline(cache, line);) {
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  }
  return "";
}

// The tree generator: tools/bench/gen_tree of the source tree this binary was built
// from (found by going up from the binary: into the source tree when the build
// directory is inside it, as build/tools/dfs/dfs, or through the build directory's
// CMakeCache.txt when it is elsewhere), else the installed one (PREFIX/bin/dfs:
// PREFIX/share/dfs/gen_tree), else empty.
std::string default_tree_generator() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path generator = std::filesystem::path("tools") / "bench" / "gen_tree";
  for (auto dir = exe.parent_path(); dir.has_relative_path(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / generator, ec)) return (dir / generator).string();
    const std::string sources = cmake_source_dir(dir);
    if (!sources.empty() && std::filesystem::exists(std::filesystem::path(sources) / generator, ec)) {
      return (std::filesystem::path(sources) / generator).string();
    }
  }
  auto installed = exe.parent_path().parent_path() / "share" / "dfs" / "gen_tree";
  if (std::filesystem::exists(installed, ec)) return installed.string();
  return "";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Cores, memory, the baseline's disk, kernel and fio version: what a reader needs to
// compare a report with another.
std::string machine_text(const std::string& baseline_dir) {
  std::string mem;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemTotal:") mem = fmt::format("{:.1f} GiB", kb / 1048576.0);
    meminfo.ignore(256, '\n');
  }
  utsname u{};
  ::uname(&u);
  auto df = bench::run_process({"df", "-hT", baseline_dir});
  std::string disk = df.ok() ? df.out.substr(df.out.find('\n') + 1) : "unknown\n";
  while (!disk.empty() && disk.back() == '\n') disk.pop_back();
  auto fio = bench::run_process({"fio", "--version"});
  return fmt::format("- machine: {} cores, {} memory, Linux {}\n- baseline file system: `{}`\n- {}, dfs {}\n",
                     std::thread::hardware_concurrency(), mem, u.release, disk,
                     fio.ok() ? first_line(fio.out) : "fio missing", DFS_VERSION);
}

// The cluster behind a dfs mount of `source` in words: how it keeps the metadata, its
// OSDs and pools. Asks the monitors and every MDS, a few seconds at most.
std::string dfs_configuration(const std::string& source_text) {
  auto source = client::parse_source(source_text);
  if (!source) return "a source that does not parse: " + source.error().to_string();
  client::ClientOptions options;
  if (source->mon_addrs.empty()) {  // the mount took its monitors from the config file
    auto configured = client::client_options_from_config("");
    if (!configured) return "monitors unknown: " + configured.error().to_string();
    options = std::move(*configured);
  } else {
    options.mon_addrs = source->mon_addrs;
  }
  options.connect_timeout = Duration(5000);
  options.op_timeout = Duration(10000);
  auto client = client::ObjectClient::connect(options);
  if (!client) return "the cluster did not answer: " + client.error().to_string();
  auto status = (*client)->run((*client)->mon_status());
  if (!status) return "the monitors did not answer: " + status.error().to_string();
  const auto& map = status->map();
  std::vector<bench::MetadataReplica> replicas;
  for (auto& row : (*client)->run(gather_mds(**client, ClusterMap(map), Duration(2000)))) {
    replicas.push_back({row.name, row.rank, row.replicated, row.raft.role(), row.error});
  }
  int up = 0;
  for (const auto& osd : map.osds()) up += osd.up();
  std::string pools;
  for (const auto& pool : map.pools()) {
    pools += fmt::format("{}{} {} copies", pools.empty() ? "" : ", ", pool.name(), pool.size());
  }
  return fmt::format("metadata {}; {} of {} OSDs up; pools {}", bench::describe_metadata(replicas),
                     up, map.osds_size(), pools.empty() ? "none" : pools);
}

// What `dir` is on: its file system and, for a dfs mount, that cluster's configuration.
std::string target_configuration(const std::string& dir) {
  std::error_code ec;
  auto path = std::filesystem::canonical(dir, ec);
  if (ec) return "an unknown file system (" + ec.message() + ")";
  std::ifstream file("/proc/self/mountinfo");
  std::stringstream mountinfo;
  mountinfo << file.rdbuf();
  auto mount = bench::mount_of(mountinfo.str(), path.string());
  if (!mount) return "an unknown file system";
  if (mount->fstype != "fuse.dfs") {
    return fmt::format("{}, mounted at {} (not dfs)", mount->fstype, mount->mountpoint);
  }
  return fmt::format("dfs `{}` mounted at {}: {}", mount->source, mount->mountpoint,
                     dfs_configuration(mount->source));
}

std::string progress_line(size_t done, size_t total, const std::string& what, double eta_s) {
  constexpr int kWidth = 24;
  int filled = total ? static_cast<int>(done * kWidth / total) : kWidth;
  std::string eta = eta_s >= 60 ? fmt::format("{} min {} s", static_cast<int>(eta_s) / 60,
                                              static_cast<int>(eta_s) % 60)
                                 : fmt::format("{} s", static_cast<int>(eta_s));
  std::string line = fmt::format("[{}{}] {}/{} {} - ETA {}", std::string(filled, '#'),
                                 std::string(kWidth - filled, '.'), done, total, what, eta);
  if (line.size() > 110) line = line.substr(0, 107) + "...";
  return line;
}

int run_bench(const BenchFlags& flags, const std::string& command_line) {
  auto fail = [](const std::string& why) {
    fmt::print(stderr, "dfs bench: {}\n", why);
    return 1;
  };
  if (flags.targets.empty()) return fail("name at least one --target (a directory on dfs: /mnt/dfs)");
  BenchOptions options;
  options.quick = flags.quick;
  options.rounds = flags.rounds > 0 ? flags.rounds : (flags.quick ? 1 : 3);
  options.tree_scale = flags.tree_scale > 0 ? flags.tree_scale : (flags.quick ? 0.05 : 0.25);
  options.tree_generator = flags.tree_generator.empty() ? default_tree_generator() : flags.tree_generator;
  const std::string out = flags.out.empty() ? "dfs-bench-" + now_text("%Y%m%d-%H%M%S") : flags.out;
  std::vector<std::string> suites = flags.suites;
  if (suites.empty()) suites = {"fio", "db", "tree", "meta"};
  if (std::find(suites.begin(), suites.end(), "tree") != suites.end() && options.tree_generator.empty()) {
    return fail("the tree suite needs the tree generator: pass --tree-generator PATH/gen_tree");
  }

  // Each target gets a scratch directory of its own, removed at the end.
  std::error_code ec;
  std::vector<Target> targets;
  const std::string scratch_name = fmt::format("dfs-bench.{}", ::getpid());
  for (const auto& dir : flags.targets) {
    if (!std::filesystem::is_directory(dir, ec)) return fail("target " + dir + " is not a directory");
    targets.push_back({dir, dir + "/" + scratch_name, false});
  }
  // Said before the first figure (a wrong target shows at once) and in the report.
  std::string configurations;
  for (const auto& dir : flags.targets) {
    configurations += fmt::format("- target {}: {}\n", dir, target_configuration(dir));
  }
  fmt::print(stderr, "{}", configurations);
  std::filesystem::create_directories(flags.baseline, ec);
  if (ec) return fail("cannot create the baseline " + flags.baseline + ": " + ec.message());
  targets.push_back({"baseline " + flags.baseline, flags.baseline + "/" + scratch_name, true});
  options.scratch = flags.baseline + "/" + scratch_name + "-src";
  std::filesystem::create_directories(options.scratch, ec);
  std::filesystem::create_directories(out, ec);
  if (ec) return fail("cannot create --out " + out + ": " + ec.message());

  std::vector<Step> steps;
  for (const auto& suite : suites) {
    std::vector<Step> more = suite == "fio"    ? bench::fio_steps(options)
                             : suite == "db"   ? bench::db_steps(options)
                             : suite == "tree" ? bench::tree_steps(options)
                             : suite == "meta" ? bench::meta_steps(options)
                                               : std::vector<Step>{};
    if (more.empty()) return fail("no suite '" + suite + "' (fio, db, tree, meta)");
    for (auto& s : more) steps.push_back(std::move(s));
  }
  const size_t total = steps.size() * targets.size() * options.rounds;
  double estimated_left = 0;
  for (const auto& s : steps) estimated_left += s.estimated_s * targets.size() * options.rounds;
  double spent = 0, estimated_done = 0;
  size_t done = 0;
  std::vector<Sample> samples;
  const bool tty = ::isatty(2);
  for (int round = 1; round <= options.rounds; ++round) {
    for (const auto& step : steps) {
      // Alternate which side goes first, round by round: neither always gets a warm cache.
      std::vector<Target> order = targets;
      if (round % 2 == 0) std::rotate(order.rbegin(), order.rbegin() + 1, order.rend());
      for (const auto& target : order) {
        // The ETA scales what is left by how the estimates have held so far.
        double eta = estimated_done > 0 ? estimated_left * spent / estimated_done : estimated_left;
        std::string line = progress_line(done, total, step.name + " on " + target.label, eta);
        fmt::print(stderr, fmt::runtime(tty ? "\r{:<112}" : "{}\n"), line);
        std::filesystem::create_directories(target.dir, ec);
        auto started = std::chrono::steady_clock::now();
        auto measured = step.run(target);
        spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        estimated_done += step.estimated_s;
        estimated_left -= step.estimated_s;
        for (auto& s : measured) {
          s.round = round;
          if (!s.error.empty()) fmt::print(stderr, "{}dfs bench: {} on {}: {}\n", tty ? "\n" : "", s.figure, s.target, s.error);
          samples.push_back(std::move(s));
        }
        ++done;
      }
    }
  }
  fmt::print(stderr, fmt::runtime(tty ? "\r{:<112}\n" : "{}\n"), progress_line(done, total, "done", 0));
  for (const auto& t : targets) std::filesystem::remove_all(t.dir, ec);
  std::filesystem::remove_all(options.scratch, ec);

  std::string report = fmt::format("# dfs bench, {}\n\n- command: `{}`\n{}{}- rounds: {}{}\n",
                                   now_text("%Y-%m-%d %H:%M"), command_line, configurations,
                                   machine_text(flags.baseline), options.rounds,
                                   options.quick ? " (--quick)" : "");
  bool complete = true;
  for (const auto& suite : suites) {
    auto table = bench::markdown_table(samples, suite);
    complete = complete && table.complete;
    report += "\n## " + suite + "\n\n" + table.markdown;
  }
  std::vector<std::string> written = {out + "/report.md", out + "/results.csv"};
  std::ofstream(out + "/report.md") << report;
  std::ofstream(out + "/results.csv") << bench::to_csv(samples);
  for (const auto& [name, svg] : bench::fio_plots(samples)) {
    std::ofstream(out + "/" + name) << svg;
    written.push_back(out + "/" + name);
  }
  fmt::print("{}\n", report);
  for (const auto& w : written) fmt::print("wrote {}\n", w);
  if (!complete) {
    fmt::print(stderr, "dfs bench: INCOMPLETE: some figures failed (see the tables); exit status 1\n");
    return 1;
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  auto* cmd = app.add_subcommand(
      "bench",
      "measure file systems against a local disk: fio matrix, fsync'd 4 KiB commits, an lxc "
      "tree (rsync, read-back, tar, find, rm), metadata ops; tables, CSV and SVG plots, and "
      "for a dfs target its cluster's configuration (how many MDS keep the metadata)");
  cmd->add_option("--target", flags->targets, "a directory to measure (repeat for several)");
  cmd->add_option("--baseline", flags->baseline, "the local directory every figure is compared with")
      ->capture_default_str();
  cmd->add_option("--suite", flags->suites, "fio, db, tree or meta (repeat; default all)")
      ->check(CLI::IsMember({"fio", "db", "tree", "meta"}));
  cmd->add_flag("--quick", flags->quick, "small sizes and short runs: minutes, not an hour");
  cmd->add_option("--out", flags->out, "where the report, CSV and plots go (default ./dfs-bench-DATE)");
  cmd->add_option("--rounds", flags->rounds, "repeats of every step (default 1 with --quick, else 3)");
  cmd->add_option("--tree-scale", flags->tree_scale, "size of the generated tree (1.0: ~1.2 GB; "
                                                      "default 0.05 with --quick, else 0.25)");
  cmd->add_option("--tree-generator", flags->tree_generator,
                  "the tree generator (default tools/bench/gen_tree of the source tree this dfs was "
                  "built in, else PREFIX/share/dfs/gen_tree)");
  cmd->callback([flags, &exit_code] {
    std::string line = "dfs bench";
    for (const auto& t : flags->targets) line += " --target " + t;
    if (flags->quick) line += " --quick";
    for (const auto& s : flags->suites) line += " --suite " + s;
    if (!flags->out.empty()) line += " --out " + flags->out;
    // Every option that changes what was measured, so the line reruns the same work.
    if (!flags->baseline.empty()) line += " --baseline " + flags->baseline;
    if (flags->rounds > 0) line += " --rounds " + std::to_string(flags->rounds);
    if (flags->tree_scale > 0) line += fmt::format(" --tree-scale {}", flags->tree_scale);
    if (!flags->tree_generator.empty()) line += " --tree-generator " + flags->tree_generator;
    exit_code = run_bench(*flags, line);
  });
}

}  // namespace dfs::cli
