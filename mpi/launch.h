#ifndef H5G_MPI_LAUNCH_H
#define H5G_MPI_LAUNCH_H

/* Before MPI_Init: when Open MPI's launcher put every rank on this node and neither the command
 * line (`--mca pml`, `--mca btl`) nor the environment names a transport, asks Open MPI for its
 * shared-memory transport (pml ob1, btl self,vader), which starts in 0.03 s against 0.23 s for
 * the default's UCX probe (H100 machine, bench/RESULTS.md), with tcp behind it for a node where
 * vader cannot make its shared-memory file. Returns what MPI will run on, for the report:
 * "shared memory (one node)" when it chose, else "as launched". */
const char *h5g_mpi_choose_transport(void);

/* After MPI_Init: 1 when MPI may use the GPU (and so its finalize may touch the CUDA context):
 * a transport h5gsort did not choose (UCX may carry GPU memory), or an Open MPI built
 * CUDA-aware. 0 lets the context go while MPI finalizes (src/main.c). */
int h5g_mpi_may_use_gpu(const char *transport);

#endif
