// The GPU-initiated MoE dispatch's kernels (MoeGpuDispatcher). Compiled to the PTX the module ships, which the driver
// JIT-compiles when it loads it; regenerate after a change with
//   nvcc -ptx -arch=sm_90 -o ../resources/dev/transferengine/moe/moe-kernels.ptx moe-kernels.cu
// The arithmetic is MoeModel.route's and Combine's, operation for operation in float with round-to-nearest and no
// fused multiply-add (__fmul_rn/__fadd_rn), so the GPU's routing and outputs are the CPU reference's bytes.
#include <stdint.h>

__device__ __forceinline__ float bf16_to_float(uint16_t bits) { return __uint_as_float(((uint32_t) bits) << 16); }

__device__ __forceinline__ uint16_t float_to_bf16(float value) {
    if (value != value) {
        return 0x7FC0;
    }
    const uint32_t bits = __float_as_uint(value);
    return (uint16_t) ((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// One block per token: logits = x G (threads over experts), then thread 0 picks the top k (ties to the lower
// expert) and their softmax weights. Dynamic shared memory: experts floats, then experts bytes.
extern "C" __global__ void moe_route(const uint16_t* tokens, const float* gate, int hidden, int experts, int topK,
                                     int* routeExperts, float* routeWeights) {
    extern __shared__ float logits[];
    unsigned char* taken = (unsigned char*) (logits + experts);
    const int t = blockIdx.x;
    const uint16_t* x = tokens + (size_t) t * hidden;
    for (int e = threadIdx.x; e < experts; e += blockDim.x) {
        float acc = 0.0f;
        for (int i = 0; i < hidden; i++) {
            acc = __fadd_rn(acc, __fmul_rn(bf16_to_float(x[i]), gate[(size_t) i * experts + e]));
        }
        logits[e] = acc;
        taken[e] = 0;
    }
    __syncthreads();
    if (threadIdx.x != 0) {
        return;
    }
    int* outExperts = routeExperts + (size_t) t * topK;
    float* outWeights = routeWeights + (size_t) t * topK;
    float sum = 0.0f;
    for (int j = 0; j < topK; j++) {
        int best = -1;
        for (int e = 0; e < experts; e++) {
            if (!taken[e] && (best < 0 || logits[e] > logits[best])) {
                best = e;
            }
        }
        taken[best] = 1;
        outExperts[j] = best;
        const float w = (float) exp((double) __fsub_rn(logits[best], logits[outExperts[0]]));
        outWeights[j] = w;
        sum = __fadd_rn(sum, w);
    }
    for (int j = 0; j < topK; j++) {
        outWeights[j] = __fdiv_rn(outWeights[j], sum);
    }
}

// One block: counts per expert, each expert rank's send-slot header (rows, then rows per local expert) in the send
// region, rows per rank (mapped host memory, for the host proxy), and for each (token, slot) the rank and row its copy
// goes to, in token order within each expert as MoeDispatcher packs them. Dynamic shared memory: tokens * topK +
// 2 * experts ints.
extern "C" __global__ void moe_index(const int* routeExperts, int tokens, int topK, int experts, int expertRanks,
                                     unsigned char* send, long long slotBytes, int* slotRank, int* slotRow,
                                     int* rowsOfRank) {
    extern __shared__ int shared[];
    const int slots = tokens * topK;
    const int perRank = experts / expertRanks;
    int* chosen = shared;
    int* count = shared + slots;
    int* first = count + experts;
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        chosen[s] = routeExperts[s];
    }
    for (int e = threadIdx.x; e < experts; e += blockDim.x) {
        count[e] = 0;
    }
    __syncthreads();
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        atomicAdd(&count[chosen[s]], 1);
    }
    __syncthreads();
    for (int r = threadIdx.x; r < expertRanks; r += blockDim.x) {
        int* header = (int*) (send + r * slotBytes);
        int rows = 0;
        for (int le = 0; le < perRank; le++) {
            const int e = r * perRank + le;
            header[1 + le] = count[e];
            first[e] = rows;
            rows += count[e];
        }
        header[0] = rows;
        rowsOfRank[r] = rows;
    }
    __syncthreads();
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        const int e = chosen[s];
        int before = 0;
        for (int p = 0; p < s; p++) {
            before += chosen[p] == e;
        }
        slotRank[s] = e / perRank;
        slotRow[s] = first[e] + before;
    }
}

// One block per (token, slot): copies the token's row into its rank's send slot.
extern "C" __global__ void moe_pack(const uint16_t* tokens, int hidden, int topK, unsigned char* send,
                                    long long slotBytes, long long headerBytes, const int* slotRank,
                                    const int* slotRow) {
    const int s = blockIdx.x;
    const uint16_t* row = tokens + (size_t) (s / topK) * hidden;
    uint16_t* to = (uint16_t*) (send + slotRank[s] * slotBytes + headerBytes + (long long) slotRow[s] * hidden * 2);
    for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
        to[h] = row[h];
    }
}

// Tells the host proxy that the layer's routing and send slots are ready: a store into a UVM watcher's slot.
extern "C" __global__ void moe_signal(volatile unsigned long long* slot, unsigned long long value) {
    __threadfence_system();
    *slot = value;
    __threadfence_system();
}

// One block per token: out = sum over the token's slots of weight * the expert's output, in slot order, rounded to
// bf16. The expert ranks wrote their outputs into combine, one slot of slotRowBytes per rank, row for row.
extern "C" __global__ void moe_combine(const unsigned char* combine, long long slotRowBytes, int hidden, int topK,
                                       const int* slotRank, const int* slotRow, const float* routeWeights,
                                       uint16_t* out) {
    const int t = blockIdx.x;
    for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
        float sum = 0.0f;
        for (int j = 0; j < topK; j++) {
            const int s = t * topK + j;
            const uint16_t* row =
                    (const uint16_t*) (combine + slotRank[s] * slotRowBytes + (long long) slotRow[s] * hidden * 2);
            sum = __fadd_rn(sum, __fmul_rn(routeWeights[s], bf16_to_float(row[h])));
        }
        out[(size_t) t * hidden + h] = float_to_bf16(sum);
    }
}

// One block of LANES threads per row: an expert rank's matmul, y = bf16((x A) B), A H x R and B R x H floats, for the
// rows it received, each row's expert (its index among the rank's experts) in rowExpert. The order of the sums is
// ExpertWeights.apply's, so the outputs are the CPU's bytes: lane l sums x[i] A[i][r] over i = l, l + LANES, ... in
// order, the lanes' sums are added as a tree, then each output sums over r in order. Dynamic shared memory: LANES *
// width floats.
#define LANES 256
extern "C" __global__ void moe_expert(const uint16_t* in, uint16_t* out, const int* rowExpert, const float* down,
                                      const float* up, int hidden, int width) {
    extern __shared__ float partial[];
    const int row = blockIdx.x;
    const int lane = threadIdx.x;
    const size_t expert = (size_t) rowExpert[row];
    const uint16_t* x = in + (size_t) row * hidden;
    const float* a = down + expert * hidden * width;
    const float* b = up + expert * width * hidden;
    float* mine = partial + lane * width;
    for (int r = 0; r < width; r++) {
        mine[r] = 0.0f;
    }
    for (int i = lane; i < hidden; i += LANES) {
        const float xi = bf16_to_float(x[i]);
        for (int r = 0; r < width; r++) {
            mine[r] = __fadd_rn(mine[r], __fmul_rn(xi, a[(size_t) i * width + r]));
        }
    }
    __syncthreads();
    for (int s = LANES / 2; s > 0; s >>= 1) {
        if (lane < s) {
            for (int r = 0; r < width; r++) {
                mine[r] = __fadd_rn(mine[r], partial[(lane + s) * width + r]);
            }
        }
        __syncthreads();
    }
    uint16_t* y = out + (size_t) row * hidden;
    for (int h = lane; h < hidden; h += LANES) {
        float acc = 0.0f;
        for (int r = 0; r < width; r++) {
            acc = __fadd_rn(acc, __fmul_rn(partial[r], b[(size_t) r * hidden + h]));
        }
        y[h] = float_to_bf16(acc);
    }
}
