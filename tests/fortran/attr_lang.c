/* C side of tests/fortran/attr_lang.f90: attributes as C sets and reads them. C puts and
 * gets addresses; an attribute set from Fortran reads in C as a pointer to its integer
 * (an MPI_Aint for MPI_*_SET_ATTR, an int for MPI_ATTR_PUT). Handles arrive as Fortran
 * integers. */
#include <mpi.h>
#include <stddef.h>

/* MPI_*_get_attr from C: the pointer found, as an integer; *flag says whether found. */
MPI_Aint c_comm_get(MPI_Fint comm, int keyval, int *flag) {
  void *value = NULL;
  MPI_Comm_get_attr(MPI_Comm_f2c(comm), keyval, &value, flag);
  return (MPI_Aint)value;
}

MPI_Aint c_attr_get(MPI_Fint comm, int keyval, int *flag) {
  void *value = NULL;
  MPI_Attr_get(MPI_Comm_f2c(comm), keyval, &value, flag);
  return (MPI_Aint)value;
}

MPI_Aint c_type_get(MPI_Fint datatype, int keyval, int *flag) {
  void *value = NULL;
  MPI_Type_get_attr(MPI_Type_f2c(datatype), keyval, &value, flag);
  return (MPI_Aint)value;
}

MPI_Aint c_win_get(MPI_Fint win, int keyval, int *flag) {
  void *value = NULL;
  MPI_Win_get_attr(MPI_Win_f2c(win), keyval, &value, flag);
  return (MPI_Aint)value;
}

/* MPI_*_set_attr from C with the address `value`. */
int c_comm_set(MPI_Fint comm, int keyval, MPI_Aint value) {
  return MPI_Comm_set_attr(MPI_Comm_f2c(comm), keyval, (void *)value);
}

int c_type_set(MPI_Fint datatype, int keyval, MPI_Aint value) {
  return MPI_Type_set_attr(MPI_Type_f2c(datatype), keyval, (void *)value);
}

int c_win_set(MPI_Fint win, int keyval, MPI_Aint value) {
  return MPI_Win_set_attr(MPI_Win_f2c(win), keyval, (void *)value);
}

/* What C reads at an attribute's address. */
MPI_Aint aint_at(MPI_Aint address) { return *(MPI_Aint *)address; }

int int_at(MPI_Aint address) { return *(int *)address; }

/* A C variable whose address C sets as an attribute. */
static MPI_Aint c_variable = ((MPI_Aint)1 << 40) + 17;

MPI_Aint c_variable_address(void) { return (MPI_Aint)&c_variable; }

/* C keyvals whose callbacks read the MPI_Aint their value points at (so they hold only
 * pointers): the copy callback notes it and gives the copy the same pointer, the delete
 * callbacks note it. */
static MPI_Aint copy_saw, delete_saw;

MPI_Aint c_copy_saw(void) { return copy_saw; }

MPI_Aint c_delete_saw(void) { return delete_saw; }

static int copy_pointer(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)comm; (void)keyval; (void)extra;
  copy_saw = *(MPI_Aint *)in;
  *(void **)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

static int note_comm_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm; (void)keyval; (void)extra;
  delete_saw = *(MPI_Aint *)value;
  return MPI_SUCCESS;
}

static int note_type_delete(MPI_Datatype datatype, int keyval, void *value, void *extra) {
  (void)datatype; (void)keyval; (void)extra;
  delete_saw = *(MPI_Aint *)value;
  return MPI_SUCCESS;
}

static int note_win_delete(MPI_Win win, int keyval, void *value, void *extra) {
  (void)win; (void)keyval; (void)extra;
  delete_saw = *(MPI_Aint *)value;
  return MPI_SUCCESS;
}

int c_comm_keyval(void) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(copy_pointer, note_comm_delete, &keyval, NULL);
  return keyval;
}

int c_type_keyval(void) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, note_type_delete, &keyval, NULL);
  return keyval;
}

int c_win_keyval(void) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, note_win_delete, &keyval, NULL);
  return keyval;
}
