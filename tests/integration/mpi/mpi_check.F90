! The Fortran side of mpi_check correctness, built twice from this one
! source: mpi_check_f through mpif.h, and mpi_check_use (NK_USE_MPI_MODULE)
! through the "use mpi" module (explicit interfaces, Open MPI's ignore-TKR
! bindings). Open MPI's Fortran bindings (mpi_send_ and friends in
! libmpi_mpifh) call PMPI_* directly, so an agent that wraps only the C
! MPI_* functions never sees these calls; it must wrap the Fortran symbols
! as well, and change nothing.
! Send/recv with a status, isend/irecv/waitall, sendrecv, bcast, allreduce
! (also MPI_IN_PLACE), alltoall, barrier, comm_split with an allreduce on it.
! Every received value is checked (a failed check prints the reason and
! calls MPI_Abort); rank 0 prints "rank R checksum X" for every rank, in rank
! order, then "ok". Both builds print the same checksums. Needs at least 2
! ranks.
!
! Run on this machine (2 cores, as root) with:
!   export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
!   mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./mpi_check_f
! (also ./mpi_check_use, with --mca btl tcp,self, and with -np 2 and -np 3)
#ifdef NK_USE_MPI_MODULE
#define PROGRAM_NAME 'mpi_check_use'
#else
#define PROGRAM_NAME 'mpi_check_f'
#endif
module checks
#ifdef NK_USE_MPI_MODULE
  use mpi
  implicit none
#else
  implicit none
  include 'mpif.h'
#endif
  integer :: my_rank = -1, nranks = 0
  ! A checksum kept below 2**31 - 1 so the arithmetic never overflows.
  integer(kind=8) :: checksum = 7
  integer(kind=8), parameter :: modulus = 2147483647_8
contains
  integer function val(src, dst, tag, i)
    integer, intent(in) :: src, dst, tag, i
    val = src * 1000003 + dst * 10007 + tag * 101 + i
  end function val

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: ierr
    write (0, '(a,i0,a,a)') PROGRAM_NAME // ': rank ', my_rank, ': check failed: ', what
    flush (0)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine fail

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) call fail(what)
  end subroutine check

  subroutine mix(v)
    integer, intent(in) :: v
    checksum = mod(checksum * 31_8 + modulo(int(v, 8), modulus), modulus)
  end subroutine mix

  subroutine fill(buf, n, src, dst, tag)
    integer, intent(in) :: n, src, dst, tag
    integer, intent(out) :: buf(n)
    integer :: i
    do i = 1, n
      buf(i) = val(src, dst, tag, i)
    end do
  end subroutine fill

  ! Checks buf(1:n) and mixes it into the checksum.
  subroutine expect(what, buf, n, src, dst, tag)
    character(len=*), intent(in) :: what
    integer, intent(in) :: n, src, dst, tag
    integer, intent(in) :: buf(n)
    integer :: i
    do i = 1, n
      if (buf(i) /= val(src, dst, tag, i)) call fail(what)
      call mix(buf(i))
    end do
  end subroutine expect

  subroutine expect_status(what, status, source, tag, count)
    character(len=*), intent(in) :: what
    integer, intent(in) :: status(MPI_STATUS_SIZE), source, tag, count
    integer :: got, ierr
    call MPI_Get_count(status, MPI_INTEGER, got, ierr)
    call check(status(MPI_SOURCE) == source .and. status(MPI_TAG) == tag .and. got == count, what)
  end subroutine expect_status
end module checks

program mpi_check_fortran
  use checks
  implicit none
  integer :: ierr, left, right, i, q, color, key, sub, sub_rank, sub_size, last
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4), requests(4)
  integer :: sbuf(16), rbuf(16), a(16), b(16), v(8), res(8), scalar, sum
  integer, allocatable :: outs(:), ins(:)
  integer(kind=8), allocatable :: sums(:)
  integer(kind=8) :: mine(1)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, my_rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (nranks < 2) then
    if (my_rank == 0) write (0, '(a)') PROGRAM_NAME // ': needs at least 2 ranks'
    call MPI_Finalize(ierr)
    stop 2
  end if
  left = mod(my_rank + nranks - 1, nranks)
  right = mod(my_rank + 1, nranks)

  ! send/recv in a ring: rank 0 sends first, the others receive first, so
  ! blocking sends cannot deadlock.
  call fill(sbuf, 8 + my_rank, my_rank, right, 1)
  if (my_rank == 0) then
    call MPI_Send(sbuf, 8 + my_rank, MPI_INTEGER, right, 1, MPI_COMM_WORLD, ierr)
    call MPI_Recv(rbuf, 16, MPI_INTEGER, left, 1, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_Recv(rbuf, 16, MPI_INTEGER, left, 1, MPI_COMM_WORLD, status, ierr)
    call MPI_Send(sbuf, 8 + my_rank, MPI_INTEGER, right, 1, MPI_COMM_WORLD, ierr)
  end if
  call expect_status('send/recv status', status, left, 1, 8 + left)
  call expect('send/recv', rbuf, 8 + left, left, my_rank, 1)

  ! isend/irecv both ways, completed by waitall.
  call MPI_Irecv(a, 16, MPI_INTEGER, left, 2, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Irecv(b, 16, MPI_INTEGER, right, 3, MPI_COMM_WORLD, requests(2), ierr)
  call fill(sbuf, 16, my_rank, right, 2)
  call fill(rbuf, 5, my_rank, left, 3)
  call MPI_Isend(sbuf, 16, MPI_INTEGER, right, 2, MPI_COMM_WORLD, requests(3), ierr)
  call MPI_Isend(rbuf, 5, MPI_INTEGER, left, 3, MPI_COMM_WORLD, requests(4), ierr)
  call MPI_Waitall(4, requests, statuses, ierr)
  do i = 1, 4
    call check(requests(i) == MPI_REQUEST_NULL, 'waitall left a request')
  end do
  call expect_status('waitall status', statuses(:, 1), left, 2, 16)
  call expect_status('waitall status', statuses(:, 2), right, 3, 5)
  call expect('waitall', a, 16, left, my_rank, 2)
  call expect('waitall', b, 5, right, my_rank, 3)

  ! sendrecv, periodic shift to the right.
  call fill(sbuf, 10, my_rank, right, 4)
  call MPI_Sendrecv(sbuf, 10, MPI_INTEGER, right, 4, rbuf, 16, MPI_INTEGER, left, 4, &
                    MPI_COMM_WORLD, status, ierr)
  call expect_status('sendrecv status', status, left, 4, 10)
  call expect('sendrecv', rbuf, 10, left, my_rank, 4)

  ! bcast from the last rank.
  if (my_rank == nranks - 1) then
    call fill(a, 16, nranks - 1, -1, 5)
  else
    a = 0
  end if
  call MPI_Bcast(a, 16, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD, ierr)
  call expect('bcast', a, 16, nranks - 1, -1, 5)

  ! allreduce, then in place. The buffers are passed as their first
  ! element, the Fortran 77 way, because MPI_IN_PLACE and the scalar below
  ! are scalars: gfortran 10 and later reject one argument passed as an
  ! array in one call and as a scalar in another under mpif.h's implicit
  ! interfaces (unless -fallow-argument-mismatch).
  do i = 1, 8
    v(i) = my_rank + 3 * i
  end do
  call MPI_Allreduce(v(1), res(1), 8, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 8
    call check(res(i) == nranks * (nranks - 1) / 2 + 3 * nranks * i, 'allreduce')
    call mix(res(i))
  end do
  call MPI_Allreduce(MPI_IN_PLACE, v(1), 8, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 8
    call check(v(i) == res(i), 'allreduce in place')
  end do

  ! alltoall, 3 values per peer.
  allocate (outs(3 * nranks), ins(3 * nranks))
  do q = 0, nranks - 1
    call fill(outs(3 * q + 1:3 * q + 3), 3, my_rank, q, 6)
  end do
  call MPI_Alltoall(outs, 3, MPI_INTEGER, ins, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do q = 0, nranks - 1
    call expect('alltoall', ins(3 * q + 1:3 * q + 3), 3, q, my_rank, 6)
  end do
  deallocate (outs, ins)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  ! comm_split by parity, in reverse rank order, and an allreduce on it.
  color = mod(my_rank, 2)
  key = nranks - my_rank
  call MPI_Comm_split(MPI_COMM_WORLD, color, key, sub, ierr)
  call MPI_Comm_rank(sub, sub_rank, ierr)
  call MPI_Comm_size(sub, sub_size, ierr)
  last = color + 2 * ((nranks - 1 - color) / 2)
  call check(sub_size == (nranks - 1 - color) / 2 + 1 .and. sub_rank == (last - my_rank) / 2, 'comm_split rank')
  scalar = my_rank
  call MPI_Allreduce(scalar, sum, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  call check(sum == sub_size * color + sub_size * (sub_size - 1), 'allreduce on the split communicator')
  call mix(sum)
  call MPI_Comm_free(sub, ierr)
  call check(sub == MPI_COMM_NULL, 'comm_free left the communicator')

  ! Every rank's checksum, printed by rank 0 in rank order.
  allocate (sums(nranks))
  mine(1) = checksum
  call MPI_Gather(mine, 1, MPI_INTEGER8, sums, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (my_rank == 0) then
    do q = 0, nranks - 1
      write (*, '(a,i0,a,z8.8)') 'rank ', q, ' checksum ', sums(q + 1)
    end do
    write (*, '(a)') 'ok'
    flush (6)
  end if
  deallocate (sums)
  call MPI_Finalize(ierr)
end program mpi_check_fortran
