// ranks: 1
/* The MPI_T event interface with no event types: before MPI_T_init_thread every call
 * says MPI_T_ERR_NOT_INITIALIZED; after it the enumeration finds no events and no
 * sources, every index is invalid (MPI_T_ERR_INVALID_INDEX), no registration can be
 * allocated, and the calls on registrations and event instances report
 * MPI_T_ERR_INVALID_HANDLE. */
#include "common.h"

int main(int argc, char **argv) {
  int num = -1, provided;
  CHECK(MPI_T_event_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED, "event_get_num before MPI_T_init_thread");
  CHECK(MPI_T_event_handle_free(NULL, NULL, NULL) == MPI_T_ERR_NOT_INITIALIZED, "handle_free before init");
  t_init(&argc, &argv, "mpi4_tool_events");
  MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_OK(MPI_T_event_get_num(&num));
  CHECK(num == 0, "%d event types", num);
  MPI_OK(MPI_T_source_get_num(&num));
  CHECK(num == 0, "%d sources", num);
  int idx = -1;
  CHECK(MPI_T_event_get_index("nothing", &idx) == MPI_T_ERR_INVALID_NAME, "event_get_index");
  MPI_T_event_registration reg = NULL;
  CHECK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg) == MPI_T_ERR_INVALID_INDEX, "handle_alloc");
  MPI_Info info;
  CHECK(MPI_T_event_handle_get_info(reg, &info) == MPI_T_ERR_INVALID_HANDLE, "handle_get_info");
  CHECK(MPI_T_event_handle_set_info(reg, MPI_INFO_NULL) == MPI_T_ERR_INVALID_HANDLE, "handle_set_info");
  CHECK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL) == MPI_T_ERR_INVALID_HANDLE,
        "register_callback");
  CHECK(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_NONE, &info) == MPI_T_ERR_INVALID_HANDLE, "callback_get_info");
  CHECK(MPI_T_event_callback_set_info(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL) == MPI_T_ERR_INVALID_HANDLE,
        "callback_set_info");
  CHECK(MPI_T_event_set_dropped_handler(reg, NULL) == MPI_T_ERR_INVALID_HANDLE, "set_dropped_handler");
  CHECK(MPI_T_event_handle_free(reg, NULL, NULL) == MPI_T_ERR_INVALID_HANDLE, "handle_free");
  MPI_T_event_instance ev = NULL;
  char buf[64];
  MPI_Count ts;
  int src;
  CHECK(MPI_T_event_read(ev, 0, buf) == MPI_T_ERR_INVALID_HANDLE, "event_read");
  CHECK(MPI_T_event_copy(ev, buf) == MPI_T_ERR_INVALID_HANDLE, "event_copy");
  CHECK(MPI_T_event_get_timestamp(ev, &ts) == MPI_T_ERR_INVALID_HANDLE, "get_timestamp");
  CHECK(MPI_T_event_get_source(ev, &src) == MPI_T_ERR_INVALID_HANDLE, "get_source");
  MPI_OK(MPI_T_finalize());
  CHECK(MPI_T_event_copy(ev, buf) == MPI_T_ERR_NOT_INITIALIZED, "event_copy after MPI_T_finalize");
  t_finish();
  return 0;
}
