#include "core/train/data_parallel.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <functional>

#ifdef RUNG_HAVE_C10D
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef RUNG_HAVE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#endif

#include "core/train/token_cross_entropy.h"

namespace rung {

bool DataParallelAvailable([[maybe_unused]] const std::string& device_type) {
#ifdef RUNG_HAVE_C10D
  if (device_type == "cpu") return true;
#ifdef RUNG_HAVE_C10D_NCCL
  if (device_type == "cuda") return true;
#endif
#endif
  return false;
}

#ifdef RUNG_HAVE_C10D

// The process group's two collectives, bound to the concrete Gloo or NCCL group (LibTorch 1.x
// derives them from c10d::ProcessGroup, 2.x from c10d::Backend).
struct DataParallelGroup::Impl {
  using Collective = std::function<c10::intrusive_ptr<c10d::Work>(std::vector<at::Tensor>&)>;
  c10::intrusive_ptr<c10d::Store> store;
  Collective allreduce, broadcast;

  template <typename Group>
  void Bind(c10::intrusive_ptr<Group> group) {
    allreduce = [group](std::vector<at::Tensor>& tensors) { return group->allreduce(tensors); };
    broadcast = [group](std::vector<at::Tensor>& tensors) { return group->broadcast(tensors); };
  }
};

namespace {

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// Gloo's transport address: loopback for a rendezvous on loopback (all ranks on one host), else
// GLOO_SOCKET_IFNAME's interface when set (as torch.distributed does), else this host's name.
std::shared_ptr<::gloo::transport::Device> GlooDevice(const std::string& rendezvous_host) {
  if (IsLoopback(rendezvous_host)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface != nullptr && *interface != '\0') {
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

template <typename Collective>
Status RunCollective(const char* name, Collective collective) {
  try {
    c10::intrusive_ptr<c10d::Work> work = collective();
    work->wait();
  } catch (const std::exception& error) {
    return Status::Unavailable(std::string(name) + " across the data-parallel group failed: " + error.what());
  }
  return Status::Ok();
}

// Runs `collective` on each tensor in turn, as a one-tensor list.
template <typename Collective>
Status EachTensor(const char* name, const std::vector<torch::Tensor>& tensors, Collective collective) {
  for (const torch::Tensor& tensor : tensors) {
    std::vector<torch::Tensor> one = {tensor};
    RUNG_RETURN_IF_ERROR(RunCollective(name, [&] { return collective(one); }));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<DataParallelGroup>> DataParallelGroup::Connect(const DataParallelOptions& options,
                                                                        const torch::Device& device) {
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return Status::InvalidArgument("rank " + std::to_string(options.rank) + " is outside a world of size " +
                                   std::to_string(options.world_size));
  }
  if (options.world_size == 1) return std::unique_ptr<DataParallelGroup>(new DataParallelGroup(0, 1, nullptr));
  const size_t colon = options.rendezvous.rfind(':');
  int port = 0;
  if (colon != std::string::npos && colon > 0) port = std::atoi(options.rendezvous.c_str() + colon + 1);
  if (port <= 0 || port > 65535) {
    return Status::InvalidArgument("a world of size " + std::to_string(options.world_size) +
                                   " needs a rendezvous address HOST:PORT, got '" + options.rendezvous + "'");
  }
  std::string host = options.rendezvous.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (device.is_cuda() && !DataParallelAvailable("cuda")) {
    return Status::FailedPrecondition("this rung-train's LibTorch has no NCCL: data-parallel training on CUDA "
                                      "(resources.world_size > 1) needs a LibTorch built with NCCL");
  }
  auto impl = std::make_unique<Impl>();
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(port);
    store_options.isServer = options.rank == 0;
    store_options.numWorkers = static_cast<size_t>(options.world_size);
    store_options.waitWorkers = true;
    store_options.timeout = options.timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(host, store_options);
#ifdef RUNG_HAVE_C10D_NCCL
    if (device.is_cuda()) {
      auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
      nccl_options->timeout = options.timeout;
      impl->Bind(c10::make_intrusive<c10d::ProcessGroupNCCL>(impl->store, options.rank, options.world_size,
                                                             nccl_options));
    }
#endif
    if (!impl->allreduce) {
      auto gloo_options = c10d::ProcessGroupGloo::Options::create(options.timeout);
      gloo_options->devices.push_back(GlooDevice(host));
      gloo_options->threads = 2;
      impl->Bind(c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, options.rank, options.world_size,
                                                             gloo_options));
    }
  } catch (const std::exception& error) {
    return Status::Unavailable("joining the data-parallel group at " + options.rendezvous + " as rank " +
                               std::to_string(options.rank) + " of " + std::to_string(options.world_size) +
                               " failed: " + error.what());
  }
  return std::unique_ptr<DataParallelGroup>(
      new DataParallelGroup(options.rank, options.world_size, std::move(impl)));
}

Status DataParallelGroup::AllReduceSum(const std::vector<torch::Tensor>& tensors) {
  if (!impl_) return Status::Ok();
  return EachTensor("all-reduce", tensors, [this](std::vector<torch::Tensor>& one) { return impl_->allreduce(one); });
}

Status DataParallelGroup::Broadcast(const std::vector<torch::Tensor>& tensors) {
  if (!impl_) return Status::Ok();
  return EachTensor("broadcast", tensors, [this](std::vector<torch::Tensor>& one) { return impl_->broadcast(one); });
}

#else  // !RUNG_HAVE_C10D

struct DataParallelGroup::Impl {};

StatusOr<std::unique_ptr<DataParallelGroup>> DataParallelGroup::Connect(const DataParallelOptions& options,
                                                                        [[maybe_unused]] const torch::Device& device) {
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return Status::InvalidArgument("rank " + std::to_string(options.rank) + " is outside a world of size " +
                                   std::to_string(options.world_size));
  }
  if (options.world_size > 1) {
    return Status::FailedPrecondition(
        "this rung-train was built without torch.distributed (c10d): resources.world_size > 1 needs a LibTorch "
        "with c10d and its Gloo headers (libgloo-dev) at build time");
  }
  return std::unique_ptr<DataParallelGroup>(new DataParallelGroup(0, 1, nullptr));
}

Status DataParallelGroup::AllReduceSum(const std::vector<torch::Tensor>&) { return Status::Ok(); }
Status DataParallelGroup::Broadcast(const std::vector<torch::Tensor>&) { return Status::Ok(); }

#endif  // RUNG_HAVE_C10D

DataParallelGroup::DataParallelGroup(int rank, int world_size, std::unique_ptr<Impl> impl)
    : rank_(rank), world_size_(world_size), impl_(std::move(impl)) {}

DataParallelGroup::~DataParallelGroup() = default;

TensorBatch ShardOf(const TensorBatch& batch, int rank, int world_size) {
  const int64_t rows = batch.inputs.size(0) / world_size;
  auto rows_of = [&](const torch::Tensor& tensor) {
    return tensor.defined() ? tensor.narrow(0, rank * rows, rows) : tensor;
  };
  return {rows_of(batch.inputs), rows_of(batch.targets), rows_of(batch.mask), rows_of(batch.doc_start)};
}

double CountedTargets(const TensorBatch& batch) {
  return batch.mask.defined() ? std::max(1.0, batch.mask.sum().item<double>())
                              : static_cast<double>(batch.targets.numel());
}

torch::Tensor ShardLoss(const torch::Tensor& logits, const TensorBatch& shard, double global_count) {
  if (!shard.mask.defined()) {
    const int64_t vocab = logits.size(-1);
    return TokenCrossEntropy(logits.reshape({-1, vocab}), shard.targets.reshape({-1})).sum() / global_count;
  }
  return (TokenLosses(logits, shard.targets) * shard.mask).sum() / global_count;
}

StatusOr<StepAgreement> AgreeOnStep(DataParallelGroup& group, std::vector<torch::Tensor> gradients,
                                    double loss_share, bool stop_requested, const torch::Device& device) {
  torch::Tensor control =
      torch::tensor({loss_share, stop_requested ? 1.0 : 0.0}, torch::TensorOptions(torch::kDouble)).to(device);
  gradients.push_back(control);
  RUNG_RETURN_IF_ERROR(group.AllReduceSum(gradients));
  control = control.to(torch::kCPU);
  StepAgreement agreed;
  agreed.loss = control[0].item<double>();
  agreed.stop = control[1].item<double>() > 0;
  return agreed;
}

Status BroadcastState(DataParallelGroup& group, std::vector<torch::Tensor> state, std::vector<int64_t>& counters,
                      const torch::Device& device) {
  state.push_back(torch::tensor(counters, torch::TensorOptions(torch::kLong)).to(device));
  RUNG_RETURN_IF_ERROR(group.Broadcast(state));
  torch::Tensor received = state.back().to(torch::kCPU);
  for (size_t index = 0; index < counters.size(); ++index) {
    counters[index] = received[static_cast<int64_t>(index)].item<int64_t>();
  }
  return Status::Ok();
}

}  // namespace rung
