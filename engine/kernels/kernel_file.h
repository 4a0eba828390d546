#pragma once
// Kernels brought as files: one GLSL compute shader whose leading comment
// block is a manifest (id, workload, tunables, grid, FLOP and byte counts,
// constraints, ...). The format is described in docs/KERNEL_FILES.md; the
// expressions in it are muParser expressions of M, N, K, WG_X, WG_Y, WG_Z and
// the tunables.
#include <string>
#include <vector>

#include "engine/kernels/registry.h"

namespace ks {

// Parses a kernel file into a registry record (not yet registered). `path`
// names the file in messages. Errors name the file, the line and the field:
// "my_gemm.comp:7: grid: Unexpected token "TILES" found at position 8".
Result<KernelInfo> parseKernelFile(const std::string& text, const std::string& path);
Result<KernelInfo> loadKernelFile(const std::string& path);

// Reads, parses and registers (replacing an earlier version of the same id).
Result<const KernelInfo*> registerKernelFile(const std::string& path);

// Registers every *.comp file of a folder; a file that fails does not stop the others.
struct KernelDirLoad {
  std::vector<const KernelInfo*> kernels;
  std::vector<std::string> errors;
};
KernelDirLoad registerKernelDir(const std::string& dir);

// Where users keep their kernels: $XDG_CONFIG_HOME/kernelscope/kernels
// (~/.config/kernelscope/kernels).
std::string defaultKernelDir();

// Complete, working, commented kernel files to start from, one per workload.
const std::vector<std::string>& kernelTemplateWorkloads();  // gemm, gemv, dot, custom
Result<std::string> kernelTemplate(const std::string& workload);

// The kernel files shipped as examples (file name, text): file versions of
// built-in kernels and the templates' sources.
const std::vector<std::pair<std::string, std::string>>& exampleKernelFiles();

// A line of the user's file and what is wrong there, read from an error of
// parseKernelFile or of the GLSL compiler; line 0 where none is known.
struct SourceDiagnostic {
  int line = 0;
  std::string message;
  bool operator==(const SourceDiagnostic&) const = default;
};
std::vector<SourceDiagnostic> sourceDiagnostics(const std::string& error_message);

}  // namespace ks
