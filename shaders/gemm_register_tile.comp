#version 450
#extension GL_EXT_control_flow_attributes : require
// gemm.reg4x4 / gemm.reg8x4 (seed 000's mat_mul_opt1 / mat_mul_opt2): each
// invocation computes a ROWS x 4 block of C in registers with mat4 * vec4
// arithmetic and no shared memory. Matrices are read as vec4, so N and K must
// be multiples of 4; rows past M (the last block) are bounds-checked.
layout(constant_id = 0) const uint WG_X = 8;
layout(constant_id = 1) const uint WG_Y = 8;
layout(local_size_x_id = 0, local_size_y_id = 1) in;

layout(std430, binding = 0) readonly buffer BufA { vec4 A[]; };   // M x K/4
layout(std430, binding = 1) readonly buffer BufB { vec4 B[]; };   // K x N/4
layout(std430, binding = 2) writeonly buffer BufC { vec4 C[]; };  // M x N/4
layout(push_constant) uniform Size { uint M; uint N; uint K; };

#ifndef ROWS
#define ROWS 4
#endif

void main() {
  const uint colBlock = gl_GlobalInvocationID.x;  // 4 columns
  const uint rowBlock = gl_GlobalInvocationID.y;  // ROWS rows
  const uint K4 = K / 4, N4 = N / 4;
  if (colBlock >= N4 || rowBlock * ROWS >= M) return;
  const uint row0 = rowBlock * ROWS;

  // Rows past M (only in the last block) read row M-1 again and are not
  // stored: the inner loop stays branch-free, so the bounds check costs nothing.
  uint aRow[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) aRow[r] = min(row0 + r, M - 1) * K4;

  vec4 acc[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] = vec4(0.0);

  for (uint kb = 0; kb < K4; ++kb) {
    // Columns of b are 4 consecutive rows of B, so b * a = sum_j a[j] * B[k+j].
    const mat4 b = mat4(B[(kb * 4 + 0) * N4 + colBlock], B[(kb * 4 + 1) * N4 + colBlock],
                        B[(kb * 4 + 2) * N4 + colBlock], B[(kb * 4 + 3) * N4 + colBlock]);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] += b * A[aRow[r] + kb];
  }
  [[unroll]] for (uint r = 0; r < ROWS; ++r)
    if (row0 + r < M) C[(row0 + r) * N4 + colBlock] = acc[r];
}
