/* bench_nccl_alltoall: the NCCL all-to-all bound for h5gsort's exchange (issue 8).
 *   mpirun -np P bench_nccl_alltoall BYTES_PER_RANK [REPEATS=7]
 * One rank per GPU (device = local rank). Every rank holds BYTES_PER_RANK bytes in device memory
 * and sends a block of them to every rank, itself included: BYTES_PER_RANK / P rounded down to a
 * multiple of 256 bytes, the remainder in the last block, so the total is exact. One exchange is
 * ncclGroupStart + ncclSend/ncclRecv per peer + ncclGroupEnd on one stream, as nccl-tests'
 * alltoall does. 2 warm-ups, then REPEATS timed runs; each run's time is the slowest rank's (CUDA
 * events around the group, after an MPI_Barrier); the median is printed on one line:
 *   nccl_alltoall ranks P bytes_per_rank B seconds S peer_bytes_per_rank Q peer_GBps R
 * peer_bytes_per_rank: bytes rank 0 sends to the other ranks (h5gsort copies its own block
 * locally, so this is what its exchange moves); peer_GBps = Q / S / 1e9. The data that arrived is
 * checked once after the timed runs (a few positions of every block); exit 1 on a mismatch. */
#define OMPI_SKIP_MPICXX 1 /* the C API only: no C++ bindings to compile or link */
#include <mpi.h>
#include <nccl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "tests/support/check_cuda.h"
#include "tests/support/check_mpi.h"

#define MUST_NCCL(call)                                                                           \
  do {                                                                                            \
    ncclResult_t r_ = (call);                                                                     \
    if (r_ != ncclSuccess) {                                                                      \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_));      \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

/* The byte a rank `source` keeps at offset `offset` of its send buffer. */
__host__ __device__ static uint8_t pattern(int source, uint64_t offset) {
  uint64_t x = (offset + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)source + 1) * 0xC2B2AE3D27D4EB4Full;
  return (uint8_t)(x >> 56);
}

__global__ static void fill_pattern(uint8_t *buf, uint64_t bytes, int source) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < bytes;
       i += (uint64_t)gridDim.x * blockDim.x)
    buf[i] = pattern(source, i);
}

/* Offset and length of the block that goes to rank `dest`. */
static uint64_t block_offset(uint64_t block, int dest) { return block * (uint64_t)dest; }
static uint64_t block_bytes(uint64_t total, uint64_t block, int dest, int ranks) {
  return dest == ranks - 1 ? total - block * (uint64_t)(ranks - 1) : block;
}

static void exchange(const uint8_t *send, uint8_t *recv, uint64_t total, uint64_t block, int rank,
                     int ranks, ncclComm_t comm, cudaStream_t stream) {
  MUST_NCCL(ncclGroupStart());
  for (int peer = 0; peer < ranks; peer++) {
    /* what goes to `peer` is our block `peer`; what comes from `peer` is its block `rank` */
    MUST_NCCL(ncclSend(send + block_offset(block, peer), block_bytes(total, block, peer, ranks),
                       ncclUint8, peer, comm, stream));
    MUST_NCCL(ncclRecv(recv + block_offset(block, peer), block_bytes(total, block, rank, ranks),
                       ncclUint8, peer, comm, stream));
  }
  MUST_NCCL(ncclGroupEnd());
}

/* Checks the first, last and a few spread positions of the block received from every rank:
 * the block from `source` holds source's bytes [block * rank, ...). Returns the mismatches. */
static int check_received(const uint8_t *recv, uint64_t total, uint64_t block, int rank,
                          int ranks) {
  const uint64_t len = block_bytes(total, block, rank, ranks), positions = 17;
  int bad = 0;
  if (len == 0) return 0;
  for (int source = 0; source < ranks; source++) {
    for (uint64_t k = 0; k < positions; k++) {
      uint64_t j = k * (len - 1) / (positions - 1); /* 0 ... len - 1 */
      uint8_t got;
      MUST_CUDA(cudaMemcpy(&got, recv + block_offset(block, source) + j, 1, cudaMemcpyDeviceToHost));
      uint8_t want = pattern(source, block_offset(block, rank) + j);
      if (got != want) {
        if (bad < 5)
          fprintf(stderr, "rank %d: byte %llu of the block from rank %d is %u, expected %u\n", rank,
                  (unsigned long long)j, source, got, want);
        bad++;
      }
    }
  }
  return bad;
}

static int parse_u64(const char *text, uint64_t *value) {
  char *end = NULL;
  if (text[0] < '0' || text[0] > '9') return -1;
  *value = strtoull(text, &end, 10);
  return *end == '\0' ? 0 : -1;
}

int main(int argc, char **argv) {
  MUST_MPI(MPI_Init(&argc, &argv));
  int rank, ranks, local_rank, devices;
  MPI_Comm node;
  MUST_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MUST_MPI(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  uint64_t total = 0, repeats = 7;
  if (argc < 2 || argc > 3 || parse_u64(argv[1], &total) != 0 ||
      (argc == 3 && (parse_u64(argv[2], &repeats) != 0 || repeats == 0))) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np P bench_nccl_alltoall BYTES_PER_RANK [REPEATS=7]\n");
    MPI_Finalize();
    return 2;
  }
  if (ranks == 1) { /* nothing crosses a link */
    printf("nccl_alltoall ranks 1 bytes_per_rank %llu seconds 0 peer_bytes_per_rank 0 peer_GBps 0\n",
           (unsigned long long)total);
    MPI_Finalize();
    return 0;
  }
  MUST_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  MUST_MPI(MPI_Comm_rank(node, &local_rank));
  MUST_CUDA(cudaGetDeviceCount(&devices));
  if (local_rank >= devices) {
    fprintf(stderr, "rank %d: local rank %d but only %d GPU(s): run one rank per GPU\n", rank,
            local_rank, devices);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MUST_CUDA(cudaSetDevice(local_rank));

  const uint64_t block = total / (uint64_t)ranks / 256 * 256;
  uint8_t *send, *recv;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  MUST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  MUST_CUDA(cudaEventCreate(&start));
  MUST_CUDA(cudaEventCreate(&stop));
  MUST_CUDA(cudaMalloc((void **)&send, total ? total : 1));
  MUST_CUDA(cudaMalloc((void **)&recv, total ? total : 1));
  if (total) {
    fill_pattern<<<1024, 256, 0, stream>>>(send, total, rank);
    MUST_CUDA(cudaGetLastError());
    MUST_CUDA(cudaMemsetAsync(recv, 0, total, stream)); /* a run that moves nothing fails the check */
  }
  MUST_CUDA(cudaStreamSynchronize(stream));

  ncclUniqueId id;
  ncclComm_t comm;
  if (rank == 0) MUST_NCCL(ncclGetUniqueId(&id));
  MUST_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
  MUST_NCCL(ncclCommInitRank(&comm, ranks, id, rank));

  for (int w = 0; w < 2; w++) exchange(send, recv, total, block, rank, ranks, comm, stream);
  MUST_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> seconds;
  for (uint64_t r = 0; r < repeats; r++) {
    float ms = 0;
    double mine, slowest;
    MUST_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MUST_CUDA(cudaEventRecord(start, stream));
    exchange(send, recv, total, block, rank, ranks, comm, stream);
    MUST_CUDA(cudaEventRecord(stop, stream));
    MUST_CUDA(cudaEventSynchronize(stop));
    MUST_CUDA(cudaEventElapsedTime(&ms, start, stop));
    mine = ms / 1e3;
    MUST_MPI(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    seconds.push_back(slowest);
  }
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  const double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;

  int bad = check_received(recv, total, block, rank, ranks), bad_total = 0;
  MUST_MPI(MPI_Allreduce(&bad, &bad_total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  const uint64_t peer_bytes = total - block_bytes(total, block, 0, ranks);
  if (rank == 0) {
    if (bad_total)
      fprintf(stderr, "nccl_alltoall: %d received byte(s) differ from what was sent\n", bad_total);
    printf("nccl_alltoall ranks %d bytes_per_rank %llu seconds %.6f peer_bytes_per_rank %llu "
           "peer_GBps %.1f\n",
           ranks, (unsigned long long)total, median, (unsigned long long)peer_bytes,
           median > 0 ? peer_bytes / median / 1e9 : 0.0);
  }
  MUST_NCCL(ncclCommDestroy(comm));
  MUST_CUDA(cudaFree(send));
  MUST_CUDA(cudaFree(recv));
  MUST_CUDA(cudaEventDestroy(start));
  MUST_CUDA(cudaEventDestroy(stop));
  MUST_CUDA(cudaStreamDestroy(stream));
  MPI_Comm_free(&node);
  MPI_Finalize();
  return bad_total ? 1 : 0;
}
