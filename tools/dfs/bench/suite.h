// The shape every suite of `dfs bench` shares: a list of steps, each run on every target
// in turn (the baseline among them, interleaved), each returning the samples it measured.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tools/dfs/bench/report.h"

namespace dfs::bench {

struct Target {
  std::string label;  // how tables name it
  std::string dir;    // where it writes: a scratch directory the suite may fill and empty
  bool baseline = false;
};

struct BenchOptions {
  bool quick = false;
  int rounds = 1;
  double tree_scale = 0.25;
  std::string tree_generator;  // tools/bench/gen_tree or another with its options
  std::string scratch;         // local scratch for the source tree and its tar
};

struct Step {
  std::string suite;
  std::string name;            // for the progress line
  double estimated_s = 1;      // per target, for the ETA
  std::function<std::vector<Sample>(const Target&)> run;
};

std::vector<Step> fio_steps(const BenchOptions& options);
std::vector<Step> db_steps(const BenchOptions& options);
std::vector<Step> meta_steps(const BenchOptions& options);
// Generates the source tree once (into options.scratch) before its steps run; an error
// there is a failed step on every target, not a crash.
std::vector<Step> tree_steps(const BenchOptions& options);

// A figure of `suite` measured on `target`.
Sample measured_sample(const std::string& suite, const std::string& figure, const std::string& unit,
                       bool higher_is_better, const Target& target, double value);

// A sample of `step` on `target` that failed, with why.
Sample failed_sample(const Step& step, const std::string& figure, const std::string& unit,
                     bool higher_is_better, const Target& target, const std::string& why);

// The SVG plots of the fio samples: throughput against block size, one file per rw mode
// and job count, one line per target. Returns (file name, document) pairs.
std::vector<std::pair<std::string, std::string>> fio_plots(const std::vector<Sample>& samples);

}  // namespace dfs::bench
