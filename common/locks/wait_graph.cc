#include "common/locks/wait_graph.h"

#include <vector>

namespace dfs::locks {

bool reaches(const std::set<Owner>& from, const Owner& target, const WaitsFor& waits_for) {
  std::set<Owner> seen(from.begin(), from.end());
  std::vector<Owner> todo(from.begin(), from.end());
  while (!todo.empty()) {
    Owner o = todo.back();
    todo.pop_back();
    if (o == target) return true;
    for (const Owner& next : waits_for(o)) {
      if (seen.insert(next).second) todo.push_back(next);
    }
  }
  return false;
}

}  // namespace dfs::locks
