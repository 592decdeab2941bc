// RequestNames: what a client request names, for the rights checks that run before it
// is served (docs/capabilities.md, "Directory rights" and "File rights"): the inodes it
// names, the entries it names (an unlink or rename acts on the inode a name holds), and
// the inode it changes without an open of it. The body is read once, when first asked,
// and only for the methods that name anything: an inode number in place (the body may
// carry an inline write's data), names by a parse. A malformed body names nothing
// (dispatch refuses it).
//
// Holds a reference to the body: ask everything before the body is moved on. One per
// request, on the MDS's I/O thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dfs::mds {

class RequestNames {
 public:
  RequestNames(uint32_t method, const std::string& body) : method_(method), body_(body) {}
  RequestNames(uint32_t method, std::string&& body) = delete;  // would outlive it
  RequestNames(const RequestNames&) = delete;
  RequestNames& operator=(const RequestNames&) = delete;

  uint32_t method() const { return method_; }
  // The inodes the request names (a link's inode first, then its new parent).
  const std::vector<uint64_t>& inos() {
    parse();
    return inos_;
  }
  // The entries (directory, name) whose inode the request acts on.
  const std::vector<std::pair<uint64_t, std::string>>& entries() {
    parse();
    return entries_;
  }
  // The inodes the request changes by number: changed_ino(), and the directories it
  // adds a name to or removes one from. With the inodes of entries() (which the caller
  // resolves), what the mounts that share an inode must give up first
  // (docs/capabilities.md, "Read shares").
  std::vector<uint64_t> changed_inos();

 private:
  void parse();
  // The inode a setattr, xattr change, link or data push changes without an open of
  // it; 0 for every other request.
  uint64_t changed_ino();

  uint32_t method_;
  const std::string& body_;
  bool parsed_ = false;
  std::vector<uint64_t> inos_;
  std::vector<std::pair<uint64_t, std::string>> entries_;
};

}  // namespace dfs::mds
