! The Fortran side of mpi_check correctness, built twice from this one
! source: mpi_check_f through mpif.h, and mpi_check_use (NK_USE_MPI_MODULE)
! through the "use mpi" module (explicit interfaces, Open MPI's ignore-TKR
! bindings). Open MPI's Fortran bindings (mpi_send_ and friends in
! libmpi_mpifh) call PMPI_* directly, so an agent that wraps only the C
! MPI_* functions never sees these calls; it must wrap the Fortran symbols
! as well, and change nothing.
! Send/recv with a status, isend/irecv/waitall, sendrecv, probe, waitany,
! waitsome, test, testall, testany, testsome, bcast, allreduce (also
! MPI_IN_PLACE), alltoall, barrier, nonblocking collectives (iallreduce,
! ibarrier, ibcast, ialltoall, igather), comm_split with an allreduce on it,
! comm_create_group, an intercommunicator (intercomm_create, point to point
! and an allreduce on it, intercomm_merge).
! Every received value is checked (a failed check prints the reason and
! calls MPI_Abort); rank 0 prints "rank R checksum X" for every rank, in rank
! order, then "ok". Both builds print the same checksums. Needs at least 2
! ranks.
!
! With the argument "slow MS", each even rank 2k then waits on its odd
! partner 2k+1, which sleeps MS ms first, in MPI_Sendrecv, MPI_Probe,
! MPI_Waitany, MPI_Waitsome (on MPI_COMM_WORLD) and MPI_Recv (on an
! intercommunicator between the even and the odd ranks, from remote rank
! k): with the agent and a deadline below MS, rank 2k reports a response
! timeout in each, naming rank 2k+1, which it can only if the agent saw the
! Fortran call.
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
  use, intrinsic :: iso_c_binding, only: c_int
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

  interface
    integer(c_int) function c_usleep(microseconds) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: microseconds
    end function c_usleep
  end interface
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

  subroutine sleep_ms(ms)
    integer, intent(in) :: ms
    integer(c_int) :: ignored
    ignored = c_usleep(int(ms, c_int) * 1000_c_int)
  end subroutine sleep_ms

  ! The "slow MS" phase (see the header).
  subroutine slow_partners(ms)
    integer, intent(in) :: ms
    integer :: ierr, partner, half, inter, odd, lr, index, outcount, i
    integer :: sbuf(8), rbuf(8), req(1), indices(1), status(MPI_STATUS_SIZE)
    odd = mod(my_rank, 2)
    lr = my_rank / 2
    call MPI_Comm_split(MPI_COMM_WORLD, odd, my_rank, half, ierr)
    call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - odd, 80, inter, ierr)
    if (lr < nranks / 2) then
      partner = my_rank + 1 - 2 * odd
      if (odd == 1) call sleep_ms(ms)
      call fill(sbuf, 8, my_rank, partner, 81)
      call MPI_Sendrecv(sbuf, 8, MPI_INTEGER, partner, 81, rbuf, 8, MPI_INTEGER, partner, 81, &
                        MPI_COMM_WORLD, status, ierr)
      call expect('slow sendrecv', rbuf, 8, partner, my_rank, 81)
      do i = 82, 84
        if (odd == 1) then
          call sleep_ms(ms)
          call fill(sbuf, 8, my_rank, partner, i)
          call MPI_Send(sbuf, 8, MPI_INTEGER, partner, i, MPI_COMM_WORLD, ierr)
        else if (i == 82) then
          call MPI_Probe(partner, i, MPI_COMM_WORLD, status, ierr)
          call expect_status('slow probe', status, partner, i, 8)
          call MPI_Recv(rbuf, 8, MPI_INTEGER, partner, i, MPI_COMM_WORLD, status, ierr)
          call expect('slow probe', rbuf, 8, partner, my_rank, i)
        else
          call MPI_Irecv(rbuf, 8, MPI_INTEGER, partner, i, MPI_COMM_WORLD, req(1), ierr)
          if (i == 83) then
            call MPI_Waitany(1, req, index, status, ierr)
            call check(index == 1, 'slow waitany index')
          else
            call MPI_Waitsome(1, req, outcount, indices, MPI_STATUSES_IGNORE, ierr)
            call check(outcount == 1 .and. indices(1) == 1, 'slow waitsome')
          end if
          call expect('slow wait', rbuf, 8, partner, my_rank, i)
        end if
      end do
      ! On the intercommunicator the partner is remote rank lr.
      if (odd == 1) then
        call sleep_ms(ms)
        call fill(sbuf, 8, my_rank, partner, 85)
        call MPI_Send(sbuf, 8, MPI_INTEGER, lr, 85, inter, ierr)
      else
        call MPI_Recv(rbuf, 8, MPI_INTEGER, lr, 85, inter, status, ierr)
        call expect_status('slow intercomm recv', status, lr, 85, 8)
        call expect('slow intercomm recv', rbuf, 8, partner, my_rank, 85)
      end if
    end if
    call MPI_Comm_free(inter, ierr)
    call MPI_Comm_free(half, ierr)
  end subroutine slow_partners

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
  integer :: ierr, left, right, i, q, color, key, sub, sub_rank, sub_size, last, done, index, outcount
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4), requests(4), indices(4)
  integer :: sbuf(16), rbuf(16), a(16), b(16), v(8), res(8), scalar, sum, slow_ms, nargs
  integer :: world_group, even_group, even_comm, half, inter, merged, odd, lr, partner, want
  integer, allocatable :: evens(:)
  logical :: flag, flags(4)
  character(len=32) :: arg
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
  slow_ms = 0
  nargs = command_argument_count()
  if (nargs >= 2) then
    call get_command_argument(1, arg)
    if (arg == 'slow') then
      call get_command_argument(2, arg)
      read (arg, *) slow_ms
    end if
  end if

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

  ! probe sizes the receive.
  call fill(sbuf, 3 + my_rank, my_rank, right, 7)
  call MPI_Isend(sbuf, 3 + my_rank, MPI_INTEGER, right, 7, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Probe(left, 7, MPI_COMM_WORLD, status, ierr)
  call expect_status('probe status', status, left, 7, 3 + left)
  call MPI_Recv(rbuf, 16, MPI_INTEGER, left, 7, MPI_COMM_WORLD, status, ierr)
  call expect('probe', rbuf, 3 + left, left, my_rank, 7)
  call MPI_Waitall(1, requests, statuses, ierr)

  ! waitany until no request is active, then waitsome likewise, each on a
  ! receive and a send both ways.
  do q = 1, 2
    call MPI_Irecv(a, 16, MPI_INTEGER, left, 8 + q, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Irecv(b, 16, MPI_INTEGER, right, 10 + q, MPI_COMM_WORLD, requests(2), ierr)
    call fill(sbuf, 12, my_rank, right, 8 + q)
    call fill(rbuf, 6, my_rank, left, 10 + q)
    call MPI_Isend(sbuf, 12, MPI_INTEGER, right, 8 + q, MPI_COMM_WORLD, requests(3), ierr)
    call MPI_Isend(rbuf, 6, MPI_INTEGER, left, 10 + q, MPI_COMM_WORLD, requests(4), ierr)
    done = 0
    do
      if (q == 1) then
        call MPI_Waitany(4, requests, index, status, ierr)
        if (index == MPI_UNDEFINED) exit
        call check(index >= 1 .and. index <= 4, 'waitany index')
        call check(requests(index) == MPI_REQUEST_NULL, 'waitany left its request')
        if (index == 1) call expect_status('waitany status', status, left, 9, 12)
        if (index == 2) call expect_status('waitany status', status, right, 11, 6)
        done = done + 1
      else
        call MPI_Waitsome(4, requests, outcount, indices, statuses, ierr)
        if (outcount == MPI_UNDEFINED) exit
        call check(outcount >= 1 .and. outcount <= 4, 'waitsome outcount')
        do i = 1, outcount
          if (indices(i) == 1) call expect_status('waitsome status', statuses(:, i), left, 10, 12)
          if (indices(i) == 2) call expect_status('waitsome status', statuses(:, i), right, 12, 6)
        end do
        done = done + outcount
      end if
    end do
    call check(done == 4, 'waitany/waitsome completed too few')
    call expect('waitany/waitsome', a, 12, left, my_rank, 8 + q)
    call expect('waitany/waitsome', b, 6, right, my_rank, 10 + q)
  end do

  ! test on each request, testall, testany and testsome, each polled until
  ! everything has completed.
  do q = 1, 4
    call MPI_Irecv(a, 16, MPI_INTEGER, left, 20 + q, MPI_COMM_WORLD, requests(1), ierr)
    call fill(sbuf, 5 + q, my_rank, right, 20 + q)
    call MPI_Isend(sbuf, 5 + q, MPI_INTEGER, right, 20 + q, MPI_COMM_WORLD, requests(2), ierr)
    flags = .false.
    done = 0
    do while (done < 2)
      select case (q)
      case (1)
        do i = 1, 2
          if (.not. flags(i)) then
            call MPI_Test(requests(i), flags(i), statuses(:, i), ierr)
            if (flags(i)) done = done + 1
          end if
        end do
      case (2)
        call MPI_Testall(2, requests, flag, statuses, ierr)
        if (flag) done = 2
      case (3)
        call MPI_Testany(2, requests, index, flag, status, ierr)
        call check(.not. (flag .and. index == MPI_UNDEFINED), 'testany found no active request')
        if (flag) then
          if (index == 1) statuses(:, 1) = status
          done = done + 1
        end if
      case default
        call MPI_Testsome(2, requests, outcount, indices, statuses(:, 3:4), ierr)
        call check(outcount >= 0 .and. outcount <= 2, 'testsome outcount')
        do i = 1, outcount
          if (indices(i) == 1) statuses(:, 1) = statuses(:, 2 + i)
        end do
        done = done + outcount
      end select
    end do
    call check(requests(1) == MPI_REQUEST_NULL .and. requests(2) == MPI_REQUEST_NULL, 'test* left a request')
    call expect_status('test* status', statuses(:, 1), left, 20 + q, 5 + q)
    call expect('test*', a, 5 + q, left, my_rank, 20 + q)
  end do

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

  ! Nonblocking collectives: iallreduce and wait... through waitall,
  ! ibarrier through a test loop, ibcast and ialltoall through waitany,
  ! igather through testall.
  scalar = my_rank + 1
  call MPI_Iallreduce(scalar, sum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Waitall(1, requests, statuses, ierr)
  call check(sum == nranks * (nranks + 1) / 2, 'iallreduce')
  call mix(sum)
  call MPI_Ibarrier(MPI_COMM_WORLD, requests(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(requests(1), flag, status, ierr)
  end do
  if (my_rank == 0) then
    call fill(a, 16, 0, -1, 30)
  else
    a = 0
  end if
  allocate (outs(2 * nranks), ins(2 * nranks))
  do q = 0, nranks - 1
    call fill(outs(2 * q + 1:2 * q + 2), 2, my_rank, q, 31)
  end do
  call MPI_Ibcast(a, 16, MPI_INTEGER, 0, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Ialltoall(outs, 2, MPI_INTEGER, ins, 2, MPI_INTEGER, MPI_COMM_WORLD, requests(2), ierr)
  done = 0
  do
    call MPI_Waitany(2, requests, index, status, ierr)
    if (index == MPI_UNDEFINED) exit
    done = done + 1
  end do
  call check(done == 2, 'waitany on collectives')
  call expect('ibcast', a, 16, 0, -1, 30)
  do q = 0, nranks - 1
    call expect('ialltoall', ins(2 * q + 1:2 * q + 2), 2, q, my_rank, 31)
  end do
  call fill(b, 3, my_rank, 0, 32)
  deallocate (ins)
  allocate (ins(3 * nranks))
  call MPI_Igather(b, 3, MPI_INTEGER, ins, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, requests(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(1, requests, flag, statuses, ierr)
  end do
  if (my_rank == 0) then
    do q = 0, nranks - 1
      call expect('igather', ins(3 * q + 1:3 * q + 3), 3, q, 0, 32)
    end do
  end if
  deallocate (outs, ins)

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

  ! comm_create_group: only the even ranks (its members) call it.
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  allocate (evens((nranks + 1) / 2))
  do q = 1, size(evens)
    evens(q) = 2 * (q - 1)
  end do
  call MPI_Group_incl(world_group, size(evens), evens, even_group, ierr)
  if (mod(my_rank, 2) == 0) then
    call MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 40, even_comm, ierr)
    call MPI_Comm_rank(even_comm, sub_rank, ierr)
    call MPI_Comm_size(even_comm, sub_size, ierr)
    call check(sub_rank == my_rank / 2 .and. sub_size == size(evens), 'comm_create_group rank')
    scalar = my_rank
    call MPI_Allreduce(scalar, sum, 1, MPI_INTEGER, MPI_SUM, even_comm, ierr)
    call check(sum == sub_size * (sub_size - 1), 'allreduce on comm_create_group')
    call mix(sum)
    call MPI_Comm_free(even_comm, ierr)
  end if
  call MPI_Group_free(even_group, ierr)
  call MPI_Group_free(world_group, ierr)
  deallocate (evens)

  ! An intercommunicator between the even and the odd ranks: point to
  ! point with remote ranks, an allreduce across (each group gets the
  ! other's sum), then merged with the odd ranks last.
  odd = mod(my_rank, 2)
  lr = my_rank / 2
  call MPI_Comm_split(MPI_COMM_WORLD, odd, my_rank, half, ierr)
  call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - odd, 41, inter, ierr)
  if (lr < nranks / 2) then
    partner = my_rank + 1 - 2 * odd
    call fill(sbuf, 7, my_rank, partner, 42)
    call MPI_Sendrecv(sbuf, 7, MPI_INTEGER, lr, 42, rbuf, 16, MPI_INTEGER, lr, 42, inter, status, ierr)
    call expect_status('intercomm sendrecv status', status, lr, 42, 7)
    call expect('intercomm sendrecv', rbuf, 7, partner, my_rank, 42)
  end if
  scalar = my_rank
  call MPI_Allreduce(scalar, sum, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
  if (odd == 1) then
    want = ((nranks + 1) / 2) * ((nranks + 1) / 2 - 1)
  else
    want = (nranks / 2) * (nranks / 2)
  end if
  call check(sum == want, 'allreduce on the intercommunicator')
  call mix(sum)
  call MPI_Intercomm_merge(inter, odd == 1, merged, ierr)
  call MPI_Comm_rank(merged, sub_rank, ierr)
  call check(sub_rank == lr + odd * ((nranks + 1) / 2), 'intercomm_merge rank')
  call MPI_Allreduce(scalar, sum, 1, MPI_INTEGER, MPI_SUM, merged, ierr)
  call check(sum == nranks * (nranks - 1) / 2, 'allreduce on the merged communicator')
  call mix(sub_rank)
  call MPI_Comm_free(merged, ierr)
  call MPI_Comm_free(inter, ierr)
  call MPI_Comm_free(half, ierr)

  if (slow_ms > 0) call slow_partners(slow_ms)

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
