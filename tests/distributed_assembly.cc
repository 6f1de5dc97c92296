// SPDX-License-Identifier: LGPL-2.1-or-later
//
// MPI-distributed assembly (host path) against deal.II's own distributed
// assembly: FEValues on the locally owned cells,
// AffineConstraints::distribute_local_to_global() into Trilinos objects on
// step-40's sparsity pattern, then compress(VectorOperation::add). Run under
// mpirun with any number of ranks; every case must agree to 1e-13 relative
// in the matrix (Frobenius norm) and the right-hand side (l2 norm), the
// plugin's sparsity pattern must hold step-40's entries, the bytes the ranks
// send must be those they receive (none on one rank), and a second
// assemble() with the same plan must give the same values. The set-up
// (adapter arrays, sparsity pattern, exchange lists of both targets, the
// resident matrix's CSR arrays) must be the same bit for bit with 2 and 3
// threads. describe_thread_binding() must warn exactly where a rank has more
// threads than cores. The adapter must number a serial mesh as deal.II does,
// refuse a parallel::shared::Triangulation, and refuse the transfers to
// serial deal.II objects on a distributed mesh.

#include <deal.II/base/function_lib.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/multithread_info.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/distributed/fully_distributed_tria.h>
#include <deal.II/distributed/shared_tria.h>
#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/tria_description.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/sparsity_tools.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/device_selection.h>
#include <gpu_assembly/distributed/distributed_assembler.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>

#include <cctype>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dealii_reference.h"
#include "distributed_problems.h"
#include "resident_problems.h"
#include <sched.h>

namespace
{
  using namespace Testing;

  constexpr double tolerance = 1e-13;

  struct Case
  {
    TriaKind     tria_kind;
    Form         form;
    unsigned int degree;
    bool         hanging_nodes;
    bool         keep_constrained_dofs;
  };

  std::string
  describe(const int dim, const Case &c)
  {
    return std::to_string(dim) + "D " +
           (c.tria_kind == TriaKind::p4est ? "p4est" : "fullydistributed") +
           " " + to_string(c.form) + " Q" + std::to_string(c.degree) +
           (c.hanging_nodes ? ", hanging nodes" : ", uniform") +
           (c.keep_constrained_dofs ? ", keep constrained DoFs" : "");
  }



  // deal.II's distributed assembly, as step-40 writes it.
  template <int dim>
  void
  assemble_with_dealii(const Mapping<dim>              &mapping,
                       const DoFHandler<dim>           &dof_handler,
                       const Quadrature<dim>           &quadrature,
                       const AffineConstraints<double> &constraints,
                       const Form                       form,
                       const bool                       keep_constrained_dofs,
                       DynamicSparsityPattern          &dsp,
                       TrilinosWrappers::SparseMatrix  &matrix,
                       TrilinosWrappers::MPI::Vector   &rhs)
  {
    const IndexSet owned = dof_handler.locally_owned_dofs();
    const IndexSet relevant =
      DoFTools::extract_locally_relevant_dofs(dof_handler);
    dsp.reinit(relevant.size(), relevant.size(), relevant);
    DoFTools::make_sparsity_pattern(dof_handler,
                                    dsp,
                                    constraints,
                                    keep_constrained_dofs);
    SparsityTools::distribute_sparsity_pattern(dsp,
                                               owned,
                                               MPI_COMM_WORLD,
                                               relevant);
    matrix.reinit(owned, owned, dsp, MPI_COMM_WORLD);
    rhs.reinit(owned, MPI_COMM_WORLD);

    const FiniteElement<dim>            &fe = dof_handler.get_fe();
    FEValues<dim>                        fe_values(mapping,
                            fe,
                            quadrature,
                            update_values | update_gradients |
                              update_JxW_values);
    const unsigned int                   n = fe.n_dofs_per_cell();
    FullMatrix<double>                   cell_matrix(n, n);
    Vector<double>                       cell_rhs(n);
    std::vector<types::global_dof_index> dofs(n);
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          fe_values.reinit(cell);
          cell_integrals(fe_values, form, cell_matrix, cell_rhs);
          cell->get_dof_indices(dofs);
          constraints.distribute_local_to_global(cell_matrix,
                                                 cell_rhs,
                                                 dofs,
                                                 matrix,
                                                 rhs);
        }
    matrix.compress(VectorOperation::add);
    rhs.compress(VectorOperation::add);
  }



  // Whether every entry of step-40's pattern is in the plugin's, on every
  // rank.
  bool
  pattern_holds(const DynamicSparsityPattern &reference,
                const DynamicSparsityPattern &pattern,
                const IndexSet               &owned)
  {
    unsigned int missing = 0;
    for (const types::global_dof_index row : owned)
      for (auto entry = reference.begin(row); entry != reference.end(row);
           ++entry)
        if (!pattern.exists(row, entry->column()))
          ++missing;
    return Utilities::MPI::sum(missing, MPI_COMM_WORLD) == 0;
  }



  template <int dim>
  bool
  run_case(const Case &c)
  {
    const DistributedProblem<dim> problem(c.tria_kind,
                                          c.form,
                                          c.degree,
                                          c.hanging_nodes,
                                          c.keep_constrained_dofs);
    const auto                   &adapter = problem.adapter;
    const IndexSet                owned   = adapter.locally_owned_dofs();

    DynamicSparsityPattern         reference_dsp;
    TrilinosWrappers::SparseMatrix reference_matrix;
    TrilinosWrappers::MPI::Vector  reference_rhs;
    assemble_with_dealii(problem.mapping,
                         problem.dof_handler,
                         problem.quadrature,
                         problem.constraints,
                         c.form,
                         c.keep_constrained_dofs,
                         reference_dsp,
                         reference_matrix,
                         reference_rhs);

    TrilinosTarget<dim>                   target(problem);
    const DynamicSparsityPattern         &dsp    = target.dsp;
    const TrilinosWrappers::SparseMatrix &matrix = target.matrix;
    const TrilinosWrappers::MPI::Vector  &rhs    = target.rhs;

    const unsigned int n_elements =
      Utilities::MPI::sum(adapter.get_arrays().n_elements, MPI_COMM_WORLD);
    const unsigned int n_hanging =
      Utilities::MPI::sum(adapter.get_arrays().n_constraint_lines(),
                          MPI_COMM_WORLD);
    const double matrix_error = matrix_difference(reference_matrix, matrix);
    TrilinosWrappers::MPI::Vector rhs_difference = rhs;
    rhs_difference -= reference_rhs;
    const double rhs_error = rhs_difference.l2_norm() / reference_rhs.l2_norm();
    const bool   pattern_ok = pattern_holds(reference_dsp, dsp, owned);
    // What one rank sends another receives; one rank sends nothing, several
    // always share an interface on these meshes.
    const ExchangePlan &plan = target.assembler.get_exchange_plan();
    const std::size_t   bytes_sent =
      Utilities::MPI::sum(plan.n_bytes_sent(), MPI_COMM_WORLD);
    const std::size_t bytes_received =
      Utilities::MPI::sum(plan.n_bytes_received(), MPI_COMM_WORLD);
    const bool bytes_ok =
      bytes_sent == bytes_received &&
      (Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD) == 1 ? bytes_sent == 0 :
                                                              bytes_sent > 0);

    // A second assembly reuses the plan and must reproduce the values.
    const TrilinosWrappers::MPI::Vector first_rhs = rhs;
    target.assemble(problem);
    TrilinosWrappers::MPI::Vector repeat_difference = rhs;
    repeat_difference -= first_rhs;
    // Every collective value is computed on every rank before any rank
    // decides what to print.
    const double repeat_rhs_error = repeat_difference.l2_norm();
    const double repeat_error     = matrix_difference(reference_matrix, matrix);
    const bool   same_again =
      repeat_rhs_error == 0. && repeat_error == matrix_error;

    const bool passed = matrix_error < tolerance && rhs_error < tolerance &&
                        pattern_ok && bytes_ok &&
                        n_elements == problem.tria->n_global_active_cells() &&
                        same_again && (!c.hanging_nodes || n_hanging > 0);
    if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
      {
        std::cout << describe(dim, c) << ": " << problem.dof_handler.n_dofs()
                  << " DoFs, " << n_elements << " cells, " << n_hanging
                  << " local lines with entries; relative difference to "
                     "deal.II "
                  << matrix_error << " (matrix), " << rhs_error << " (rhs)";
        if (!passed)
          {
            std::cout << "; FAILED:";
            if (!(matrix_error < tolerance && rhs_error < tolerance))
              std::cout << " the assembly differs from deal.II's by more "
                           "than 1e-13;";
            if (!pattern_ok)
              std::cout << " the plugin's sparsity pattern lacks entries of "
                           "step-40's;";
            if (n_elements != problem.tria->n_global_active_cells())
              std::cout << " the ranks' arrays do not hold every cell once;";
            if (!bytes_ok)
              std::cout << " the ranks' exchange bytes sent (" << bytes_sent
                        << ") and received (" << bytes_received
                        << ") differ, or do not fit the number of ranks;";
            if (!same_again)
              std::cout << " a second assemble() gives other values;";
            if (c.hanging_nodes && n_hanging == 0)
              std::cout << " the mesh has no hanging nodes;";
          }
        std::cout << std::endl;
      }
    return passed;
  }
} // namespace



namespace
{
  // The set-up's arrays and lists by name, as bytes.
  struct SetUpSnapshot
  {
    std::vector<std::pair<std::string, std::vector<char>>> arrays;

    template <typename T>
    void
    add(const std::string &name, const std::vector<T> &values)
    {
      const char *bytes = reinterpret_cast<const char *>(values.data());
      arrays.emplace_back(name,
                          std::vector<char>(bytes,
                                            bytes + values.size() * sizeof(T)));
    }

    void
    add(const std::string &name, const ExchangeLists &lists)
    {
      add(name + " owned_sources", lists.owned_sources);
      add(name + " owned_targets", lists.owned_targets);
      add(name + " send_ranks", lists.send_ranks);
      add(name + " send_offsets", lists.send_offsets);
      add(name + " send_sources", lists.send_sources);
      add(name + " recv_ranks", lists.recv_ranks);
      add(name + " recv_offsets", lists.recv_offsets);
      add(name + " recv_targets", lists.recv_targets);
    }
  };



  // Adapter, pattern and both targets' plans with @p n_threads threads.
  template <int dim>
  SetUpSnapshot
  set_up_with_threads(const unsigned int               n_threads,
                      const Mapping<dim>              &mapping,
                      const DoFHandler<dim>           &dof_handler,
                      const Quadrature<dim>           &quadrature,
                      const AffineConstraints<double> &constraints)
  {
    MultithreadInfo::set_thread_limit(n_threads);
    SetUpSnapshot                             snapshot;
    const GPUAssembly::DoFHandlerAdapter<dim> adapter(mapping,
                                                      dof_handler,
                                                      quadrature,
                                                      constraints);
    const GPUAssembly::MeshArrays            &a = adapter.get_arrays();
    snapshot.add("connectivity", a.connectivity);
    snapshot.add("location", a.location);
    snapshot.add("supplemental", a.supplemental);
    snapshot.add("nodal_coordinates", a.nodal_coordinates);
    snapshot.add("node_dofs", a.node_dofs);
    snapshot.add("row_offsets", a.row_offsets);
    snapshot.add("column_indices", a.column_indices);
    snapshot.add("nonzero_map", a.nonzero_map);
    snapshot.add("dof_is_constrained", a.dof_is_constrained);
    snapshot.add("inhomogeneities", a.inhomogeneities);
    snapshot.add("constraint_line_dofs", a.constraint_line_dofs);
    snapshot.add("constraint_entry_offsets", a.constraint_entry_offsets);
    snapshot.add("constraint_entry_dofs", a.constraint_entry_dofs);
    snapshot.add("constraint_entry_weights", a.constraint_entry_weights);
    snapshot.add("local_to_global", adapter.get_local_to_global());

    const IndexSet        &owned = adapter.locally_owned_dofs();
    DynamicSparsityPattern dsp;
    adapter.make_sparsity_pattern(dsp);
    std::vector<types::global_dof_index> pattern;
    for (const types::global_dof_index row : owned)
      for (auto entry = dsp.begin(row); entry != dsp.end(row); ++entry)
        {
          pattern.push_back(row);
          pattern.push_back(entry->column());
        }
    snapshot.add("sparsity pattern", pattern);
    TrilinosWrappers::SparseMatrix matrix;
    matrix.reinit(owned, owned, dsp, MPI_COMM_WORLD);
    TrilinosWrappers::MPI::Vector                  rhs(owned, MPI_COMM_WORLD);
    GPUAssembly::DistributedAssembler<dim, double> assembler;
    assembler.reinit(adapter, matrix, rhs);
    snapshot.add("Trilinos matrix lists",
                 assembler.get_exchange_plan().matrix_lists());
    snapshot.add("Trilinos vector lists",
                 assembler.get_exchange_plan().vector_lists());

    GPUAssembly::DistributedDeviceMatrix<double> resident_matrix;
    resident_matrix.reinit(adapter);
    GPUAssembly::DistributedDeviceVector<double> resident_rhs;
    resident_rhs.reinit(resident_matrix.get_partitioner());
    GPUAssembly::DistributedAssembler<dim, double> resident_assembler;
    resident_assembler.reinit(adapter, resident_matrix, resident_rhs);
    snapshot.add("resident row offsets", resident_matrix.get_row_offsets());
    snapshot.add("resident columns", resident_matrix.get_column_indices());
    std::vector<types::global_dof_index> ghosts;
    for (const types::global_dof_index ghost :
         resident_matrix.get_partitioner()->ghost_indices())
      ghosts.push_back(ghost);
    snapshot.add("resident ghosts", ghosts);
    snapshot.add("resident matrix lists",
                 resident_assembler.get_exchange_plan().matrix_lists());
    snapshot.add("resident vector lists",
                 resident_assembler.get_exchange_plan().vector_lists());
    MultithreadInfo::set_thread_limit(1);
    return snapshot;
  }



  // A mesh large enough that the set-up's parallel loops split into many
  // blocks (3D elasticity, hanging nodes, Dirichlet values): its set-up
  // must not depend on how the loops are split over the threads. Two
  // thread counts above one are compared: deal.II's FEValues reuses the
  // mapping data of a translated cell (CellSimilarity) only when it runs on
  // one thread, so the supplemental data of one thread differ from those of
  // several in the last bits, in deal.II's own assembly as in the adapter.
  bool
  run_thread_case()
  {
    constexpr int                             dim = 3;
    parallel::distributed::Triangulation<dim> tria(MPI_COMM_WORLD);
    GridGenerator::hyper_cube(tria);
    tria.refine_global(4);
    for (const auto &cell : tria.active_cell_iterators())
      if (cell->is_locally_owned() && cell->center()[0] < 0.3 &&
          cell->center()[1] < 0.5)
        cell->set_refine_flag();
    tria.execute_coarsening_and_refinement();
    const FESystem<dim> fe(FE_Q<dim>(1), dim);
    DoFHandler<dim>     dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    const MappingQ<dim>       mapping(1);
    const QGauss<dim>         quadrature(2);
    AffineConstraints<double> constraints;
    make_constraints(mapping, dof_handler, constraints);

    constexpr unsigned int few_threads = 2, many_threads = 3;
    const SetUpSnapshot    one  = set_up_with_threads(few_threads,
                                                  mapping,
                                                  dof_handler,
                                                  quadrature,
                                                  constraints);
    const SetUpSnapshot    many = set_up_with_threads(many_threads,
                                                   mapping,
                                                   dof_handler,
                                                   quadrature,
                                                   constraints);
    std::string            differing;
    for (std::size_t i = 0; i < one.arrays.size(); ++i)
      if (one.arrays[i] != many.arrays[i])
        {
          differing = one.arrays[i].first;
          break;
        }
    const bool passed =
      Utilities::MPI::min(differing.empty() ? 1 : 0, MPI_COMM_WORLD) == 1;
    const std::vector<std::string> all_differing =
      Utilities::MPI::gather(MPI_COMM_WORLD, differing);
    if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
      {
        std::cout << "Set-up with " << few_threads << " and " << many_threads
                  << " threads (" << tria.n_global_active_cells() << " cells, "
                  << dof_handler.n_dofs() << " DoFs, " << one.arrays.size()
                  << " arrays and lists per rank)";
        if (passed)
          std::cout << ": the same bit for bit";
        else
          {
            std::cout << "; FAILED: the set-up depends on the number of "
                         "threads:";
            for (unsigned int p = 0; p < all_differing.size(); ++p)
              if (!all_differing[p].empty())
                std::cout << " rank " << p << "'s " << all_differing[p]
                          << " differs;";
          }
        std::cout << std::endl;
      }
    return passed;
  }
} // namespace



namespace
{
  // describe_thread_binding(): silent where every rank may run on a core per
  // host thread; where each rank is held to one core (as mpirun binds one
  // or two ranks by default) and has more threads, a note that says so and
  // names mpirun's option.
  bool
  run_binding_case()
  {
    cpu_set_t original;
    CPU_ZERO(&original);
    AssertThrow(sched_getaffinity(0, sizeof(original), &original) == 0,
                ExcMessage("sched_getaffinity failed"));
    bool passed = true;

    MultithreadInfo::set_thread_limit(
      Utilities::MPI::min(GPUAssembly::n_cores_available(), MPI_COMM_WORLD));
    const std::string enough =
      GPUAssembly::describe_thread_binding(MPI_COMM_WORLD);
    if (!enough.empty())
      {
        std::cout << "FAILED: describe_thread_binding() warns although every "
                     "rank has a core per thread: "
                  << enough << std::endl;
        passed = false;
      }

    int first_core = 0;
    while (!CPU_ISSET(first_core, &original))
      ++first_core;
    cpu_set_t one_core;
    CPU_ZERO(&one_core);
    CPU_SET(first_core, &one_core);
    AssertThrow(sched_setaffinity(0, sizeof(one_core), &one_core) == 0,
                ExcMessage("sched_setaffinity failed"));
    MultithreadInfo::set_thread_limit(2);
    const bool one_core_seen = GPUAssembly::n_cores_available() == 1;
    const auto note = GPUAssembly::describe_thread_binding(MPI_COMM_WORLD);
    const bool more_threads = MultithreadInfo::n_threads() > 1;
    const bool noted        = note.find("only 1 core") != std::string::npos &&
                       note.find("--bind-to none") != std::string::npos;
    if (!one_core_seen)
      {
        std::cout << "FAILED: n_cores_available() is "
                  << GPUAssembly::n_cores_available()
                  << " for a process held to one core" << std::endl;
        passed = false;
      }
    if (noted != more_threads)
      {
        std::cout << "FAILED: with " << MultithreadInfo::n_threads()
                  << " threads on one core describe_thread_binding() gives '"
                  << note << "'" << std::endl;
        passed = false;
      }

    AssertThrow(sched_setaffinity(0, sizeof(original), &original) == 0,
                ExcMessage("sched_setaffinity failed"));
    MultithreadInfo::set_thread_limit();
    if (passed)
      std::cout << "describe_thread_binding: silent with a core per thread, "
                << (more_threads ? "a note naming --bind-to none" :
                                   "silent with one thread")
                << " on one core" << std::endl;
    return passed;
  }
  // The message of the ExcUnsupportedInput that @p body throws (empty if
  // none), with deal.II's line wrapping undone: single spaces.
  template <class Body>
  std::string
  refusal_message(const Body &body)
  {
    std::string message;
    try
      {
        body();
      }
    catch (const GPUAssembly::ExcUnsupportedInput &exception)
      {
        message = exception.what();
      }
    std::string flat;
    for (const char c : message)
      if (!std::isspace(static_cast<unsigned char>(c)))
        flat += c;
      else if (!flat.empty() && flat.back() != ' ')
        flat += ' ';
    return flat;
  }



  bool
  report_refusal(const std::string &message,
                 const std::string &expected,
                 const std::string &what)
  {
    const bool refused = message.find(expected) != std::string::npos;
    if (!refused)
      std::cout << "FAILED: " << what << " is not refused with \"" << expected
                << "\"; the message was: " << message << std::endl;
    return refused;
  }



  // The one adapter takes a serial mesh on every rank as a serial one (all
  // DoFs local and owned, deal.II's numbering), refuses a
  // parallel::shared::Triangulation, and refuses the serial-only transfers
  // to deal.II's serial objects on a distributed mesh.
  bool
  run_input_cases()
  {
    bool                      passed = true;
    AffineConstraints<double> no_constraints;
    no_constraints.close();

    // A refined square with FE_Q(1) on @p tria, and its adapter.
    const auto adapter_of = [&](Triangulation<2> &tria, DoFHandler<2> &dofs) {
      GridGenerator::hyper_cube(tria);
      tria.refine_global(2);
      dofs.reinit(tria);
      dofs.distribute_dofs(FE_Q<2>(1));
      return GPUAssembly::DoFHandlerAdapter<2>(MappingQ<2>(1),
                                               dofs,
                                               QGauss<2>(2),
                                               no_constraints);
    };

    Triangulation<2>                        serial;
    DoFHandler<2>                           serial_dofs;
    const GPUAssembly::DoFHandlerAdapter<2> serial_adapter =
      adapter_of(serial, serial_dofs);
    const auto &local_to_global = serial_adapter.get_local_to_global();
    bool        identity = local_to_global.size() == serial_dofs.n_dofs();
    for (std::size_t i = 0; identity && i < local_to_global.size(); ++i)
      identity = local_to_global[i] == i;
    const bool serial_numbering =
      !serial_adapter.is_distributed() && identity &&
      serial_adapter.get_arrays().n_dofs == serial_dofs.n_dofs() &&
      serial_adapter.locally_owned_dofs() ==
        complete_index_set(serial_dofs.n_dofs()) &&
      serial_adapter.local_dofs() == serial_adapter.locally_owned_dofs() &&
      serial_adapter.get_communicator() == MPI_COMM_SELF;
    if (!serial_numbering)
      std::cout << "FAILED: a serial Triangulation does not give the serial "
                   "numbering (all DoFs local and owned, deal.II's order)"
                << std::endl;
    passed &= serial_numbering;

    parallel::shared::Triangulation<2> shared(MPI_COMM_WORLD);
    DoFHandler<2>                      shared_dofs;
    passed &= report_refusal(refusal_message([&]() {
                               adapter_of(shared, shared_dofs);
                             }),
                             "parallel::shared::Triangulation is not supported",
                             "a parallel::shared::Triangulation");

    parallel::distributed::Triangulation<2> distributed(MPI_COMM_WORLD);
    DoFHandler<2>                           distributed_dofs;
    const GPUAssembly::DoFHandlerAdapter<2> adapter =
      adapter_of(distributed, distributed_dofs);
    passed &= report_refusal(refusal_message([&]() {
                               SparsityPattern pattern;
                               adapter.make_sparsity_pattern(pattern);
                             }),
                             "needs a serial triangulation",
                             "a SparsityPattern of a distributed mesh");
    passed &= report_refusal(refusal_message([&]() {
                               std::vector<double> nodal(
                                 adapter.get_arrays().node_dofs.size());
                               dealii::Vector<double> dof_values;
                               adapter.scatter_nodal_values(nodal, dof_values);
                             }),
                             "needs a serial triangulation",
                             "scatter_nodal_values() on a distributed mesh");
    return passed;
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  return Testing::exit_code_on_all_ranks([&]() {
    bool passed = true;
    for (const bool hanging : {false, true})
      {
        passed &=
          run_case<2>({TriaKind::p4est, Form::laplace, 2, hanging, false});
        passed &=
          run_case<2>({TriaKind::p4est, Form::elasticity, 1, hanging, false});
        passed &=
          run_case<3>({TriaKind::p4est, Form::laplace, 1, hanging, false});
        passed &=
          run_case<3>({TriaKind::p4est, Form::elasticity, 1, hanging, false});
      }
    passed &= run_case<2>({TriaKind::p4est, Form::elasticity, 2, true, true});
    passed &= run_case<3>({TriaKind::p4est, Form::laplace, 2, true, true});
    passed &=
      run_case<2>({TriaKind::fully_distributed, Form::laplace, 1, true, false});
    passed &= run_case<3>(
      {TriaKind::fully_distributed, Form::elasticity, 1, false, false});
    passed &= run_thread_case();
    passed &= run_binding_case();

    passed &= run_input_cases();
    return passed;
  });
}
