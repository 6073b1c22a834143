/* A small real MPI program for the ABI acceptance test. It is compiled with another
 * implementation's mpicc_abi, never with crossmpi's header, and must run unchanged on
 * crossmpi's libmpi_abi.so.1. It exercises the predefined handles and constants a typical
 * program bakes into its binary: communicators, datatypes, reduction operations,
 * MPI_IN_PLACE, MPI_Status fields and MPI_ANY_SOURCE.
 *
 * Rank 0 prints "abi_hello: library: <first line of MPI_Get_library_version>"; every rank
 * prints "abi_hello: rank R of N ok" when all its checks passed, and aborts otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define RING_COUNT 1000 /* ints per ring message: 4000 bytes */
#define RING_TAG 17

static int failures;

static void check(int rank, int condition, const char *what) {
    if (!condition) {
        fprintf(stderr, "abi_hello: rank %d: check failed: %s\n", rank, what);
        failures++;
    }
}

/* Each rank sends RING_COUNT ints derived from its rank to its right neighbour and
 * receives its left neighbour's, with a wildcard source to test MPI_ANY_SOURCE too. */
static void ring(int rank, int size) {
    int out[RING_COUNT], in[RING_COUNT];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int i, count = -1, ok = 1;
    MPI_Status status;

    for (i = 0; i < RING_COUNT; i++) out[i] = rank * 100000 + i;
    memset(in, 0xff, sizeof in);
    check(rank, MPI_Sendrecv(out, RING_COUNT, MPI_INT, right, RING_TAG, in, RING_COUNT, MPI_INT,
                             MPI_ANY_SOURCE, RING_TAG, MPI_COMM_WORLD, &status) == MPI_SUCCESS,
          "MPI_Sendrecv returns MPI_SUCCESS");
    check(rank, status.MPI_SOURCE == left, "status.MPI_SOURCE is the left neighbour");
    check(rank, status.MPI_TAG == RING_TAG, "status.MPI_TAG is the ring tag");
    check(rank, MPI_Get_count(&status, MPI_INT, &count) == MPI_SUCCESS && count == RING_COUNT,
          "MPI_Get_count gives the ring count");
    for (i = 0; i < RING_COUNT; i++) ok &= in[i] == left * 100000 + i;
    check(rank, ok, "ring payload comes from the left neighbour");
}

static void reductions(int rank, int size) {
    int mine = rank + 1, sum = 0;
    double top = -1.0, value = (double)rank;
    long long in_place = (long long)rank << 32; /* needs 64 bits: MPI_LONG_LONG must be 8 bytes */

    check(rank, MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Allreduce(MPI_SUM) returns MPI_SUCCESS");
    check(rank, sum == size * (size + 1) / 2, "MPI_SUM of rank+1 is size*(size+1)/2");
    MPI_Allreduce(&value, &top, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    check(rank, top == (double)(size - 1), "MPI_MAX of ranks is size-1");
    MPI_Allreduce(MPI_IN_PLACE, &in_place, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    check(rank, in_place == ((long long)size * (size - 1) / 2) << 32,
          "in-place MPI_SUM of rank<<32 is (size*(size-1)/2)<<32");
}

int main(int argc, char **argv) {
    int rank = -1, size = 0, all_failures = 0;

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "abi_hello: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int length = 0;
        MPI_Get_library_version(version, &length);
        version[strcspn(version, "\n")] = '\0';
        printf("abi_hello: library: %s\n", version);
        fflush(stdout);
    }
    ring(rank, size);
    reductions(rank, size);
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all_failures != 0) {
        fprintf(stderr, "abi_hello: rank %d: %d failed checks in the job\n", rank, all_failures);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("abi_hello: rank %d of %d ok\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
