#ifndef H5G_MPI_LAUNCH_H
#define H5G_MPI_LAUNCH_H

/* Before MPI_Init, before any other thread runs (it sets environment variables): when Open
 * MPI's launcher put every rank on this node and neither the command line (`--mca pml`, `--mca
 * btl`) nor the environment names a transport, asks Open MPI for pml ob1 with btl self, vader
 * (sm in Open MPI 5) and tcp behind it for a node where vader cannot make its shared-memory
 * file. MPI_Init then takes 0.04 s against 0.25 s when Open MPI probes its network transports
 * (UCX, cm) first (H100 machine, bench/RESULTS.md). */
void h5g_mpi_choose_transport(void);

/* Before MPI_Init, before any other thread runs (it sets an environment variable): unless the
 * environment says otherwise, hwloc, which Open MPI asks for the node's topology, leaves out its
 * GPU components (HWLOC_COMPONENTS=H5G_HWLOC_NO_GPU). Those start the CUDA driver and NVML to
 * list the GPUs, which Open MPI's placement of ranks does not use and h5gsort asks CUDA for
 * itself: on the H100 machine `mpirun -np 1 /bin/true` takes 0.31-0.34 s with them, 0.04 s
 * without (bench/RESULTS.md). This covers what the rank discovers itself (a singleton, srun);
 * mpirun's own discovery needs the variable in mpirun's environment (README, "Usage"). */
#define H5G_HWLOC_NO_GPU "-cuda,-nvml,-opencl,-rsmi,-levelzero"
void h5g_mpi_skip_gpu_topology(void);

/* 1 when h5g_mpi_choose_transport turned Open MPI's memory patcher off: MPI_Init and
 * MPI_Finalize then rewrite no code of munmap and its kin, which another thread (the GPU
 * context's, begun before MPI_Init: src/main.c) may be running. */
int h5g_mpi_patcher_off(void);

/* What MPI runs on, for -v and --report: "shared memory (one node)" where
 * h5g_mpi_choose_transport chose, else "as launched". */
const char *h5g_mpi_transport(void);

/* After MPI_Init: 1 when MPI may touch what a thread destroying the CUDA context uses: a
 * transport h5gsort did not choose (UCX may carry GPU memory), Open MPI's memory patcher left on
 * (its close rewrites munmap's code), or an Open MPI built CUDA-aware. 0 lets a streamed run's
 * context go in a thread behind its write, while MPI still runs (src/plan.c, retire_gpu). */
int h5g_mpi_may_use_gpu(void);

/* After MPI_Init: the connection to the PMIx server of Open MPI's launcher sends each message at
 * once (TCP_NODELAY). PMIx leaves Nagle's algorithm on, so a message written behind one the
 * server has not acknowledged waits for its delayed ACK: 40 ms of every MPI_Finalize (0.047 ->
 * 0.004 s, 1 rank on the 2-core VM). Returns the connections set so (0 with no PMIx server on
 * TCP: another launcher, a singleton). */
int h5g_mpi_pmix_nodelay(void);

#endif
