! 3-D FFT with slab decomposition, global transposes with MPI_Alltoall (Fortran
! version of tests/kernels/c/fft3d.c).
!
! An N^3 complex array is split in z-slabs; the forward transform does the x and y
! FFTs locally, transposes to x-slabs with one MPI_Alltoall (MPI_DOUBLE_COMPLEX) and
! does the z FFTs; the inverse goes back. Checks: a plane wave transforms to N^3 at
! its wave vector and 0 elsewhere; forward+inverse returns pseudo-random data to
! 1e-12; Parseval's identity holds to 1e-10.
! ranks: 1 2 4 8
include 'kernel_common.inc'

module fft_slabs
  use kernel_common
  implicit none
  integer, parameter :: n = 32, repeat = 8
  integer :: nl
  complex(dp), allocatable :: sendbuf(:, :, :, :), recvbuf(:, :, :, :)
contains
  ! In-place radix-2 FFT of a(0:n-1); sign -1 forward, +1 inverse (unnormalised).
  subroutine fft1(a, sign)
    complex(dp), intent(inout) :: a(0:)
    integer, intent(in) :: sign
    integer :: i, j, bit, len, k, start
    complex(dp) :: t, w
    j = 0
    do i = 1, n - 1
      bit = n / 2
      do while (iand(j, bit) /= 0)
        j = ieor(j, bit)
        bit = bit / 2
      end do
      j = ieor(j, bit)
      if (i < j) then
        t = a(i); a(i) = a(j); a(j) = t
      end if
    end do
    len = 2
    do while (len <= n)
      do start = 0, n - 1, len
        do k = 0, len / 2 - 1
          w = exp(cmplx(0.0_dp, sign * 2 * pi * k / len, dp))
          t = w * a(start + k + len / 2)
          a(start + k + len / 2) = a(start + k) - t
          a(start + k) = a(start + k) + t
        end do
      end do
      len = 2 * len
    end do
  end subroutine

  subroutine alltoall()
    integer :: ierr
    call MPI_Alltoall(sendbuf, nl * n * nl, MPI_DOUBLE_COMPLEX, recvbuf, nl * n * nl, &
                      MPI_DOUBLE_COMPLEX, MPI_COMM_WORLD, ierr)
    call k_mpi(ierr, 'MPI_Alltoall')
  end subroutine

  ! The global transpose between the two slab layouts, both (fast, y, slow) with the
  ! fast index global and the slow one local: z-slab -> x-slab and x-slab -> z-slab
  ! are the same operation. The block for rank r holds my slow planes restricted to
  ! r's fast range; what arrives from rank r becomes fast positions r*nl.. of my new
  ! slow planes.
  subroutine transpose(src, dst)
    complex(dp), intent(in) :: src(0:, 0:, :)
    complex(dp), intent(out) :: dst(0:, 0:, :)
    integer :: r, slow, y, fast
    do r = 0, ksize - 1
      do slow = 1, nl
        do y = 0, n - 1
          sendbuf(:, y, slow, r) = src(r * nl:r * nl + nl - 1, y, slow)
        end do
      end do
    end do
    call alltoall()
    do r = 0, ksize - 1
      do slow = 1, nl
        do y = 0, n - 1
          do fast = 1, nl
            dst(r * nl + slow - 1, y, fast) = recvbuf(fast, y, slow, r)
          end do
        end do
      end do
    end do
  end subroutine
end module fft_slabs

program fft3d
  use fft_slabs
  implicit none
  complex(dp), allocatable :: zs(:, :, :), xs(:, :, :), orig(:, :, :)
  integer :: x, y, zl, xl, z, ierr, rep, kx, ky, kz
  real(dp) :: worst, all_worst, plane_error, t0, elapsed, e(2), all_e(2), want, ph
  character(len=160) :: msg

  call k_init('fft3d')
  call k_check(mod(n, ksize) == 0, 'N is not divisible by the rank count')
  nl = n / ksize
  allocate (zs(0:n - 1, 0:n - 1, nl), xs(0:n - 1, 0:n - 1, nl), orig(0:n - 1, 0:n - 1, nl), &
            sendbuf(nl, 0:n - 1, nl, 0:ksize - 1), recvbuf(nl, 0:n - 1, nl, 0:ksize - 1))
  kx = 3; ky = n - 5; kz = n / 2 + 1
  do zl = 1, nl
    do y = 0, n - 1
      do x = 0, n - 1
        ph = 2 * pi * (real(kx, dp) * x + real(ky, dp) * y + real(kz, dp) * (krank * nl + zl - 1)) / n
        zs(x, y, zl) = cmplx(cos(ph), sin(ph), dp)
      end do
    end do
  end do
  call forward3(zs, xs)
  worst = 0
  do xl = 1, nl
    do y = 0, n - 1
      do z = 0, n - 1
        want = 0
        if (krank * nl + xl - 1 == kx .and. y == ky .and. z == kz) want = real(n, dp)**3
        worst = max(worst, abs(xs(z, y, xl) - want))
      end do
    end do
  end do
  plane_error = k_global_max(worst)
  write (msg, '(a,es10.3)') 'plane wave: max deviation from the delta ', plane_error
  call k_check(plane_error < 1.0d-6, msg)

  e(1) = 0
  do zl = 1, nl
    do y = 0, n - 1
      do x = 0, n - 1
        orig(x, y, zl) = cmplx(k_unit(((int(krank * nl + zl - 1, i8) * n + y) * n + x) * 2), &
                               k_unit(((int(krank * nl + zl - 1, i8) * n + y) * n + x) * 2 + 1), dp)
      end do
    end do
  end do
  e(1) = sum(abs(orig)**2)
  zs = orig
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  do rep = 1, repeat
    call forward3(zs, xs)
    if (rep == 1) e(2) = sum(abs(xs)**2)
    call inverse3(xs, zs)
  end do
  elapsed = MPI_Wtime() - t0
  worst = maxval(abs(zs - orig))
  all_worst = k_global_max(worst)
  write (msg, '(a,es10.3)') 'forward+inverse round trips: max deviation ', all_worst
  call k_check(all_worst < 1.0d-12, msg)
  call MPI_Allreduce(e, all_e, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  write (msg, '(a,f18.15)') 'Parseval: output energy / (N^3 input energy) = ', all_e(2) / (all_e(1) * n**3)
  call k_check(abs(all_e(2) / (all_e(1) * n**3) - 1) < 1.0d-10, msg)
  if (krank == 0) write (*, '(a,i0,a,i0,a,es9.2,a,es9.2)') 'fft3d: N=', n, ', ', ksize, &
    ' slabs, plane wave error ', plane_error, ', round trip error ', all_worst
  call k_finish(elapsed)
contains
  subroutine xy(a, sign)
    complex(dp), intent(inout) :: a(0:, 0:, :)
    integer, intent(in) :: sign
    integer :: i, k
    complex(dp) :: line(0:n - 1)
    do k = 1, nl
      do i = 0, n - 1
        call fft1(a(:, i, k), sign)
      end do
      do i = 0, n - 1
        line = a(i, :, k)
        call fft1(line, sign)
        a(i, :, k) = line
      end do
    end do
  end subroutine

  subroutine forward3(zsl, xsl)
    complex(dp), intent(inout) :: zsl(0:, 0:, :), xsl(0:, 0:, :)
    integer :: i, k
    call xy(zsl, -1)
    call transpose(zsl, xsl)
    do k = 1, nl
      do i = 0, n - 1
        call fft1(xsl(:, i, k), -1)
      end do
    end do
  end subroutine

  subroutine inverse3(xsl, zsl)
    complex(dp), intent(inout) :: xsl(0:, 0:, :), zsl(0:, 0:, :)
    integer :: i, k
    do k = 1, nl
      do i = 0, n - 1
        call fft1(xsl(:, i, k), 1)
      end do
    end do
    call transpose(xsl, zsl)
    call xy(zsl, 1)
    zsl = zsl / real(n, dp)**3
  end subroutine
end program fft3d
