// coordinator/dashboard/login_gate.h
//
// Who may see the dashboard: whoever holds its login token, made fresh at every start and printed
// in the URL (`http://127.0.0.1:8050/?token=...`, as Jupyter does). Opening that URL sets the token
// as an HttpOnly, SameSite=Strict cookie; every later request must carry the cookie (or, for
// scripts, `Authorization: Bearer <token>`). Comparisons are constant-time.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(LoginGate gate, LoginGate::Fresh());
//   if (!gate.Admits(request_cookie_header, request_authorization_header)) answer 401;
//
// Thread safety: const methods are safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace rung::dashboard {

inline constexpr char kLoginCookie[] = "rung_dashboard";

class LoginGate {
 public:
  // A gate with a fresh random token. Errors: INTERNAL when there is no randomness.
  static StatusOr<LoginGate> Fresh();
  // A gate with this token (tests).
  explicit LoginGate(std::string token) : token_(std::move(token)) {}

  const std::string& token() const { return token_; }

  // True when `candidate` is the token.
  bool Matches(std::string_view candidate) const;
  // True when the Cookie header carries the login cookie with the token, or the Authorization
  // header is "Bearer <token>". Either may be empty.
  bool Admits(std::string_view cookie_header, std::string_view authorization_header) const;
  // The Set-Cookie value that logs a browser in (Secure when served over TLS).
  std::string SetCookie(bool secure) const;

 private:
  std::string token_;
};

// The value of cookie `name` in a Cookie header ("a=1; b=2"), or "" when absent.
std::string CookieValue(std::string_view cookie_header, std::string_view name);

}  // namespace rung::dashboard
