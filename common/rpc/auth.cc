#include "common/rpc/auth.h"

namespace dfs::rpc {
namespace {

class NoneAuthenticator final : public Authenticator {
 public:
  std::string method() const override { return "none"; }
  Result<std::string> client_payload(const std::string&) override { return std::string(); }
  Result<std::string> verify(const proto::Hello& hello) override {
    if (hello.auth_method() != "none") {
      return make_error(ErrorCode::kAuthFailed,
                        "peer offers auth method '" + hello.auth_method() + "', cluster uses none");
    }
    if (hello.entity().empty()) return make_error(ErrorCode::kAuthFailed, "empty entity name");
    return std::string();
  }
};

}  // namespace

std::shared_ptr<Authenticator> make_none_authenticator() {
  return std::make_shared<NoneAuthenticator>();
}

}  // namespace dfs::rpc
