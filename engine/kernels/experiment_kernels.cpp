// Experiments that are not kernels but are measured as points (DESIGN.md):
// the transfer family (seed 002: what moving the data costs next to the
// kernel) and the CPU/GPU interleave (seed 000, experiment 5: the two taking
// turns on one buffer in each memory placement). The runner times them
// (engine/bench/experiments.cpp); these records give their sizes, counts and
// device requirements.
#include <algorithm>

#include "engine/kernels/experiments.h"
#include "engine/kernels/registry.h"

namespace ks {

namespace {

struct TransferRecord {
  const char* id;
  TransferPath path;
  const char* title;
  const char* description;
};

const TransferRecord kTransfers[] = {
    {"transfer.upload_staging", TransferPath::UploadStaging, "host -> device through a staging buffer",
     "vkCmdCopyBuffer from a host-visible coherent staging buffer into device-local memory; GPU timestamps "
     "around the copy (the memcpy into the staging buffer is not in it)"},
    {"transfer.download_staging", TransferPath::DownloadStaging, "device -> host through a staging buffer",
     "vkCmdCopyBuffer from device-local memory into a host-cached staging buffer; GPU timestamps around the copy"},
    {"transfer.upload_mapped", TransferPath::UploadMapped, "host writes device-local memory directly",
     "memcpy into mapped device-local host-visible memory (resizable BAR); host clock around the memcpy and the "
     "flush"},
    {"transfer.download_mapped", TransferPath::DownloadMapped, "host reads device-local memory directly",
     "memcpy out of mapped device-local host-visible memory (resizable BAR); host clock around the invalidate and "
     "the memcpy"},
    {"transfer.gpu_reads_host", TransferPath::GpuReadsHost, "the GPU reads host memory directly",
     "a copy shader reads a host-visible coherent buffer and writes device-local memory; GPU timestamps around "
     "the dispatch"},
};

struct InterleaveRecord {
  const char* id;
  vk::Placement placement;
  const char* description;
};

const InterleaveRecord kInterleaves[] = {
    {"interleave.device_local", vk::Placement::DeviceLocal,
     "the buffer in device-local memory; the CPU's turn goes through a host-cached staging buffer (a copy each "
     "way in the GPU's submission), as a discrete GPU needs"},
    {"interleave.host_coherent", vk::Placement::HostVisible,
     "the buffer in host-visible coherent memory, mapped: the GPU reads and writes it over the bus"},
    {"interleave.host_cached", vk::Placement::HostCached,
     "the buffer in host-visible cached memory, mapped (flushed and invalidated where not coherent)"},
    {"interleave.device_local_host_visible", vk::Placement::DeviceLocalHostVisible,
     "the buffer in device-local host-visible memory (resizable BAR), mapped: the CPU reads and writes it over "
     "the bus"},
};

std::optional<std::string> multipleOf(uint64_t n, uint64_t of, const char* unit) {
  if (n % of == 0) return std::nullopt;
  return "N = " + std::to_string(n) + " " + unit + " is not a multiple of " + std::to_string(of);
}

}  // namespace

std::optional<TransferPath> transferPathOf(const KernelInfo& kernel) {
  for (const auto& r : kTransfers)
    if (kernel.id == r.id) return r.path;
  return std::nullopt;
}

std::optional<vk::Placement> interleavePlacementOf(const KernelInfo& kernel) {
  for (const auto& r : kInterleaves)
    if (kernel.id == r.id) return r.placement;
  return std::nullopt;
}

uint64_t interleaveStep(uint64_t x, bool gpu, uint32_t round) {
  const uint32_t v = uint32_t(x);
  return gpu ? uint32_t(v * 1664525u + 1013904223u) : uint32_t((v ^ (v >> 13)) + round);
}

std::array<uint32_t, 3> linearGroups(uint64_t invocations, const vk::DeviceInfo& device) {
  const uint64_t groups = std::max<uint64_t>(1, (invocations + 255) / 256);
  const uint64_t x = std::min<uint64_t>(groups, std::max<uint32_t>(1, device.max_workgroup_count[0]));
  return {uint32_t(x), uint32_t((groups + x - 1) / x), 1};
}

void registerTransferKernels(std::vector<KernelInfo>& out) {
  for (const auto& r : kTransfers) {
    KernelInfo k;
    k.id = r.id;
    k.family = "transfer";
    k.workload = "transfer";
    k.backend = Backend::Vulkan;
    k.title = r.title;
    k.description = r.description;
    k.origin = "seed 002: the uploads and downloads its timings leave out";
    k.size_rank = 1;
    k.uses_workgroup = false;
    k.default_wg = {1, 1, 1};
    k.constraints = "N bytes, a multiple of 16";
    k.flops = [](const ProblemSize&) { return 0.0; };
    // GB/s of a transfer: the bytes copied per second (each byte crosses once).
    k.bytes = [](const ProblemSize& s, const Params&) { return double(s.n); };
    k.tolerance = [](const ProblemSize&, const Params&) { return 0.0; };
    k.check_size = [](const ProblemSize& s, const Params&) { return multipleOf(s.n, 16, "bytes"); };
    const TransferPath path = r.path;
    if (path == TransferPath::GpuReadsHost) k.shader = "peak_copy.comp";
    k.buffers = [path](const ProblemSize& s, const Params&) {
      std::vector<BufferSpec> b{{"the copied bytes", s.n, BufferRole::Input}};
      if (path != TransferPath::DownloadMapped) b.push_back({"the copy", s.n, BufferRole::Output});
      return b;
    };
    // Only the GPU-read path dispatches a shader; the copies and memcpys have no grid.
    k.steps = [path](const ProblemSize& s, const Params&, const vk::DeviceInfo& d) {
      std::vector<DispatchStep> steps;
      if (path == TransferPath::GpuReadsHost)
        steps.push_back({"peak_copy.comp", "", {}, {}, linearGroups(s.n / 16, d), {uint32_t(s.n / 16)}});
      return steps;
    };
    k.check_device = [path](const Params&, const vk::DeviceInfo& d) -> std::optional<std::string> {
      if ((path == TransferPath::UploadMapped || path == TransferPath::DownloadMapped) &&
          !vk::hasExactPlacement(d, vk::Placement::DeviceLocalHostVisible))
        return std::string("no device-local host-visible memory (resizable BAR)");
      return std::nullopt;
    };
    out.push_back(std::move(k));
  }
}

void registerInterleaveKernels(std::vector<KernelInfo>& out) {
  for (const auto& r : kInterleaves) {
    KernelInfo k;
    k.id = r.id;
    k.family = "interleave";
    k.workload = "interleave";
    k.backend = Backend::Vulkan;
    k.title = "CPU and GPU take turns: " + vk::placementName(r.placement);
    k.description = std::string(r.description) +
                    ". A round: the GPU updates every element, then the CPU reads and updates every element; one "
                    "sample is one round (host clock), split into GPU (timestamps), CPU and synchronisation.";
    k.origin = "seed 000, experiment 5: interleaving CPU and GPU computations on shared memory";
    k.size_rank = 1;
    k.uses_workgroup = false;
    k.default_wg = {1, 1, 1};
    k.constraints = "N 32-bit elements";
    k.flops = [](const ProblemSize&) { return 0.0; };
    // Effective bandwidth of a round: the GPU reads and writes the buffer, then the CPU does.
    k.bytes = [](const ProblemSize& s, const Params&) { return 16.0 * double(s.n); };
    k.tolerance = [](const ProblemSize&, const Params&) { return 0.0; };
    k.buffers = [](const ProblemSize& s, const Params&) {
      return std::vector<BufferSpec>{{"the shared buffer", 4 * s.n, BufferRole::Output}};
    };
    k.shader = "interleave_step.comp";
    k.steps = [](const ProblemSize& s, const Params&, const vk::DeviceInfo& d) {
      return std::vector<DispatchStep>{{"interleave_step.comp", "", {}, {}, linearGroups(s.n, d), {uint32_t(s.n)}}};
    };
    k.check_size = [](const ProblemSize& s, const Params&) -> std::optional<std::string> {
      if (s.n > 0xFFFFFFFFull) return std::string("N is over 2^32 - 1 elements");
      return std::nullopt;
    };
    const vk::Placement placement = r.placement;
    k.check_device = [placement](const Params&, const vk::DeviceInfo& d) -> std::optional<std::string> {
      if (!vk::hasExactPlacement(d, placement))
        return placement == vk::Placement::DeviceLocalHostVisible
                   ? std::string("no device-local host-visible memory (resizable BAR)")
                   : "no " + vk::placementName(placement) + " memory type on this device";
      return std::nullopt;
    };
    out.push_back(std::move(k));
  }
}

}  // namespace ks
