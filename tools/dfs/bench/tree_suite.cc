// The tree suite: the container-tree workload people time before choosing a file system.
// A generated lxc-shaped tree is rsync'ed onto the target and verified identical (a copy
// that differs fails the run: no time is reported for it), read back with the caches
// dropped, extracted from a tar, walked with find/stat and removed.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "tools/dfs/bench/process.h"
#include "tools/dfs/bench/suite.h"

namespace dfs::bench {
namespace {

struct Source {
  bool made = false;
  std::string error;  // why it could not be made
  std::string dir, tar;
  uint64_t entries = 0;
};

// Makes the source tree and its tar once, on first use.
void make_source(Source& src, const BenchOptions& options) {
  if (src.made) return;
  src.made = true;
  src.dir = options.scratch + "/tree-src";
  src.tar = options.scratch + "/tree-src.tar";
  std::error_code ec;
  std::filesystem::remove_all(src.dir, ec);
  auto gen = run_process({"python3", options.tree_generator, src.dir, "--scale",
                          fmt::format("{}", options.tree_scale), "--seed", "7", "--quiet"});
  if (!gen.ok()) {
    src.error = "generating the tree (" + options.tree_generator + ") failed: " + gen.failure();
    return;
  }
  auto tar = run_process({"tar", "-cf", src.tar, "--xattrs", "-C", src.dir, "."});
  if (!tar.ok()) {
    src.error = "tar of the source failed: " + tar.failure();
    return;
  }
  for (auto it = std::filesystem::recursive_directory_iterator(src.dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    ++src.entries;
  }
}

// Empties the page cache so that a read-back reads the target, not memory. Needs root;
// without it the read-back figure says so.
bool drop_caches() {
  run_process({"sync"});
  std::ofstream f("/proc/sys/vm/drop_caches");
  f << "3\n";
  return static_cast<bool>(f.flush());
}

}  // namespace

std::vector<Step> tree_steps(const BenchOptions& options) {
  auto src = std::make_shared<Source>();
  Step step;
  step.suite = "tree";
  step.name = fmt::format("tree (scale {}): rsync, verify, read-back, tar -x, find, rm", options.tree_scale);
  step.estimated_s = 400 * options.tree_scale;
  step.run = [src, options, step](const Target& target) {
    const char* figures[] = {"rsync -aHAX write", "read-back, caches dropped", "tar -x",
                             "find + stat", "rm -rf"};
    auto fail_all = [&](const std::string& why) {
      std::vector<Sample> out;
      for (const char* f : figures) out.push_back(failed_sample(step, f, "s", false, target, why));
      return out;
    };
    make_source(*src, options);
    if (!src->error.empty()) return fail_all(src->error);
    const std::string copy = target.dir + "/tree", untarred = target.dir + "/tree-tar";
    std::error_code ec;
    std::filesystem::remove_all(copy, ec);
    std::filesystem::remove_all(untarred, ec);
    std::filesystem::create_directories(untarred, ec);

    std::vector<double> seconds;
    auto timed = [&](const std::vector<std::string>& argv, const char* what) -> std::string {
      ProcessResult p = run_process(argv);
      if (!p.ok()) return std::string(what) + " failed: " + p.failure();
      seconds.push_back(p.seconds);
      return "";
    };
    if (auto e = timed({"rsync", "-aHAX", "--numeric-ids", src->dir + "/", copy + "/"}, "rsync"); !e.empty()) {
      return fail_all(e);
    }
    // Identical, or no figure at all: contents, modes, owners, times, links, xattrs.
    ProcessResult diff = run_process({"rsync", "-aHAXn", "--numeric-ids", "--checksum",
                                      "--itemize-changes", "--delete", src->dir + "/", copy + "/"});
    if (!diff.ok()) return fail_all("comparing the copy failed: " + diff.failure());
    if (!diff.out.empty()) {
      std::string first = diff.out.substr(0, diff.out.find('\n'));
      return fail_all("the copy differs from the source (" + first + ")");
    }
    const bool dropped = drop_caches();
    if (auto e = timed({"sh", "-c", "tar -cf - -C \"$1\" . | wc -c >/dev/null", "sh", copy}, "read-back");
        !e.empty()) {
      return fail_all(e);
    }
    if (auto e = timed({"tar", "-xf", src->tar, "--xattrs", "-C", untarred}, "tar -x"); !e.empty()) {
      return fail_all(e);
    }
    if (auto e = timed({"sh", "-c", "find \"$1\" -printf '%s %m %U %T@\\n' | wc -l >/dev/null", "sh", copy},
                       "find");
        !e.empty()) {
      return fail_all(e);
    }
    if (auto e = timed({"rm", "-rf", copy, untarred}, "rm -rf"); !e.empty()) return fail_all(e);

    std::vector<Sample> out;
    for (size_t i = 0; i < seconds.size(); ++i) {
      Sample s;
      s.suite = "tree";
      s.figure = figures[i];
      if (i == 1 && !dropped) s.figure += " (caches NOT dropped: not root)";
      s.unit = "s";
      s.higher_is_better = false;
      s.target = target.label;
      s.baseline = target.baseline;
      s.value = seconds[i];
      out.push_back(s);
    }
    Sample rate = out.front();
    rate.figure = fmt::format("rsync files/s ({} entries)", src->entries);
    rate.unit = "files/s";
    rate.higher_is_better = true;
    rate.value = seconds[0] > 0 ? src->entries / seconds[0] : 0;
    out.push_back(rate);
    return out;
  };
  return {step};
}

}  // namespace dfs::bench
