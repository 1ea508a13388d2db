#include "coordinator/client/trial_listing.h"

namespace rung::client {

grpc::Status ListAllTrials(CoordinatorConnection& connection, rung::v1::ListTrialsRequest request,
                           std::vector<rung::v1::Trial>* trials) {
  do {
    rung::v1::ListTrialsResponse response;
    grpc::Status status = connection.user().ListTrials(connection.Context().get(), request, &response);
    if (!status.ok()) return status;
    trials->insert(trials->end(), response.trials().begin(), response.trials().end());
    request.set_page_token(response.next_page_token());
  } while (!request.page_token().empty());
  return grpc::Status::OK;
}

}  // namespace rung::client
