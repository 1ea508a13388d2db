#include "coordinator/dashboard/login_gate.h"

#include <openssl/crypto.h>

#include "core/common/fresh_token.h"

namespace rung::dashboard {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

StatusOr<LoginGate> LoginGate::Fresh() {
  RUNG_ASSIGN_OR_RETURN(std::string token, FreshHexToken());
  return LoginGate(std::move(token));
}

bool LoginGate::Matches(std::string_view candidate) const {
  return !token_.empty() && candidate.size() == token_.size() &&
         CRYPTO_memcmp(candidate.data(), token_.data(), token_.size()) == 0;
}

bool LoginGate::Admits(std::string_view cookie_header, std::string_view authorization_header) const {
  if (Matches(CookieValue(cookie_header, kLoginCookie))) return true;
  constexpr std::string_view kBearer = "Bearer ";
  authorization_header = Trim(authorization_header);
  return authorization_header.substr(0, kBearer.size()) == kBearer &&
         Matches(Trim(authorization_header.substr(kBearer.size())));
}

std::string LoginGate::SetCookie(bool secure) const {
  return std::string(kLoginCookie) + "=" + token_ + "; Path=/; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "");
}

std::string CookieValue(std::string_view cookie_header, std::string_view name) {
  while (!cookie_header.empty()) {
    const size_t end = cookie_header.find(';');
    std::string_view pair = Trim(cookie_header.substr(0, end));
    cookie_header = end == std::string_view::npos ? std::string_view() : cookie_header.substr(end + 1);
    const size_t equals = pair.find('=');
    if (equals == std::string_view::npos) continue;
    if (Trim(pair.substr(0, equals)) == name) return std::string(Trim(pair.substr(equals + 1)));
  }
  return "";
}

}  // namespace rung::dashboard
