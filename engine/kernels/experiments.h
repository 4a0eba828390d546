#pragma once
// The experiments measured as points: transfers and the CPU/GPU interleave.
#include <cstdint>
#include <optional>

#include "engine/kernels/registry.h"

namespace ks {

enum class TransferPath { UploadStaging, DownloadStaging, UploadMapped, DownloadMapped, GpuReadsHost };
std::optional<TransferPath> transferPathOf(const KernelInfo& kernel);
std::optional<vk::Placement> interleavePlacementOf(const KernelInfo& kernel);

// One element's update in an interleave round: the GPU's (interleave_step.comp)
// or the CPU's, exact in 32-bit integers so that the host can replay a run.
uint64_t interleaveStep(uint64_t x, bool gpu, uint32_t round);

// 256-wide workgroups over `invocations` as a 2D grid (x wraps at the device's limit).
std::array<uint32_t, 3> linearGroups(uint64_t invocations, const vk::DeviceInfo& device);

void registerTransferKernels(std::vector<KernelInfo>& out);
void registerInterleaveKernels(std::vector<KernelInfo>& out);

}  // namespace ks
