// dfs-fsx: a random-operation file checker in the spirit of xfstests' fsx. It reads,
// writes, maps, truncates, syncs and reopens one file, keeps a model of the bytes the
// file must hold, and stops at the first byte or size that differs, printing the seed
// and the operations that led there so that the failure replays.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "checker.h"
#include "operation.h"

namespace {

using namespace dfs::fsx;

struct Options {
  std::string path;
  std::string mode = "buffered";
  uint64_t ops = 10000;
  uint64_t seed = 0;  // 0: pick one and print it
  uint64_t max_size = 256 * 1024;
  uint64_t max_io = 64 * 1024;
  uint64_t alignment = 4096;
  std::string replay;
  std::string log;
  bool quiet = false;
};

// The operations of a replay script, one a line; '#' starts a comment.
bool read_script(const std::string& path, std::vector<Operation>* ops) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "dfs-fsx: cannot read " << path << "\n";
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string error;
    auto op = parse_operation(line, &error);
    if (!op) {
      std::cerr << "dfs-fsx: " << path << ":" << number << ": " << error << "\n";
      return false;
    }
    ops->push_back(*op);
  }
  return true;
}

// Keeps every operation done, for the failure report and --log.
class History {
 public:
  void add(const Operation& op) { ops_.push_back(describe(op)); }
  void print_tail(size_t count) const {
    size_t first = ops_.size() > count ? ops_.size() - count : 0;
    std::cerr << "dfs-fsx: the last " << ops_.size() - first << " operations:\n";
    for (size_t i = first; i < ops_.size(); ++i)
      std::cerr << "  " << i + 1 << ": " << ops_[i] << "\n";
  }
  bool write(const std::string& path) const {
    std::ofstream out(path);
    for (const auto& op : ops_) out << op << "\n";
    return static_cast<bool>(out);
  }

 private:
  std::vector<std::string> ops_;
};

int run(const Options& options) {
  auto mode = parse_mode(options.mode);
  if (!mode) {
    std::cerr << "dfs-fsx: unknown mode '" << options.mode << "' (buffered, mmap, direct)\n";
    return 2;
  }
  std::vector<Operation> script;
  if (!options.replay.empty() && !read_script(options.replay, &script)) return 2;
  uint64_t seed = options.seed ? options.seed : std::random_device{}() | 1;
  uint64_t total = options.replay.empty() ? options.ops : script.size();
  std::string replay_hint =
      options.replay.empty()
          ? "dfs-fsx " + options.path + " --mode " + options.mode + " --seed " +
                std::to_string(seed) + " --ops " + std::to_string(total) + " --max-size " +
                std::to_string(options.max_size) + " --max-io " + std::to_string(options.max_io)
          : "dfs-fsx " + options.path + " --mode " + options.mode + " --replay " + options.replay;
  std::cout << "dfs-fsx: " << total << " operations, mode " << options.mode;
  if (options.replay.empty()) std::cout << ", seed " << seed;
  std::cout << " on " << options.path << "\n" << std::flush;

  FileChecker checker(options.path, *mode, options.alignment);
  if (!checker.ready()) {
    std::cerr << "dfs-fsx: " << checker.error() << "\n";
    return 2;
  }
  GeneratorConfig config{*mode, options.max_size, options.max_io, options.alignment};
  OpGenerator generator(seed, config);
  History history;
  auto failed = [&](uint64_t op_number) {
    std::cerr << "dfs-fsx: FAILED at operation " << op_number << ": " << checker.error() << "\n";
    history.print_tail(25);
    if (!options.log.empty() && history.write(options.log))
      std::cerr << "dfs-fsx: all operations written to " << options.log << "\n";
    std::cerr << "dfs-fsx: to replay: " << replay_hint << "\n";
    return 1;
  };
  for (uint64_t number = 1; number <= total; ++number) {
    Operation op = options.replay.empty() ? generator.next(checker.size()) : script[number - 1];
    history.add(op);
    if (!checker.apply(number, op)) return failed(number);
    if (!options.quiet && number % 10000 == 0)
      std::cout << "dfs-fsx: " << number << " of " << total << " operations clean\n" << std::flush;
  }
  if (!checker.verify_all(total + 1)) return failed(total + 1);
  if (!options.log.empty()) history.write(options.log);
  std::cout << "dfs-fsx: " << total << " operations clean, final size " << checker.size()
            << " bytes\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "dfs-fsx: random reads, writes, mapped reads and writes, truncations, fsyncs and\n"
      "reopens of one file, each checked against a model of the bytes the file must hold.\n"
      "Stops at the first wrong byte or size (exit 1) and prints the seed and the last\n"
      "operations; --replay runs a script of operations (one a line, as printed)."};
  app.add_option("file", options.path, "the file to test (created or emptied)")->required();
  app.add_option("--mode", options.mode,
                 "buffered (page cache), mmap (plus shared mappings) or direct (O_DIRECT)")
      ->capture_default_str();
  app.add_option("--ops,-N", options.ops, "how many operations")->capture_default_str();
  app.add_option("--seed,-S", options.seed, "the random seed (default: a new one, printed)");
  app.add_option("--max-size", options.max_size, "the largest the file grows, in bytes")
      ->capture_default_str();
  app.add_option("--max-io", options.max_io, "the longest read or write, in bytes")
      ->capture_default_str();
  app.add_option("--alignment", options.alignment, "direct mode's I/O unit, in bytes")
      ->capture_default_str();
  app.add_option("--replay", options.replay, "run the operations of this script instead");
  app.add_option("--log", options.log, "write every operation done to this file");
  app.add_flag("--quiet,-q", options.quiet, "no progress lines");
  CLI11_PARSE(app, argc, argv);
  return run(options);
}
