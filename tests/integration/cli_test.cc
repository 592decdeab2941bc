// The `dfs` admin CLI against a real cluster: pools and objects round-trip through the
// binary, and failures exit non-zero with one clear line on stderr.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "tests/support/process.h"
#include "tests/support/test_cluster.h"
#include "tests/support/test_data.h"

namespace dfs::test {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

// Runs `dfs` with `args`; REQUIREs that it could be run at all.
CommandResult dfs_cli(const std::string& scratch, std::vector<std::string> args,
                      milliseconds timeout = milliseconds(60000)) {
  args.insert(args.begin(), cli_binary());
  auto result = run_command(args, scratch, timeout);
  DFS_REQUIRE_OK(result);
  return *result;
}

// A failure the way users should see it: non-zero exit, one line on stderr saying
// "dfs: ..." that contains `words`, nothing on stdout.
void check_clear_failure(const CommandResult& r, const std::string& words) {
  INFO(r.describe());
  CHECK(r.exit_code > 0);
  CHECK_FALSE(r.timed_out);
  auto lines = lines_of(r.err);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("dfs: ", 0) == 0);
  CHECK(lines[0].find(words) != std::string::npos);
  CHECK(r.out.empty());
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE("integration/cli: dfs pool and obj commands round-trip through the binary") {
  TestCluster cluster;
  INFO("cluster dir " << cluster.dir());
  DFS_REQUIRE_OK(cluster.boot());
  const std::string conf = cluster.conf_path();
  const std::string dir = cluster.dir();

  auto created = dfs_cli(dir, {"-c", conf, "pool", "create", "data", "--pg-num", "16"});
  CHECK_MESSAGE(created.exit_code == 0, created.describe());
  auto pools = dfs_cli(dir, {"-c", conf, "pool", "ls"});
  CHECK_MESSAGE(pools.exit_code == 0, pools.describe());
  auto pool_lines = lines_of(pools.out);
  CHECK_MESSAGE(
      std::any_of(pool_lines.begin(), pool_lines.end(),
                  [](const std::string& l) { return l.find(" data ") != std::string::npos; }),
      pools.describe());

  // Empty, small, and larger than the CLI's 16 MiB chunk (two writes, two reads).
  std::map<std::string, std::string> objects = {
      {"empty", ""},
      {"small", object_bytes(1, 100'000)},
      {"dir/large", object_bytes(2, (20 << 20) + 123)},
  };
  for (const auto& [name, bytes] : objects) {
    std::string file = dir + "/in-" + std::to_string(std::hash<std::string>{}(name));
    write_file(file, bytes);
    auto put = dfs_cli(dir, {"-c", conf, "obj", "put", "data", name, file});
    CHECK_MESSAGE(put.exit_code == 0, name << ": " << put.describe());
  }

  auto listed = dfs_cli(dir, {"-c", conf, "obj", "ls", "data"});
  CHECK_MESSAGE(listed.exit_code == 0, listed.describe());
  CHECK(lines_of(listed.out) == std::vector<std::string>{"dir/large", "empty", "small"});

  for (const auto& [name, bytes] : objects) {
    INFO("object " << name);
    std::string out = dir + "/out-" + std::to_string(std::hash<std::string>{}(name));
    auto got = dfs_cli(dir, {"-c", conf, "obj", "get", "data", name, out});
    REQUIRE_MESSAGE(got.exit_code == 0, got.describe());
    std::string read_back = read_file(out);
    CHECK_MESSAGE(read_back == bytes, first_difference(read_back, bytes));
    auto stat = dfs_cli(dir, {"-c", conf, "obj", "stat", "data", name});
    CHECK_MESSAGE(stat.out.find("size " + std::to_string(bytes.size()) + " ") != std::string::npos,
                  stat.describe());
  }

  // Overwriting with a shorter file leaves no tail of the old object.
  std::string shorter = object_bytes(3, 5000);
  write_file(dir + "/shorter", shorter);
  auto overwrite = dfs_cli(dir, {"-c", conf, "obj", "put", "data", "dir/large", dir + "/shorter"});
  CHECK_MESSAGE(overwrite.exit_code == 0, overwrite.describe());
  auto got_shorter =
      dfs_cli(dir, {"-c", conf, "obj", "get", "data", "dir/large", dir + "/got-shorter"});
  CHECK_MESSAGE(got_shorter.exit_code == 0, got_shorter.describe());
  CHECK(read_file(dir + "/got-shorter") == shorter);

  auto removed = dfs_cli(dir, {"-c", conf, "obj", "rm", "data", "small"});
  CHECK_MESSAGE(removed.exit_code == 0, removed.describe());
  auto after_rm = dfs_cli(dir, {"-c", conf, "obj", "ls", "data"});
  CHECK(lines_of(after_rm.out) == std::vector<std::string>{"dir/large", "empty"});

  {  // Errors exit non-zero with one clear line.
    std::string missing_out = dir + "/never-written";
    check_clear_failure(dfs_cli(dir, {"-c", conf, "obj", "get", "data", "small", missing_out}),
                        "not found");
    CHECK_FALSE(std::filesystem::exists(missing_out));
    check_clear_failure(
        dfs_cli(dir, {"-c", conf, "obj", "get", "data", "no-such-object", missing_out}),
        "not found");
    check_clear_failure(dfs_cli(dir, {"-c", conf, "obj", "rm", "data", "no-such-object"}),
                        "not found");
    check_clear_failure(dfs_cli(dir, {"-c", conf, "obj", "put", "nopool", "x", dir + "/shorter"}),
                        "pool 'nopool' does not exist");
    check_clear_failure(
        dfs_cli(dir, {"-c", conf, "obj", "put", "data", "x", dir + "/no-such-file"}),
        "no-such-file");
    check_clear_failure(dfs_cli(dir, {"-c", dir + "/no-such.conf", "status"}), "no-such.conf");
  }
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE("integration/cli: dfs status fails fast when no monitor answers") {
  TestCluster cluster(ClusterOptions{.osds = 0});  // never booted: its mon port is silent
  std::string conf = cluster.dir() + "/dead.conf";
  {
    std::ofstream out(conf);
    out << "[global]\nfsid = dead\nmon_addrs = " << cluster.mon_addr() << "\n";
  }
  auto r = dfs_cli(cluster.dir(), {"--timeout", "2", "-c", conf, "status"}, milliseconds(30000));
  check_clear_failure(r, "unreachable");
  CHECK_MESSAGE(r.elapsed < milliseconds(5000), r.describe());
}

TEST_SUITE_END();

}  // namespace dfs::test
