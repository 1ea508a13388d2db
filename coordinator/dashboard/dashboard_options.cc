#include "coordinator/dashboard/dashboard_options.h"

#include "core/common/network_address.h"

namespace rung::dashboard {

Status CheckListenAddress(const DashboardOptions& options) {
  if (IsUnixAddress(options.listen) || !SplitHostPort(options.listen).has_value()) {
    return Status::InvalidArgument("--listen '" + options.listen +
                                   "' is not HOST:PORT (e.g. 127.0.0.1:8050, or [::1]:8050)");
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together: give both or neither");
  }
  if (options.tls_cert_file.empty() && !IsLoopbackAddress(options.listen)) {
    return Status::InvalidArgument("--listen " + options.listen +
                                   " is not a loopback address: off loopback the dashboard serves only HTTPS; "
                                   "give --tls-cert FILE --tls-key FILE, or listen on 127.0.0.1");
  }
  return Status::Ok();
}

}  // namespace rung::dashboard
