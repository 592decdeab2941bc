// The pluggable authentication step of the connection handshake. The security issue
// adds an HMAC challenge-response implementation; until then "none" accepts any peer
// and records the entity name it claims.
#pragma once

#include <memory>
#include <string>

#include "common/proto/rpc.pb.h"
#include "common/status/status.h"

namespace dfs::rpc {

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  virtual std::string method() const = 0;
  // Client side: the payload to put in Hello for `entity`.
  virtual Result<std::string> client_payload(const std::string& entity) = 0;
  // Server side: accepts or rejects a Hello; returns the payload for HelloReply.
  // Errors: kAuthFailed.
  virtual Result<std::string> verify(const proto::Hello& hello) = 0;
};

std::shared_ptr<Authenticator> make_none_authenticator();

}  // namespace dfs::rpc
