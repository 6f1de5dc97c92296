// SPDX-License-Identifier: LGPL-2.1-or-later
// Benchmark of one re-assembly of 3D linear elasticity on trilinear
// hexahedra (FESystem(FE_Q(1), 3), QGauss(2)), MPI-distributed on a
// parallel::distributed::Triangulation (p4est): DistributedAssembler (each
// rank's cells on its GPU, or on the host where there is none, then the
// exchange of the interface rows into the owners' Trilinos objects) against
// deal.II's own distributed assembly of the same system on the same ranks
// (FEValues, AffineConstraints::distribute_local_to_global() into a
// TrilinosWrappers::SparseMatrix on step-40's sparsity pattern,
// compress(VectorOperation::add)), twice: one loop over the cells on one
// thread per rank, as step-40 runs ("deal.II 1T"), and WorkStream::run() on
// the rank's MultithreadInfo::n_threads() threads (--threads N, the threads
// the plugin's set-up and host path use), the copier adding the cell systems
// into the Trilinos objects ("deal.II NT"). The threaded one is the peer of
// the speed-up column: the same threads on both sides. Its matrix and
// right-hand side must equal the one-thread assembly's to 1e-13, the
// plugin's deal.II's to 1e-12 (relative Frobenius and l2 norms), or the
// program stops.
//
// Every time is per rank: the median over the repetitions of what that rank
// measured, with an MPI_Barrier before each repetition; the tables give the
// largest over the ranks (the slowest rank decides when the system is ready)
// and the per-rank lines the rest. The plugin's re-assembly is split into
//   local     the rank's assembly (on the device: the kernels alone, the
//             device synchronized before and after them),
//   transfer  device path only: local matrix and right-hand side to the host,
//   exchange  packing, posting and waiting for the MPI messages (the wait
//             includes a neighbour's lateness: a rank whose local assembly
//             is faster waits for the slower one's messages),
//   exposed   of exchange, the time spent waiting for the messages
//             (MPI_Waitall) that the work done while they travel did not
//             hide,
//   write     zeroing the Epetra arrays and adding owned and received values;
// total is the wall time of DistributedAssembler::assemble(). The MPI floor
// is the same messages (same ranks, same sizes) sent from and received into
// contiguous buffers without packing or adding, timed the same way. strong
// and weak are scaling efficiencies against a one-rank total given on the
// command line: T1 / (R total) with T1 of the same mesh
// (--strong-reference-ms), T1 / total with T1 of one rank's share
// (--weak-reference-ms); "-" without it.
//
// Usage: mpirun -np R distributed_assembly_benchmark [n ...] [options]
//        n: a cube of n^3 hexahedra (default 16), built as a coarse mesh of
//        m^3 cells refined k times (n = m 2^k, k as large as n allows with
//        m >= 2), so that p4est's replicated coarse mesh stays small.
//        With --tetrahedra, n^3 subcubes each split into tetrahedra
//        (FESystem(FE_SimplexP(1), 3), QGaussSimplex(1)) on a
//        parallel::fullydistributed::Triangulation, cut along the Morton
//        curve of the subcubes; every rank builds its own part.
//        Options: --repetitions N   plugin re-assemblies timed (default 10)
//                 --dealii-repetitions N   deal.II assemblies timed
//                                  (default 3)
//                 --hanging-nodes  the cells in the octant at the origin
//                                  refined once more: hanging nodes
//                                  (hexahedra only)
//                 --tetrahedra     linear tetrahedra instead of hexahedra
//                 --method NAME    device method: GlobalNZ (default),
//                                  SharedNZ, LocalElem-atomic,
//                                  LocalElem-colored
//                 --host           the host path even where a GPU exists
//                 --threads N      host threads per rank for the plugin's
//                                  set-up and host path and deal.II's
//                                  WorkStream assembly (default 1, as
//                                  deal.II's MPI programs usually run;
//                                  deal.II's one-thread assembly is one loop
//                                  over the cells whatever N)
//                 --dealii-only    deal.II's assembly alone (no plugin, no
//                                  check), e.g. on as many ranks as cores
//                 --dealii-threaded-only  deal.II's WorkStream assembly
//                                  alone as the peer and the reference of
//                                  the checks, without the one-thread loop
//                                  (its column shows nan): for meshes where
//                                  that loop takes minutes
//                 --host-reference no deal.II assembly at all (nor its
//                                  pattern; its columns show nan): the
//                                  device assembly is checked against the
//                                  plugin's host path on the same mesh,
//                                  which the tests check against deal.II;
//                                  for one rank's tens of millions of cells
//                 --exchange auto|host|nccl|cuda-aware-mpi  the path of
//                                  the resident target's messages
//                                  (HaloPath; default auto: NCCL where the
//                                  plugin has it and each rank its own GPU,
//                                  else host staging); printed as
//                                  "Exchange path: ..."; a list (e.g.
//                                  nccl,host) times the resident target
//                                  once per path on the same mesh
//                 --force-host-staging  the same as --exchange host
//                 --no-resident    the Trilinos target alone
//                 --cg-iterations N  CG iterations timed (default 50)
//                 --strong-reference-ms T, --weak-reference-ms T
//                                  one rank's re-assembly total [ms] for the
//                                  scaling efficiency columns
//
// The resident target (second table, same run): DistributedAssembler into a
// DistributedDeviceMatrix and DistributedDeviceVector, which stay on the
// device (or in host memory on the host path); its columns as above, with
//   transfer  the nodal data's upload and, where MPI cannot read device
//             memory, the interface values staged through host buffers,
//   MB/rank   bytes sent per rank and re-assembly,
//   Trilinos  the total of the Trilinos target above, and the speed-up
//             over it;
// then one SpMV (DistributedDeviceMatrix::vmult(), halo included) next to
// TrilinosWrappers::SparseMatrix::vmult() on the same matrix, the halo
// update alone, and one iteration of DistributedJacobiCG next to one of
// deal.II's SolverCG with TrilinosWrappers::PreconditionJacobi (the mean
// over a solve of --cg-iterations iterations). The resident matrix must
// equal the Trilinos target's to 1e-12 or the program stops.

#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/multithread_info.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/distributed/fully_distributed_tria.h>
#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/sparsity_tools.h>
#include <deal.II/lac/trilinos_index_access.h>
#include <deal.II/lac/trilinos_precondition.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/distributed/device_selection.h>
#include <gpu_assembly/distributed/distributed_assembler.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/distributed_jacobi_cg.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dealii_elasticity.h"
#include "subcube_tetrahedra.h"
#include <Epetra_CrsMatrix.h>

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  constexpr int    dim    = 3;
  constexpr double lambda = 2., mu = 5.;
  // The plugin's assembly must be deal.II's up to round-off.
  constexpr double tolerance = 1e-12;
  // deal.II's threaded assembly must be its one-thread assembly up to the
  // order of additions.
  constexpr double threaded_tolerance = 1e-13;

  const MPI_Comm world = MPI_COMM_WORLD;

  using Clock = std::chrono::steady_clock;

  double
  seconds_since(const Clock::time_point start)
  {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  double
  median(std::vector<double> values)
  {
    AssertThrow(!values.empty(), ExcInternalError());
    std::sort(values.begin(), values.end());
    const std::size_t m = values.size() / 2;
    return values.size() % 2 == 1 ? values[m] :
                                    0.5 * (values[m - 1] + values[m]);
  }

  bool
  is_root()
  {
    return Utilities::MPI::this_mpi_process(world) == 0;
  }

  struct Options
  {
    std::vector<unsigned int> sizes;
    unsigned int              repetitions        = 10;
    unsigned int              dealii_repetitions = 3;
    bool                      hanging_nodes      = false;
    bool                      tetrahedra         = false;
    bool                      force_host         = false;
    bool                      dealii_only        = false;
    // deal.II's WorkStream assembly alone, as the reference and the peer.
    bool dealii_threaded_only = false;
    // No deal.II assembly: the device assembly checked against the host path.
    bool host_reference = false;
    // The resident target runs once per path, on the same mesh.
    std::vector<std::string> exchange_names = {"auto"};
    bool                     resident       = true;
    unsigned int             cg_iterations  = 50;
    AssemblyMethod           method         = AssemblyMethod::global_nz;
    // One rank's re-assembly total [ms] of the same mesh (strong scaling)
    // and of a mesh of one rank's share (weak scaling); 0: not given.
    double strong_reference_ms = 0;
    double weak_reference_ms   = 0;
  };



  // A scaling efficiency column: @p reference_ms divided by @p seconds, or
  // "-" without a reference.
  std::string
  scaling_efficiency(const double reference_ms, const double seconds)
  {
    std::ostringstream s;
    if (reference_ms > 0 && seconds > 0)
      s << std::fixed << std::setprecision(0) << std::setw(8)
        << 100. * reference_ms * 1e-3 / seconds << '%';
    else
      s << std::setw(9) << '-';
    return s.str();
  }



  // n = m 2^k with m >= 2 and k as large as possible: p4est keeps the
  // coarse mesh on every rank, so it should be small.
  void
  make_mesh(parallel::distributed::Triangulation<dim> &tria,
            const unsigned int                         n,
            const bool                                 hanging_nodes,
            unsigned int                              &coarse,
            unsigned int                              &refinements)
  {
    coarse      = n;
    refinements = 0;
    while (coarse % 2 == 0 && coarse / 2 >= 2)
      {
        coarse /= 2;
        ++refinements;
      }
    GridGenerator::subdivided_hyper_cube(tria, coarse);
    tria.refine_global(refinements);
    if (!hanging_nodes)
      return;
    for (const auto &cell : tria.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          const Point<dim> c = cell->center();
          if (c[0] < 0.5 && c[1] < 0.5 && c[2] < 0.5)
            cell->set_refine_flag();
        }
    tria.execute_coarsening_and_refinement();
  }



  // The unit cube of n^3 subcubes split into tetrahedra, cut along the
  // Morton (Z-order) curve of the subcubes into equal pieces: compact parts,
  // as p4est's space-filling curve gives the hexahedra. Each rank builds
  // its own part (subcube_tetrahedra.h), so no rank holds the serial mesh,
  // whose construction would take minutes at millions of cells.
  void
  make_simplex_mesh(parallel::fullydistributed::Triangulation<dim> &tria,
                    const unsigned int                              n)
  {
    tria.create_triangulation(
      Benchmarks::subcube_tetrahedra_description(n, world));
  }



  // deal.II's distributed assembly as step-40 writes it, with step-8's
  // bilinear form and the kernel's body force (1, 0, 0), on @p n_threads
  // threads of this rank (WorkStream; on one thread a loop over the cells);
  // the time of this rank from zeroing to the end of compress().
  double
  dealii_assembly(const Mapping<dim>              &mapping,
                  const DoFHandler<dim>           &dof_handler,
                  const Quadrature<dim>           &quadrature,
                  const AffineConstraints<double> &constraints,
                  const unsigned int               n_threads,
                  TrilinosWrappers::SparseMatrix  &matrix,
                  TrilinosWrappers::MPI::Vector   &rhs)
  {
    const unsigned int threads = MultithreadInfo::n_threads();
    MultithreadInfo::set_thread_limit(n_threads);
    Tensor<1, dim> body_force;
    body_force[0]    = 1.;
    const auto start = Clock::now();
    Benchmarking::assemble_elasticity(mapping,
                                      dof_handler,
                                      quadrature,
                                      constraints,
                                      lambda,
                                      mu,
                                      body_force,
                                      matrix,
                                      rhs);
    const double seconds = seconds_since(start);
    MultithreadInfo::set_thread_limit(threads);
    return seconds;
  }



  // ||A - B||_F / ||A||_F over all ranks, on the union of both patterns.
  // Epetra's row views: deal.II's row iterators of a Trilinos matrix cost a
  // pass over all columns per row.
  double
  matrix_difference(const TrilinosWrappers::SparseMatrix &reference,
                    const TrilinosWrappers::SparseMatrix &matrix)
  {
    const Epetra_CrsMatrix &a = reference.trilinos_matrix();
    const Epetra_CrsMatrix &b = matrix.trilinos_matrix();
    AssertThrow(a.NumMyRows() == b.NumMyRows(),
                ExcMessage("the matrices compared have other rows."));
    double difference = 0, norm = 0;
    std::vector<std::pair<types::global_dof_index, double>> entries;
    for (int row = 0; row < a.NumMyRows(); ++row)
      {
        entries.clear();
        int     n_a = 0, n_b = 0;
        double *values_a = nullptr, *values_b = nullptr;
        int    *columns_a = nullptr, *columns_b = nullptr;
        int     ierr = a.ExtractMyRowView(row, n_a, values_a, columns_a);
        AssertThrow(ierr == 0, ExcTrilinosError(ierr));
        const int row_b = b.RowMap().LID(TrilinosWrappers::global_row_index(
          a,
          static_cast<types::global_dof_index>(row)));
        AssertThrow(row_b >= 0,
                    ExcMessage("the matrices compared have other rows."));
        ierr = b.ExtractMyRowView(row_b, n_b, values_b, columns_b);
        AssertThrow(ierr == 0, ExcTrilinosError(ierr));
        for (int k = 0; k < n_a; ++k)
          {
            entries.emplace_back(
              TrilinosWrappers::global_column_index(a, columns_a[k]),
              values_a[k]);
            norm += values_a[k] * values_a[k];
          }
        for (int k = 0; k < n_b; ++k)
          entries.emplace_back(
            TrilinosWrappers::global_column_index(b, columns_b[k]),
            -values_b[k]);
        std::sort(entries.begin(),
                  entries.end(),
                  [](const auto &x, const auto &y) {
                    return x.first < y.first;
                  });
        for (std::size_t k = 0; k < entries.size();)
          {
            double      sum = 0;
            std::size_t l   = k;
            for (; l < entries.size() && entries[l].first == entries[k].first;
                 ++l)
              sum += entries[l].second;
            difference += sum * sum;
            k = l;
          }
      }
    return std::sqrt(Utilities::MPI::sum(difference, world) /
                     Utilities::MPI::sum(norm, world));
  }



  // The plan's messages alone: the same ranks and sizes as the matrix and
  // right-hand-side exchanges, from and into contiguous buffers, without
  // packing or adding. The median over the repetitions of this rank's time.
  double
  mpi_floor_seconds(const ExchangePlan &plan, const unsigned int repetitions)
  {
    const Utilities::MPI::DuplicatedCommunicator communicator(world);
    const MPI_Comm                               comm = *communicator;
    const ExchangeLists *lists[2]                     = {&plan.matrix_lists(),
                                                         &plan.vector_lists()};
    // Allocated and touched once, as the plan's buffers are.
    std::vector<double> send[2], receive[2];
    for (unsigned int e = 0; e < 2; ++e)
      {
        send[e].assign(lists[e]->n_send(), 1.);
        receive[e].assign(lists[e]->n_recv(), 0.);
      }
    std::vector<double> times;
    for (unsigned int r = 0; r < repetitions; ++r)
      {
        int ierr = MPI_Barrier(comm);
        AssertThrowMPI(ierr);
        const auto start = Clock::now();
        for (unsigned int e = 0; e < 2; ++e)
          {
            const ExchangeLists     &l = *lists[e];
            std::vector<MPI_Request> requests(l.recv_ranks.size() +
                                              l.send_ranks.size());
            std::size_t              q = 0;
            for (std::size_t p = 0; p < l.recv_ranks.size(); ++p)
              {
                ierr = MPI_Irecv(receive[e].data() + l.recv_offsets[p],
                                 static_cast<int>(l.recv_offsets[p + 1] -
                                                  l.recv_offsets[p]),
                                 MPI_DOUBLE,
                                 l.recv_ranks[p],
                                 e,
                                 comm,
                                 &requests[q++]);
                AssertThrowMPI(ierr);
              }
            for (std::size_t p = 0; p < l.send_ranks.size(); ++p)
              {
                ierr = MPI_Isend(send[e].data() + l.send_offsets[p],
                                 static_cast<int>(l.send_offsets[p + 1] -
                                                  l.send_offsets[p]),
                                 MPI_DOUBLE,
                                 l.send_ranks[p],
                                 e,
                                 comm,
                                 &requests[q++]);
                AssertThrowMPI(ierr);
              }
            ierr = MPI_Waitall(requests.size(),
                               requests.data(),
                               MPI_STATUSES_IGNORE);
            AssertThrowMPI(ierr);
          }
        times.push_back(seconds_since(start));
      }
    return median(times);
  }



  // Largest value over the ranks.
  double
  max_over_ranks(const double value)
  {
    return Utilities::MPI::min_max_avg(value, world).max;
  }

  std::string
  min_avg_max(const double value, const double scale, const int precision)
  {
    const Utilities::MPI::MinMaxAvg m =
      Utilities::MPI::min_max_avg(value, world);
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << m.min * scale << " / "
      << m.avg * scale << " / " << m.max * scale;
    return s.str();
  }



  // The resident target: DistributedAssembler into a DistributedDeviceMatrix
  // and DistributedDeviceVector, its SpMV and Jacobi-CG, next to the
  // Trilinos target's total (trilinos_total_max) and Trilinos' SpMV and CG
  // on the Trilinos target's matrix.
  // The first assembly after reinit(), as after a mesh change, then the
  // re-assemblies, each after a barrier: the first one's time, and per
  // re-assembly the total and the assembler's parts.
  struct AssemblyTimes
  {
    double              first = 0;
    std::vector<double> local, transfer, communication, exposed, write, total;
  };

  template <class Matrix, class Vector>
  AssemblyTimes
  time_assemblies(DistributedAssembler<dim, double>         &assembler,
                  const LinearElasticityKernel<dim, double> &kernel,
                  Matrix                                    &matrix,
                  Vector                                    &rhs,
                  const unsigned int                         repetitions)
  {
    AssemblyTimes result;
    int           ierr = MPI_Barrier(world);
    AssertThrowMPI(ierr);
    auto start = Clock::now();
    assembler.assemble(kernel, matrix, rhs);
    result.first = seconds_since(start);
    for (unsigned int r = 0; r < repetitions; ++r)
      {
        ierr = MPI_Barrier(world);
        AssertThrowMPI(ierr);
        start = Clock::now();
        assembler.assemble(kernel, matrix, rhs);
        result.total.push_back(seconds_since(start));
        const auto &times = assembler.get_times();
        result.local.push_back(times.local);
        result.transfer.push_back(times.transfer);
        result.communication.push_back(times.communication);
        result.exposed.push_back(times.exposed);
        result.write.push_back(times.write);
      }
    return result;
  }



  void
  run_resident(const Options                             &options,
               const std::string                         &exchange_name,
               const bool                                 use_device,
               const DoFHandlerAdapter<dim>              &adapter,
               const LinearElasticityKernel<dim, double> &kernel,
               const TrilinosWrappers::SparseMatrix      &trilinos_matrix,
               const TrilinosWrappers::MPI::Vector       &trilinos_rhs,
               const double                               floor_max,
               const double                               trilinos_total_max,
               const double                               n_nonzeros,
               const unsigned long long                   n_cells,
               const unsigned long long                   n_dofs)
  {
    const unsigned int n_ranks = Utilities::MPI::n_mpi_processes(world);
    const IndexSet    &owned   = adapter.locally_owned_dofs();
    const auto         sync    = [use_device]() {
      if (use_device)
        synchronize_device();
    };
    DistributedDeviceMatrix<double>::AdditionalData storage;
    storage.use_device = use_device;
    storage.halo_path  = halo_path_from_string(exchange_name);
    auto                            start = Clock::now();
    DistributedDeviceMatrix<double> A;
    A.reinit(adapter, storage);
    if (is_root())
      std::cout << "Exchange path: " << to_string(A.get_halo_path())
                << " (--exchange " << exchange_name << ")" << std::endl;
    DistributedDeviceVector<double> b;
    b.reinit(A.get_partitioner(), storage);
    sync();
    const double matrix_setup_max = max_over_ranks(seconds_since(start));
    DistributedAssembler<dim, double>::AdditionalData data;
    data.use_device    = use_device;
    data.device.method = options.method;
    DistributedAssembler<dim, double> assembler;
    assembler.reinit(adapter, A, b, data);
    sync();
    const double setup_max = max_over_ranks(seconds_since(start));

    const AssemblyTimes times =
      time_assemblies(assembler, kernel, A, b, options.repetitions);
    const double first_max = max_over_ranks(times.first);
    int          ierr      = 0;

    // The same values as the Trilinos target's.
    TrilinosWrappers::SparseMatrix resident_matrix;
    resident_matrix.reinit(trilinos_matrix);
    A.copy_to(resident_matrix);
    const double matrix_error =
      matrix_difference(trilinos_matrix, resident_matrix);
    TrilinosWrappers::MPI::Vector resident_rhs(owned, world);
    b.copy_locally_owned_to(resident_rhs);
    resident_rhs -= trilinos_rhs;
    const double rhs_error = resident_rhs.l2_norm() / trilinos_rhs.l2_norm();
    if (is_root())
      std::cout << "\nResident target vs Trilinos target: relative "
                   "difference "
                << matrix_error << " (matrix), " << rhs_error
                << " (right-hand side); reinit " << setup_max
                << " s (slowest rank; matrix and vector " << matrix_setup_max
                << " s, the rest DistributedAssembler::reinit), first "
                   "assembly "
                << first_max * 1e3 << " ms" << std::endl;
    AssertThrow(matrix_error <= tolerance && rhs_error <= tolerance,
                ExcMessage("the resident assembly differs from the Trilinos "
                           "target's by more than 1e-12."));

    // SpMV with the halo, the halo alone, and Trilinos' SpMV.
    DistributedDeviceVector<double> x, y;
    x.reinit(A.get_partitioner(), storage);
    y.reinit(x);
    x.copy_locally_owned_from(trilinos_rhs);
    TrilinosWrappers::MPI::Vector trilinos_x(trilinos_rhs),
      trilinos_y(owned, world);
    std::vector<double> spmv, halo, trilinos_spmv;
    for (unsigned int r = 0; r < options.repetitions; ++r)
      {
        ierr = MPI_Barrier(world);
        AssertThrowMPI(ierr);
        start = Clock::now();
        A.vmult(y, x);
        sync();
        spmv.push_back(seconds_since(start));
        ierr = MPI_Barrier(world);
        AssertThrowMPI(ierr);
        start = Clock::now();
        x.update_ghost_values();
        sync();
        halo.push_back(seconds_since(start));
        ierr = MPI_Barrier(world);
        AssertThrowMPI(ierr);
        start = Clock::now();
        trilinos_matrix.vmult(trilinos_y, trilinos_x);
        trilinos_spmv.push_back(seconds_since(start));
      }

    // CG iterations: the resident Jacobi-CG and deal.II's SolverCG with
    // Trilinos' Jacobi, a fixed number of iterations each (tolerance 0).
    DistributedJacobiCG<double>     cg;
    DistributedDeviceVector<double> solution;
    cg.solve(A, solution, b, 0., 1); // work vectors allocated
    ierr = MPI_Barrier(world);
    AssertThrowMPI(ierr);
    start               = Clock::now();
    const auto   result = cg.solve(A, solution, b, 0., options.cg_iterations);
    const double cg_seconds =
      seconds_since(start) / std::max(1u, result.iterations);
    TrilinosWrappers::PreconditionJacobi jacobi;
    jacobi.initialize(trilinos_matrix);
    TrilinosWrappers::MPI::Vector trilinos_solution(owned, world);
    SolverControl control(options.cg_iterations, 0., false, false);
    SolverCG<TrilinosWrappers::MPI::Vector> solver(control);
    ierr = MPI_Barrier(world);
    AssertThrowMPI(ierr);
    start = Clock::now();
    try
      {
        solver.solve(trilinos_matrix, trilinos_solution, trilinos_rhs, jacobi);
      }
    catch (const SolverControl::NoConvergence &)
      {
        // Expected: the iteration count is fixed.
      }
    const double trilinos_cg_seconds =
      seconds_since(start) / std::max(1u, control.last_step());

    const Utilities::MPI::MinMaxAvg comm_stats =
      Utilities::MPI::min_max_avg(median(times.communication), world);
    const double bytes_max =
      max_over_ranks(double(assembler.n_resident_bytes_sent()));
    const double halo_bytes_max = max_over_ranks(double(x.n_halo_bytes_sent()));
    const double local_max      = max_over_ranks(median(times.local));
    const double transfer_max   = max_over_ranks(median(times.transfer));
    const double write_max      = max_over_ranks(median(times.write));
    const double exposed_max    = max_over_ranks(median(times.exposed));
    const double total_max      = max_over_ranks(median(times.total));
    const double spmv_max       = max_over_ranks(median(spmv));
    const double halo_max       = max_over_ranks(median(halo));
    const double trilinos_spmv_max = max_over_ranks(median(trilinos_spmv));
    const double cg_max            = max_over_ranks(cg_seconds);
    const double trilinos_cg_max   = max_over_ranks(trilinos_cg_seconds);
    if (is_root())
      {
        std::cout << "\nResident target (DistributedDeviceMatrix, "
                  << (use_device ?
                        "device path (" + to_string(options.method) + ")" :
                        "host path")
                  << ", halo " << to_string(A.get_halo_path())
                  << "); times [ms] of the slowest rank\n"
                  << std::right << std::setw(6) << "ranks" << std::setw(11)
                  << "cells" << std::setw(11) << "DoFs" << std::setw(9)
                  << "local" << std::setw(10) << "transfer" << std::setw(10)
                  << "exchange" << std::setw(9) << "exposed" << std::setw(9)
                  << "write" << std::setw(10) << "total" << std::setw(9)
                  << "GNZ/s" << std::setw(12) << "MB/rank" << std::setw(10)
                  << "of floor" << std::setw(11) << "Trilinos" << std::setw(10)
                  << "speed-up" << '\n'
                  << std::setw(6) << n_ranks << std::setw(11) << n_cells
                  << std::setw(11) << n_dofs << std::fixed
                  << std::setprecision(2) << std::setw(9) << local_max * 1e3
                  << std::setw(10) << transfer_max * 1e3 << std::setw(10)
                  << comm_stats.max * 1e3 << std::setw(9) << exposed_max * 1e3
                  << std::setw(9) << write_max * 1e3 << std::setw(10)
                  << total_max * 1e3 << std::setw(9)
                  << n_nonzeros / total_max * 1e-9 << std::setprecision(3)
                  << std::setw(12) << bytes_max * 1e-6;
        if (n_ranks > 1 && comm_stats.max > 0)
          std::cout << std::setprecision(0) << std::setw(9)
                    << 100. * floor_max / comm_stats.max << '%';
        else
          std::cout << std::setw(10) << "-";
        std::cout << std::setprecision(2) << std::setw(11)
                  << trilinos_total_max * 1e3 << std::setw(9)
                  << std::setprecision(1) << trilinos_total_max / total_max
                  << 'x' << '\n';
        std::cout << std::right << std::setw(6) << "ranks" << std::setw(11)
                  << "SpMV" << std::setw(11) << "halo" << std::setw(12)
                  << "halo MB" << std::setw(11) << "GB/s" << std::setw(13)
                  << "Trilinos" << std::setw(11) << "CG iter" << std::setw(13)
                  << "Trilinos CG" << '\n'
                  << std::setw(6) << n_ranks << std::setprecision(3)
                  << std::setw(11) << spmv_max * 1e3 << std::setw(11)
                  << halo_max * 1e3 << std::setw(12) << halo_bytes_max * 1e-6
                  << std::setprecision(1)
                  << std::setw(11)
                  // Values, column indices (8 + 4 bytes per nonzero) and the
                  // vectors read and written, over all ranks.
                  << (n_nonzeros * 12. + 3. * 8. * n_dofs) / spmv_max * 1e-9
                  << std::setprecision(3) << std::setw(13)
                  << trilinos_spmv_max * 1e3 << std::setw(11) << cg_max * 1e3
                  << std::setw(13) << trilinos_cg_max * 1e3 << std::defaultfloat
                  << std::setprecision(6) << std::endl;
      }
  }

  void
  run_size(const unsigned int n, const Options &options, const bool use_device)
  {
    const unsigned int n_ranks = Utilities::MPI::n_mpi_processes(world);
    auto               start   = Clock::now();
    std::unique_ptr<parallel::DistributedTriangulationBase<dim>> tria_pointer;
    std::unique_ptr<FiniteElement<dim>>                          fe_pointer;
    std::unique_ptr<Mapping<dim>>    mapping_pointer;
    std::unique_ptr<Quadrature<dim>> quadrature_pointer;
    unsigned int                     coarse = 0, refinements = 0;
    if (options.tetrahedra)
      {
        auto simplex_tria =
          std::make_unique<parallel::fullydistributed::Triangulation<dim>>(
            world);
        make_simplex_mesh(*simplex_tria, n);
        tria_pointer = std::move(simplex_tria);
        fe_pointer = std::make_unique<FESystem<dim>>(FE_SimplexP<dim>(1), dim);
        mapping_pointer = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        quadrature_pointer = std::make_unique<QGaussSimplex<dim>>(1);
      }
    else
      {
        auto hex_tria =
          std::make_unique<parallel::distributed::Triangulation<dim>>(world);
        make_mesh(*hex_tria, n, options.hanging_nodes, coarse, refinements);
        tria_pointer       = std::move(hex_tria);
        fe_pointer         = std::make_unique<FESystem<dim>>(FE_Q<dim>(1), dim);
        mapping_pointer    = std::make_unique<MappingQ<dim>>(1);
        quadrature_pointer = std::make_unique<QGauss<dim>>(2);
      }
    const parallel::DistributedTriangulationBase<dim> &tria = *tria_pointer;
    const FiniteElement<dim>                          &fe   = *fe_pointer;
    const Mapping<dim>    &mapping                          = *mapping_pointer;
    const Quadrature<dim> &quadrature = *quadrature_pointer;
    const std::string      cell_name =
      options.tetrahedra ? "tetrahedra" : "hexahedra";
    DoFHandler<dim> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    const IndexSet owned = dof_handler.locally_owned_dofs();
    const IndexSet relevant =
      DoFTools::extract_locally_relevant_dofs(dof_handler);
    AffineConstraints<double> constraints(relevant);
    DoFTools::make_hanging_node_constraints(dof_handler, constraints);
    VectorTools::interpolate_boundary_values(mapping,
                                             dof_handler,
                                             0,
                                             Functions::ZeroFunction<dim>(dim),
                                             constraints);
    constraints.close();
    unsigned int n_constrained = 0, n_hanging = 0;
    for (const types::global_dof_index dof : owned)
      if (constraints.is_constrained(dof))
        {
          ++n_constrained;
          const auto *entries = constraints.get_constraint_entries(dof);
          n_hanging += entries != nullptr && !entries->empty();
        }
    n_constrained                  = Utilities::MPI::sum(n_constrained, world);
    n_hanging                      = Utilities::MPI::sum(n_hanging, world);
    const double      mesh_seconds = max_over_ranks(seconds_since(start));
    const std::string cells_per_rank =
      min_avg_max(tria.n_locally_owned_active_cells(), 1., 0);
    const unsigned long long n_cells = tria.n_global_active_cells();
    const unsigned long long n_dofs  = dof_handler.n_dofs();
    if (is_root())
      std::cout << "\nMesh n = " << n
                << (options.tetrahedra ?
                      " (n^3 subcubes split into tetrahedra, Z-order "
                      "partition" :
                      " (coarse " + std::to_string(coarse) + "^3, " +
                        std::to_string(refinements) + " global refinements")
                << (options.hanging_nodes ? ", octant at the origin once more" :
                                            "")
                << "): " << tria.n_global_active_cells() << " " << cell_name
                << ", " << dof_handler.n_dofs() << " DoFs, " << n_constrained
                << " constrained, of which hanging: " << n_hanging
                << "; cells per rank (min / avg / max): " << cells_per_rank
                << " (mesh, DoFs, constraints: " << mesh_seconds << " s)"
                << std::endl;

    // deal.II's peer on step-40's sparsity pattern; none with
    // --host-reference (its times NaN, printed as nan).
    TrilinosWrappers::SparseMatrix dealii_matrix;
    TrilinosWrappers::MPI::Vector  dealii_rhs(owned, world);
    double                         dealii_setup = 0,
           dealii_seconds = std::numeric_limits<double>::quiet_NaN(),
           dealii_max = dealii_seconds, threaded_max = dealii_seconds,
           n_nonzeros = 0;
    if (!options.host_reference)
      {
        start = Clock::now();
        {
          DynamicSparsityPattern dsp(relevant);
          DoFTools::make_sparsity_pattern(dof_handler, dsp, constraints, false);
          SparsityTools::distribute_sparsity_pattern(dsp,
                                                     owned,
                                                     world,
                                                     relevant);
          dealii_matrix.reinit(owned, owned, dsp, world);
        }
        dealii_setup = max_over_ranks(seconds_since(start));
        // The times of @p repetitions assemblies on @p n_threads threads,
        // each after a barrier.
        const auto time_dealii = [&](const unsigned int repetitions,
                                     const unsigned int n_threads,
                                     TrilinosWrappers::SparseMatrix &A,
                                     TrilinosWrappers::MPI::Vector  &b) {
          std::vector<double> times;
          for (unsigned int r = 0; r < repetitions; ++r)
            {
              const int ierr = MPI_Barrier(world);
              AssertThrowMPI(ierr);
              times.push_back(dealii_assembly(mapping,
                                              dof_handler,
                                              quadrature,
                                              constraints,
                                              n_threads,
                                              A,
                                              b));
            }
          return times;
        };
        const std::vector<double> dealii_times =
          time_dealii(options.dealii_threaded_only ? 0 :
                                                     options.dealii_repetitions,
                      1,
                      dealii_matrix,
                      dealii_rhs);
        // Left NaN where the loop was skipped: printed as such, never a time.
        if (!dealii_times.empty())
          {
            dealii_seconds = median(dealii_times);
            dealii_max     = max_over_ranks(dealii_seconds);
          }
        n_nonzeros = dealii_matrix.n_nonzero_elements();

        // deal.II's threaded peer on the rank's threads, the same pattern; with
        // --dealii-threaded-only it assembles the reference itself.
        const unsigned int             n_threads = MultithreadInfo::n_threads();
        TrilinosWrappers::SparseMatrix threaded_copy;
        TrilinosWrappers::MPI::Vector  threaded_copy_rhs;
        if (!options.dealii_threaded_only)
          {
            threaded_copy.reinit(dealii_matrix);
            threaded_copy_rhs.reinit(owned, world);
          }
        TrilinosWrappers::SparseMatrix &threaded_matrix =
          options.dealii_threaded_only ? dealii_matrix : threaded_copy;
        TrilinosWrappers::MPI::Vector &threaded_rhs =
          options.dealii_threaded_only ? dealii_rhs : threaded_copy_rhs;
        const std::vector<double> threaded_times =
          time_dealii(options.dealii_repetitions,
                      n_threads,
                      threaded_matrix,
                      threaded_rhs);
        const double threaded_seconds = median(threaded_times);
        threaded_max                  = max_over_ranks(threaded_seconds);
        if (!options.dealii_threaded_only)
          {
            // The copier adds cell systems in another order than the loop:
            // round-off only.
            const double matrix_error =
              matrix_difference(dealii_matrix, threaded_matrix);
            TrilinosWrappers::MPI::Vector difference = threaded_rhs;
            difference -= dealii_rhs;
            const double rhs_error =
              difference.l2_norm() / dealii_rhs.l2_norm();
            AssertThrow(matrix_error <= threaded_tolerance &&
                          rhs_error <= threaded_tolerance,
                        ExcMessage(
                          "deal.II's threaded assembly (WorkStream) "
                          "differs from its one-thread assembly by more "
                          "than 1e-13 (matrix " +
                          std::to_string(matrix_error) + ", right-hand side " +
                          std::to_string(rhs_error) + ")."));
          }
        if (is_root())
          {
            std::cout
              << "deal.II, one loop over the cells per rank (one thread): "
                 "sparsity pattern and matrix "
              << dealii_setup << " s; assembly ";
            if (options.dealii_threaded_only)
              std::cout << "skipped (--dealii-threaded-only)";
            else
              std::cout << dealii_max * 1e3 << " ms (median of "
                        << options.dealii_repetitions << ", slowest rank)";
            std::cout
              << ", " << n_nonzeros << " nonzeros\n"
              << "deal.II, WorkStream on " << MultithreadInfo::n_threads()
              << " thread(s) per rank (the peer of the speed-up columns): "
              << "assembly " << threaded_max * 1e3 << " ms; "
              << (options.dealii_threaded_only ?
                    "the reference of the checks below" :
                    "equals the one-thread assembly to 1e-13")
              << std::endl;
          }
      }

    if (options.host_reference && is_root())
      std::cout << "deal.II: no assembly (--host-reference); the reference "
                   "of the check below is the plugin's host path"
                << std::endl;

    const auto print_header = [&]() {
      std::cout << "\n"
                << tria.n_global_active_cells() << " " << cell_name
                << (options.hanging_nodes ? " with hanging nodes" : "")
                << ", 3D elasticity, double, " << n_ranks << " ranks, "
                << (options.dealii_only ? "deal.II only" :
                    use_device ? "device path (" + to_string(options.method) +
                                   ")" :
                                 "host path")
                << "; times [ms] of the slowest rank\n"
                << std::right << std::setw(6) << "ranks" << std::setw(11)
                << "cells" << std::setw(11) << "DoFs" << std::setw(9) << "local"
                << std::setw(10) << "transfer" << std::setw(10) << "exchange"
                << std::setw(9) << "exposed" << std::setw(9) << "write"
                << std::setw(10) << "total" << std::setw(9) << "GNZ/s"
                << std::setw(12) << "MB/rank" << std::setw(10) << "of floor"
                << std::setw(11) << "deal.II 1T" << std::setw(11)
                << "deal.II " + std::to_string(MultithreadInfo::n_threads()) +
                     "T"
                << std::setw(10) << "speed-up" << std::setw(9) << "strong"
                << std::setw(9) << "weak" << '\n';
      std::cout << std::setw(6) << n_ranks << std::setw(11) << n_cells
                << std::setw(11) << n_dofs;
    };

    if (options.dealii_only)
      {
        if (is_root())
          {
            print_header();
            // The plugin's columns stay empty.
            for (const int width : {9, 10, 10, 9, 9, 10, 9, 12, 10})
              std::cout << std::setw(width) << "-";
            std::cout << std::fixed << std::setprecision(1) << std::setw(11)
                      << dealii_max * 1e3 << std::setw(11)
                      << threaded_max * 1e3;
            for (const int width : {10, 9, 9})
              std::cout << std::setw(width) << "-";
            std::cout << std::defaultfloat << std::setprecision(6) << std::endl;
          }
        return;
      }

    // The plugin: adapter, pattern and matrix, plan.
    start = Clock::now();
    const DoFHandlerAdapter<dim> adapter(mapping,
                                         dof_handler,
                                         quadrature,
                                         constraints);
    const double                 adapter_seconds = seconds_since(start);
    start                                        = Clock::now();
    TrilinosWrappers::SparseMatrix matrix;
    TrilinosWrappers::MPI::Vector  rhs(owned, world);
    {
      DynamicSparsityPattern dsp;
      adapter.make_sparsity_pattern(dsp);
      matrix.reinit(owned, owned, dsp, world);
    }
    const double pattern_seconds = seconds_since(start);
    if (options.host_reference)
      n_nonzeros = matrix.n_nonzero_elements();

    DistributedAssembler<dim, double>::AdditionalData data;
    data.use_device    = use_device;
    data.device.method = options.method;
    // Released before the resident target is built: one GPU holds the
    // element data and reduction arrays of one assembler at a time.
    auto assembler = std::make_unique<DistributedAssembler<dim, double>>();
    start          = Clock::now();
    assembler->reinit(adapter, matrix, rhs, data);
    if (use_device)
      synchronize_device();
    const double setup_seconds = seconds_since(start);

    LinearElasticityKernel<dim, double> kernel;
    kernel.lambda        = lambda;
    kernel.mu            = mu;
    kernel.body_force[0] = 1.;

    const AssemblyTimes times =
      time_assemblies(*assembler, kernel, matrix, rhs, options.repetitions);
    const double        first_seconds = times.first;
    const ExchangePlan &plan          = assembler->get_exchange_plan();
    const double floor_seconds = mpi_floor_seconds(plan, options.repetitions);

    // A benchmark of wrong results is worthless. With --host-reference the
    // reference is the host path's assembly of the same matrix.
    if (options.host_reference)
      {
        dealii_matrix.reinit(matrix);
        DistributedAssembler<dim, double>::AdditionalData host_data;
        host_data.use_device = false;
        DistributedAssembler<dim, double> host_assembler;
        host_assembler.reinit(adapter, dealii_matrix, dealii_rhs, host_data);
        host_assembler.assemble(kernel, dealii_matrix, dealii_rhs);
      }
    const double matrix_error = matrix_difference(dealii_matrix, matrix);
    TrilinosWrappers::MPI::Vector rhs_difference = rhs;
    rhs_difference -= dealii_rhs;
    const double rhs_error = rhs_difference.l2_norm() / dealii_rhs.l2_norm();
    if (is_root())
      std::cout << (options.host_reference ?
                      "Plugin vs its host path (--host-reference): " :
                      "Plugin vs deal.II: ")
                << "relative Frobenius difference " << matrix_error
                << " (matrix), relative l2 difference " << rhs_error
                << " (right-hand side)" << std::endl;
    AssertThrow(
      matrix_error <= tolerance && rhs_error <= tolerance,
      ExcMessage(std::string("the plugin's distributed assembly "
                             "differs from ") +
                 (options.host_reference ? "its host path's" : "deal.II's") +
                 " by more than 1e-12 (matrix " + std::to_string(matrix_error) +
                 ", right-hand side " + std::to_string(rhs_error) + ")."));

    // Per rank.
    const double bytes_sent   = plan.n_bytes_sent();
    const double bytes_recv   = plan.n_bytes_received();
    const double n_neighbours = plan.matrix_lists().send_ranks.size();
    const std::vector<double> rank_values = {
      double(tria.n_locally_owned_active_cells()),
      double(owned.n_elements()),
      double(adapter.get_local_to_global().size()),
      adapter_seconds,
      pattern_seconds,
      setup_seconds,
      first_seconds,
      median(times.local),
      median(times.transfer),
      median(times.communication),
      median(times.write),
      median(times.total),
      bytes_sent,
      bytes_recv,
      n_neighbours,
      floor_seconds,
      dealii_seconds};
    const std::vector<std::vector<double>> all_ranks =
      Utilities::MPI::gather(world, rank_values);
    if (is_root())
      {
        std::cout << "Per rank: owned cells, owned / local DoFs, set-up [s] "
                     "(adapter, pattern and matrix, DistributedAssembler::"
                     "reinit), first assembly [ms], median re-assembly [ms] "
                     "(local, transfer, exchange, write, total), MPI floor "
                     "[ms], sent / received MB, neighbours, deal.II [ms]\n";
        for (unsigned int p = 0; p < all_ranks.size(); ++p)
          {
            const std::vector<double> &v = all_ranks[p];
            std::cout << "  rank " << p << ": " << std::fixed
                      << std::setprecision(0) << v[0] << " cells, " << v[1]
                      << " / " << v[2] << " DoFs; set-up "
                      << std::setprecision(3) << v[3] << " + " << v[4] << " + "
                      << v[5] << " s; first " << std::setprecision(2)
                      << v[6] * 1e3 << "; " << v[7] * 1e3 << " / " << v[8] * 1e3
                      << " / " << v[9] * 1e3 << " / " << v[10] * 1e3 << " / "
                      << v[11] * 1e3 << "; floor " << v[15] * 1e3 << "; "
                      << std::setprecision(3) << v[12] * 1e-6 << " / "
                      << v[13] * 1e-6 << " MB, " << std::setprecision(0)
                      << v[14] << " neighbours; " << std::setprecision(2)
                      << v[16] * 1e3 << std::defaultfloat
                      << std::setprecision(6) << '\n';
          }
      }
    const Utilities::MPI::MinMaxAvg comm_stats =
      Utilities::MPI::min_max_avg(median(times.communication), world);
    const Utilities::MPI::MinMaxAvg sent_stats =
      Utilities::MPI::min_max_avg(bytes_sent, world);
    const double      rate           = median(times.communication) > 0 ?
                                         bytes_sent / median(times.communication) :
                                         0.;
    const std::string rate_line      = min_avg_max(rate, 1e-9, 2);
    const std::string setup_line     = min_avg_max(setup_seconds, 1., 3);
    const double      local_max      = max_over_ranks(median(times.local));
    const double      transfer_max   = max_over_ranks(median(times.transfer));
    const double      write_max      = max_over_ranks(median(times.write));
    const double      exposed_max    = max_over_ranks(median(times.exposed));
    const double      total_max      = max_over_ranks(median(times.total));
    const double      floor_max      = max_over_ranks(floor_seconds);
    const double      adapter_max    = max_over_ranks(adapter_seconds);
    const double      pattern_max    = max_over_ranks(pattern_seconds);
    const double      first_max      = max_over_ranks(first_seconds);
    const double      max_neighbours = max_over_ranks(n_neighbours);
    if (is_root())
      {
        std::cout << "Set-up, slowest rank: adapter " << adapter_max
                  << " s, pattern and matrix " << pattern_max
                  << " s, DistributedAssembler::reinit " << setup_line
                  << " s (min / avg / max); first assembly " << first_max * 1e3
                  << " ms\n"
                  << "Exchange: sent per rank " << sent_stats.min * 1e-6
                  << " / " << sent_stats.avg * 1e-6 << " / "
                  << sent_stats.max * 1e-6
                  << " MB (min / avg / max), sent bytes / exchange time "
                  << rate_line << " GB/s; bytes per rank / (cells per "
                  << "rank)^(2/3): "
                  << sent_stats.max /
                       std::pow(double(n_cells) / n_ranks, 2. / 3.)
                  << std::endl;
        print_header();
        std::cout << std::fixed << std::setprecision(2) << std::setw(9)
                  << local_max * 1e3 << std::setw(10) << transfer_max * 1e3
                  << std::setw(10) << comm_stats.max * 1e3 << std::setw(9)
                  << exposed_max * 1e3 << std::setw(9) << write_max * 1e3
                  << std::setw(10) << total_max * 1e3 << std::setw(9)
                  << n_nonzeros / total_max * 1e-9 << std::setprecision(3)
                  << std::setw(12) << sent_stats.max * 1e-6;
        if (max_neighbours > 0)
          std::cout << std::setprecision(0) << std::setw(9)
                    << 100. * floor_max / comm_stats.max << '%';
        else
          std::cout << std::setw(10) << "-";
        std::cout << std::setprecision(1) << std::setw(11) << dealii_max * 1e3
                  << std::setw(11) << threaded_max * 1e3 << std::setw(9)
                  << threaded_max / total_max << 'x'
                  << scaling_efficiency(options.strong_reference_ms,
                                        n_ranks * total_max)
                  << scaling_efficiency(options.weak_reference_ms, total_max)
                  << std::defaultfloat << std::setprecision(6) << std::endl;
      }
    assembler.reset();
    if (options.resident)
      for (const std::string &exchange_name : options.exchange_names)
        run_resident(options,
                     exchange_name,
                     use_device,
                     adapter,
                     kernel,
                     matrix,
                     rhs,
                     floor_max,
                     total_max,
                     n_nonzeros,
                     n_cells,
                     n_dofs);
  }
} // namespace



int
main(int argc, char **argv)
{
  // One thread per rank, for deal.II's assembly and the plugin's host path.
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  try
    {
      Options options;
      for (int i = 1; i < argc; ++i)
        {
          const std::string argument = argv[i];
          const auto        count    = [&](const std::string &name) {
            AssertThrow(i + 1 < argc,
                        ExcMessage(name + " needs a positive number."));
            const int value = std::stoi(argv[++i]);
            AssertThrow(value > 0,
                        ExcMessage(name + " needs a positive number, not " +
                                   std::to_string(value) + "."));
            return static_cast<unsigned int>(value);
          };
          if (argument == "--repetitions")
            options.repetitions = count(argument);
          else if (argument == "--dealii-repetitions")
            options.dealii_repetitions = count(argument);
          else if (argument == "--hanging-nodes")
            options.hanging_nodes = true;
          else if (argument == "--threads")
            MultithreadInfo::set_thread_limit(count(argument));
          else if (argument == "--tetrahedra")
            options.tetrahedra = true;
          else if (argument == "--host")
            options.force_host = true;
          else if (argument == "--dealii-only")
            options.dealii_only = true;
          else if (argument == "--dealii-threaded-only")
            options.dealii_threaded_only = true;
          else if (argument == "--host-reference")
            options.host_reference = true;
          else if (argument == "--exchange")
            {
              AssertThrow(i + 1 < argc,
                          ExcMessage("--exchange needs one of " +
                                     halo_path_choices() + "."));
              options.exchange_names =
                Utilities::split_string_list(argv[++i], ',');
              for (const std::string &name : options.exchange_names)
                halo_path_from_string(name);
            }
          else if (argument == "--force-host-staging")
            {
              options.exchange_names = {"host"};
            }
          else if (argument == "--no-resident")
            options.resident = false;
          else if (argument == "--cg-iterations")
            options.cg_iterations = count(argument);
          else if (argument == "--strong-reference-ms" ||
                   argument == "--weak-reference-ms")
            {
              AssertThrow(i + 1 < argc,
                          ExcMessage(argument + " needs a time in ms."));
              const double value = std::stod(argv[++i]);
              AssertThrow(value > 0,
                          ExcMessage(argument +
                                     " needs a positive time in "
                                     "ms, not " +
                                     std::string(argv[i]) + "."));
              (argument == "--strong-reference-ms" ?
                 options.strong_reference_ms :
                 options.weak_reference_ms) = value;
            }
          else if (argument == "--method" && i + 1 < argc)
            options.method = parse_assembly_method(argv[++i]);
          else
            {
              AssertThrow(!argument.empty() &&
                            argument.find_first_not_of("0123456789") ==
                              std::string::npos,
                          ExcMessage("Unknown argument '" + argument +
                                     "': sizes n are positive integers; "
                                     "options are --repetitions N, "
                                     "--dealii-repetitions N, "
                                     "--hanging-nodes, --tetrahedra, "
                                     "--method NAME, --host, --threads N, "
                                     "--dealii-only, --dealii-threaded-only, "
                                     "--host-reference, "
                                     "--exchange " +
                                     halo_path_choices() +
                                     ", --force-host-staging, "
                                     "--no-resident, --cg-iterations N, "
                                     "--strong-reference-ms T, "
                                     "--weak-reference-ms T."));
              options.sizes.push_back(std::stoi(argument));
              AssertThrow(options.sizes.back() >= 2,
                          ExcMessage("a size n must be at least 2."));
            }
        }
      if (options.sizes.empty())
        options.sizes = {16};
      AssertThrow(!(options.hanging_nodes && options.tetrahedra),
                  ExcMessage("--hanging-nodes refines hexahedra with p4est; "
                             "it cannot be combined with --tetrahedra."));
      AssertThrow(!(options.host_reference &&
                    (options.dealii_only || options.dealii_threaded_only)),
                  ExcMessage("--host-reference runs no deal.II assembly; it "
                             "cannot be combined with --dealii-only or "
                             "--dealii-threaded-only."));

      // Collective: every rank calls it, whichever path runs.
      const int device =
        options.dealii_only ? -1 : select_device_by_node_rank(world);
      const bool             use_device = device >= 0 && !options.force_host;
      const std::vector<int> devices    = Utilities::MPI::gather(world, device);
      const std::string      binding    = describe_thread_binding(world);
      if (is_root())
        {
          std::cout << "MPI ranks: " << Utilities::MPI::n_mpi_processes(world)
                    << ", host threads per rank: "
                    << MultithreadInfo::n_threads() << std::endl;
          if (!binding.empty())
            std::cout << binding << std::endl;
          if (!options.dealii_only)
            {
              std::cout << describe_execution_path() << std::endl;
              std::cout << "Plugin path: "
                        << (use_device ?
                              "device (" + to_string(options.method) + ")" :
                              "host")
                        << "; CUDA device of each rank:";
              for (const int d : devices)
                std::cout << ' ' << d;
              std::cout << std::endl;
            }
        }
      for (const unsigned int n : options.sizes)
        run_size(n, options, use_device);
    }
  catch (const std::exception &exception)
    {
      std::cerr << "distributed_assembly_benchmark, rank "
                << Utilities::MPI::this_mpi_process(world)
                << ", stopped with an error:\n"
                << exception.what() << std::endl;
      MPI_Abort(world, 1);
    }
  return 0;
}
